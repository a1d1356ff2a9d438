"""``mmbench run NOTEBOOK -f PARAMS.yaml``: execute a notebook headless into its run folder.

The run folder ``outputs/<run-id>/`` is created first (papermill will not), the resolved
parameters are saved beside the executed notebook, and a failing cell keeps the partial
notebook and exits non-zero.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from mmbench_lib.core.manifest import repo_root
from mmbench_lib.core.paths import validate_run_id
from mmbench_lib.core.store import write_text_atomic
from mmbench_lib.pipeline.runs import make_run_id, run_dir


def read_params(files: list[str] | None, overrides: dict | None = None) -> dict:
    params = {}
    for f in files or []:
        with open(f, encoding="utf-8") as fh:
            loaded = yaml.safe_load(fh) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{f}: a parameters file must be a mapping of names to values")
        params.update(loaded)
    params.update(overrides or {})
    return params


def run_notebook(notebook, param_files: list[str] | None = None, overrides: dict | None = None,
                 run_id: str | None = None, timeout: int | None = None, progress: bool = True) -> Path:
    """Execute ``notebook`` with papermill; returns the run folder.

    The notebook's ``run_id`` parameter is set to the folder's name so that its predictions,
    metrics and figures land beside the executed copy.
    """
    import papermill as pm

    nb = Path(notebook)
    if not nb.is_file():
        raise FileNotFoundError(f"notebook not found: {nb}")
    params = read_params(param_files, overrides)
    known = pm.inspect_notebook(str(nb))
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(f"{nb.name} has no parameter(s) {unknown}; it accepts {sorted(known)}")
    params["run_id"] = run_id = validate_run_id(run_id or params.get("run_id") or make_run_id(nb.stem))
    folder = run_dir(run_id)
    write_text_atomic(folder / "params.yaml", yaml.safe_dump(params, sort_keys=True, allow_unicode=True))
    pm.execute_notebook(
        str(nb), str(folder / nb.name), parameters=params, kernel_name="python3",
        cwd=str(repo_root()), progress_bar=progress, execution_timeout=timeout,
    )
    return folder
