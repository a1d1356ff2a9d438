"""The notebook output filter (scripts/nbstrip.py) that ``make setup`` installs as a git clean filter."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "nbstrip.py"


def _strip(text: str) -> str:
    return subprocess.run(["python3", str(SCRIPT)], input=text.encode(), capture_output=True, check=True).stdout.decode()


def _executed(path: Path) -> str:
    """A notebook as papermill leaves it: outputs, counts, papermill and widget metadata."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("x = 1", execution_count=1)
    params.metadata.update(tags=["parameters"], papermill={"duration": 0.1}, execution={"iopub.status.busy": "t"})
    run = nbformat.v4.new_code_cell("print(x)", execution_count=2,
                                    outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n")])
    nb.cells = [nbformat.v4.new_markdown_cell("# title"), params, run]
    nb.metadata.update(kernelspec={"name": "python3", "display_name": "Python 3", "language": "python"},
                       language_info={"name": "python", "version": "3.11.7"}, papermill={"parameters": {}},
                       widgets={"application/vnd.jupyter.widget-state+json": {}})
    nbformat.write(nb, path)
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_committed_notebooks_pass_through_unchanged(notebook):
    text = notebook.read_text(encoding="utf-8")
    assert _strip(text) == text


def test_outputs_counts_and_run_metadata_are_stripped_ids_and_tags_kept(tmp_path):
    before = json.loads(_executed(tmp_path / "x.ipynb"))
    after = json.loads(_strip(json.dumps(before)))
    code = [c for c in after["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert [c["id"] for c in after["cells"]] == [c["id"] for c in before["cells"]]
    assert code[0]["metadata"] == {"tags": ["parameters"]}
    assert after["metadata"] == {"kernelspec": before["metadata"]["kernelspec"], "language_info": {"name": "python"}}
    assert [c["source"] for c in after["cells"]] == [c["source"] for c in before["cells"]]
    nbformat.validate(nbformat.reads(json.dumps(after), as_version=4))


def test_make_setup_filter_keeps_executed_notebooks_out_of_git(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    command = re.search(r"^NBSTRIP := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert 'git config filter.nbstrip.clean "$(NBSTRIP)"' in (ROOT / "Makefile").read_text()
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "notebooks").mkdir()
    shutil.copy(SCRIPT, repo / "scripts" / "nbstrip.py")
    shutil.copy(ROOT / ".gitattributes", repo / ".gitattributes")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "config", "filter.nbstrip.clean", command], check=True)
    _executed(repo / "notebooks" / "run.ipynb")
    subprocess.run([*git, "add", "-A"], check=True)
    staged = json.loads(subprocess.run([*git, "show", ":notebooks/run.ipynb"], capture_output=True, check=True,
                                       text=True).stdout)
    assert all(c.get("outputs", []) == [] for c in staged["cells"])
    assert "papermill" not in staged["metadata"] and "widgets" not in staged["metadata"]
