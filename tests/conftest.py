import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
# the tests' tiny-<family> models: a model plugin (docs/models.md), seen by the `mmbench run` processes and
# notebook kernels the tests start too (they inherit the environment, the checkout on their path)
os.environ.setdefault("MMBENCH_PLUGINS", "tests.tiny_models")
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), _ROOT) if p)


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """The demo datasets, built once per test session."""
    from mmbench_lib.demo import make_demo

    return make_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def smollm2():
    """The embedded SmolLM2-135M-Instruct adapter (real weights, CPU)."""
    from mmbench_lib.models import load_adapter

    return load_adapter("smollm2", device="cpu")


@pytest.fixture(scope="session")
def tiny_llava():
    from mmbench_lib.models import load_adapter

    return load_adapter("tiny-llava", device="cpu")


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory):
    """A demo data folder as `mmbench make-demo` writes it (with paths.json), for notebook runs."""
    from mmbench_lib.demo import ensure_demo

    d = tmp_path_factory.mktemp("nbdemo")
    ensure_demo(d)
    return d


@pytest.fixture
def outputs(tmp_path, monkeypatch):
    """Run folders of `mmbench run` go to a temporary outputs/ (the kernel inherits the variable)."""
    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path))
    return tmp_path


#: the real public files the real-file tests read (``../shared/real/``; ``.ci/run`` points these at them)
REAL_FILES = ("MMBENCH_MMMU_OUTPUTS", "MMBENCH_MMMU_PRO_OUTPUTS", "MMBENCH_SEED2_GPT4V", "MMBENCH_MMMU_LEADERBOARD")


def in_ci() -> bool:
    """``CI=true`` (``.ci/run`` sets it; CI services do)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """In CI a real-file test never skips: its variable (``REAL_FILES``) must name an existing file, else it fails
    saying which (outside CI it skips with its reason, as before)."""
    if not in_ci():
        return
    for mark in item.iter_markers("skipif"):
        reason = mark.kwargs.get("reason", "")
        var = next((v for v in REAL_FILES if f"set {v} " in reason), None)
        if var and not (os.environ.get(var) and Path(os.environ[var]).exists()):
            pytest.fail(f"CI: {var} must name the real file ({reason}); it is {os.environ.get(var, 'unset')!r} "
                        f"(.ci/run points it at ../shared/real/)", pytrace=False)
