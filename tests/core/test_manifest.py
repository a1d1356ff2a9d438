"""The run manifest's paths: the repository root, wherever the module lives."""
def test_repo_root_is_the_repository():
    """Relative paths (data/demo, outputs/) resolve against the repository, wherever the module lives."""
    from pathlib import Path

    from mmbench_lib.core import manifest

    root = manifest.repo_root()
    assert (root / "pyproject.toml").is_file() and (root / "mmbench_lib").is_dir()
    assert manifest.resolve("data/demo") == root / "data" / "demo"
    assert Path(manifest.resolve("outputs")).parent == root
