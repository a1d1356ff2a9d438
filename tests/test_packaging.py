"""Packaging and notebook conventions: one set of packages, clean parameterised notebooks."""
import json
import re
import tomllib
from pathlib import Path

import papermill as pm
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PARAMS = sorted((ROOT / "params").glob("*/*.yaml"))
ALIASES = {"pytorch": "torch", "open-clip-torch": "open_clip_torch"}
SYSTEM_ONLY = {"python", "pip", "tesseract"}  # conda-only: pip installs these by other means


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_lists_the_same_packages_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_side = {_name(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda_side = {_name(ALIASES.get(_name(d), d)) for d in env["dependencies"] if isinstance(d, str)} - SYSTEM_ONLY
    pip_list = next((d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d), [])
    conda_side |= {_name(d) for d in pip_list if not d.startswith("-")}  # PyPI-only packages (the CJK font)
    assert pip_side == conda_side, f"only in pyproject: {pip_side - conda_side}; only in environment.yml: {conda_side - pip_side}"


def test_readme_documents_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme
    assert re.search(r"^make test$", (ROOT / ".ci" / "run").read_text(), re.M)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_clean_and_parameterised(nb):
    data = json.loads(nb.read_text())
    code = [c for c in data["cells"] if c["cell_type"] == "code"]
    assert "parameters" in code[0]["metadata"].get("tags", []), "first code cell must be tagged parameters"
    assert sum("parameters" in c["metadata"].get("tags", []) for c in code) == 1
    assert not any(c.get("outputs") or c.get("execution_count") for c in code), "commit notebooks without outputs"
    assert data["metadata"]["kernelspec"]["name"] == "python3"
    ids = [c.get("id") for c in data["cells"]]  # nbformat 4.5: every cell has a unique id (papermill, nbval, JupyterLab)
    assert all(ids) and len(set(ids)) == len(ids), "every cell needs a unique id"


@pytest.mark.parametrize("params", PARAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_params_files_name_only_known_parameters(params):
    nb = ROOT / "notebooks" / f"{params.parent.name}.ipynb"
    assert nb.is_file(), f"params/{params.parent.name}/ has no notebook of that name"
    known = pm.inspect_notebook(str(nb))
    given = yaml.safe_load(params.read_text()) or {}
    assert set(given) <= set(known), f"unknown parameters {set(given) - set(known)}"
    for k, v in given.items():  # YAML 1.1 surprises (no -> False, 3.10 -> 3.1) would change a type
        default = known[k]["default"]
        if default.startswith(("'", '"')):  # lists are fine (e.g. dimensions); bare scalars are YAML guesses
            assert not isinstance(v, (bool, int, float)), f"{k}: quote string values in params files"
