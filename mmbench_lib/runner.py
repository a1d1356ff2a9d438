"""``mmbench run NOTEBOOK -f PARAMS.yaml``: execute a notebook headless into its run folder.

The run folder ``outputs/<run-id>/`` is created first (papermill will not), the resolved
parameters are saved beside the executed notebook, and a failing cell keeps the partial
notebook and exits non-zero. Parameters are checked before anything starts (no run folder, no
kernel, no model): see ``check_params``.
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import yaml

from mmbench_lib.core.manifest import repo_root
from mmbench_lib.core.paths import validate_run_id
from mmbench_lib.core.store import write_text_atomic
from mmbench_lib.pipeline.runs import make_run_id, run_dir
from mmbench_lib.scoring import REDUCTIONS, SCORERS
from mmbench_lib.tasks.recipes import RECIPES


class ParameterError(ValueError):
    """A bad parameter or parameters file; the message is one line naming the file/parameter."""


def _yaml_error(where: str, e: yaml.YAMLError) -> ParameterError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = f": line {mark.line + 1}" if mark is not None else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return ParameterError(f"{where}{line}: not valid YAML ({problem})")


def read_params(files: list[str] | None, overrides: dict | None = None) -> dict:
    """Merge YAML parameter files (later wins) and overrides; bad files raise one-line ``ParameterError``."""
    params = {}
    for f in files or []:
        try:
            text = Path(f).read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise ParameterError(f"{f}: parameters file not found") from None
        except UnicodeDecodeError as e:
            line = Path(f).read_bytes()[:e.start].count(b"\n") + 1
            raise ParameterError(f"{f}: line {line}: not UTF-8 (byte 0x{e.object[e.start]:02x})") from None
        except OSError as e:
            raise ParameterError(f"{f}: cannot read the parameters file ({e.strerror})") from None
        try:
            loaded = yaml.safe_load(text) or {}
        except yaml.YAMLError as e:
            raise _yaml_error(str(f), e) from None
        if not isinstance(loaded, dict):
            raise ParameterError(f"{f}: a parameters file must be a mapping of names to values")
        params.update(loaded)
    params.update(overrides or {})
    return params


def parse_override(name: str, value: str):
    """The YAML value of ``-p NAME VALUE``; malformed YAML raises one-line ``ParameterError``."""
    try:
        return yaml.safe_load(value)
    except yaml.YAMLError as e:
        raise _yaml_error(f"-p {name}", e) from None


#: Parameters naming inputs that must exist when given non-empty (relative to the cwd or the repo).
PATH_PARAMS = ("annotation_file", "image_root", "frames_root", "cc3m_dir", "seed_bench_v2_dir", "blind_ids")


#: Parameters whose documented values go beyond their default's type (the parameters cells' comments).
ALSO_ACCEPTS = {"dimensions": (list,), "subjects": (list,), "limit": (type(None),)}


def _type_name(value) -> str:
    return "null" if value is None else type(value).__name__


def _default_value(info: dict):
    try:
        return ast.literal_eval(info.get("default", "None"))
    except (ValueError, SyntaxError):
        return None  # an expression default: its type is unknown, not checked


def _type_ok(value, default) -> bool:
    if default is None:
        return True
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, type(default))


def _exists(path: str) -> bool:
    return Path(path).expanduser().exists() or (repo_root() / path).exists()


def check_params(notebook: str, params: dict, known: dict) -> None:
    """Check ``params`` against the notebook's ``parameters`` cell before anything runs.

    Unknown names; types of the defaults (``known`` is papermill's ``inspect_notebook``; an int
    default takes ints, a float default numbers, ``limit`` also null); ranges and known values:
    ``batch_size``/``num_shards``/``max_new_tokens`` >= 1, ``limit`` >= 0, ``0 <= shard_index <
    num_shards``, ``reduction``, ``scorer``, ``recipe``; existing files for ``PATH_PARAMS`` (and
    ``video_roots`` values) given non-empty. Raises one-line ``ParameterError``.
    """
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ParameterError(f"{notebook} has no parameter(s) {unknown}; it accepts {sorted(known)}")
    defaults = {name: _default_value(info) for name, info in known.items()}

    def bad(name, why):
        return ParameterError(f"{notebook}: parameter {name}={params[name]!r}: {why}")

    for name, value in params.items():
        default = defaults[name]
        if isinstance(value, ALSO_ACCEPTS.get(name, ())):
            continue
        if not _type_ok(value, default):
            raise bad(name, f"expected {_type_name(default)} (like the default {default!r}), got {_type_name(value)}")
    for name in ("batch_size", "num_shards", "max_new_tokens"):
        if name in params and params[name] < 1:
            raise bad(name, "must be >= 1")
    if params.get("limit") is not None and params.get("limit", 0) < 0:
        raise bad("limit", "must be >= 0 (0 or null: all items)")
    choices = {"reduction": sorted(REDUCTIONS), "scorer": sorted(SCORERS), "recipe": sorted(RECIPES)}
    for name, allowed in choices.items():
        if name in params and params[name] not in allowed:
            raise bad(name, f"must be one of {allowed}")
    if "shard_index" in params or "num_shards" in params:
        num_shards = params.get("num_shards", defaults.get("num_shards"))
        index = params.get("shard_index", defaults.get("shard_index"))
        if isinstance(num_shards, int) and isinstance(index, int) and not 0 <= index < num_shards:
            name = "shard_index" if "shard_index" in params else "num_shards"
            raise bad(name, f"need 0 <= shard_index ({index}) < num_shards ({num_shards})")
    for name in PATH_PARAMS:
        if params.get(name) and not _exists(params[name]):
            raise bad(name, "no such file or folder")
    for key, path in (params.get("video_roots") or {}).items():
        if path and not (isinstance(path, str) and _exists(path)):
            raise ParameterError(f"{notebook}: parameter video_roots[{key!r}]={path!r}: no such folder")


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
    check_params(nb.name, params, pm.inspect_notebook(str(nb)))
    params["run_id"] = run_id = validate_run_id(run_id or params.get("run_id") or make_run_id(nb.stem))
    folder = run_dir(run_id)
    write_text_atomic(folder / "params.yaml", yaml.safe_dump(params, sort_keys=True, allow_unicode=True))
    final = folder / nb.name
    partial = folder / f".{nb.stem}.partial.ipynb"  # papermill rewrites it as cells finish
    try:
        pm.execute_notebook(
            str(nb), str(partial), parameters=params, kernel_name="python3",
            cwd=str(repo_root()), progress_bar=progress, execution_timeout=timeout,
        )
    finally:
        _publish_notebook(partial, final)
    return folder


def _publish_notebook(partial: Path, final: Path) -> None:
    """Move the executed notebook into place only when it is whole JSON (a full disk or a killed
    kernel must never leave an unreadable notebook under the run's name); keep it aside otherwise."""
    try:
        json.loads(partial.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    os.replace(partial, final)
