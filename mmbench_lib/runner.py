"""``mmbench run NOTEBOOK -f PARAMS.yaml``: execute a notebook headless into its run folder.

Parameters are checked before anything is written (no run folder, no kernel, no model): names,
types and ranges (``check_params``), values (``check_values``: model spec resolvable offline,
split, subjects, dimensions, data paths, ...) and, for an existing run folder, the settings it
was made with (``check_resume``). Only then is ``outputs/<run-id>/`` created (papermill will not),
the resolved parameters saved beside the executed notebook, and the notebook run. A failing cell
keeps the partial notebook and raises ``NotebookFailed``: one line with the cell's exception and
the notebook's path. Nothing on the check path imports torch: a mistake is refused in about a second.

More: docs/modules.md, ``mmbench_lib/runner.py``.
"""
from __future__ import annotations

import ast
import contextlib
import difflib
import errno
import json
import os
import stat
import sys
from pathlib import Path

import yaml

from mmbench_lib.models.policy import policy_from
from mmbench_lib.analysis.results import write_results
from mmbench_lib.analysis.subsets import _benchmark as same_benchmark, read_blind_ids
from mmbench_lib.core.flags import is_bool, parse_bool
from mmbench_lib.core.manifest import repo_root
from mmbench_lib.core.record import NOT_IDENTITY, from_manifest
from mmbench_lib.core.paths import check_outputs_root, make_run_id, run_folder, validate_run_id
from mmbench_lib.core.progress import ENV as PROGRESS_ENV, CellLines
from mmbench_lib.core.secrets import check_parameters as check_no_credentials
from mmbench_lib.core.yaml_limits import load as load_yaml
from mmbench_lib.core.store import MANIFEST, PREDICTIONS, shard_dir, write_text_atomic
from mmbench_lib.pipeline.params import data_names, is_given, with_data
from mmbench_lib.pipeline.preflight import BadValue, absolute_paths, check_values, did_you_mean
from mmbench_lib.pipeline.selection import SELECTION_KEYS, describe_change, selection_change
from mmbench_lib.pipeline.shards import shard_from_params
from mmbench_lib.tasks.base import all_tasks, get_task, is_task, path_parameters
from mmbench_lib.pipeline.config import FLAT, SURFACE


class ParameterError(ValueError):
    """A bad parameter or parameters file; the message is one line naming the file/parameter."""


def _yaml_error(where: str, e: yaml.YAMLError) -> ParameterError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = f": line {mark.line + 1}" if mark is not None else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return ParameterError(f"{where}{line}: not valid YAML ({problem})")


#: the largest parameters file, and string value (a path is at most 4096 bytes on Linux), read
MAX_PARAMS_FILE = 1 << 20
MAX_STRING = 4096


def _read_params_file(f) -> bytes:
    """A parameters file's bytes, bounded: only a regular file (a FIFO, a device such as /dev/zero or a folder is
    refused without opening it: reading one could wait or run for ever), at most ``MAX_PARAMS_FILE`` bytes."""
    st = os.stat(f)
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file"
        raise ParameterError(f"{f}: {kind}; a parameters file is a regular YAML file")
    with open(f, "rb") as fh:
        data = fh.read(MAX_PARAMS_FILE + 1)
    if len(data) > MAX_PARAMS_FILE:
        raise ParameterError(f"{f}: more than {MAX_PARAMS_FILE} bytes; a parameters file is at most {MAX_PARAMS_FILE}")
    return data


def read_params(files: list[str] | None, overrides: dict | None = None) -> dict:
    """Merge YAML parameter files (later wins) and overrides, relative paths made absolute from the current
    directory (``preflight.absolute_paths``: the one rule); bad files raise one-line ``ParameterError``."""
    params = {}
    for f in files or []:
        try:
            text = _read_params_file(f).decode("utf-8")
        except FileNotFoundError:
            raise ParameterError(f"{f}: parameters file not found") from None
        except UnicodeDecodeError as e:
            line = e.object[:e.start].count(b"\n") + 1
            raise ParameterError(f"{f}: line {line}: not UTF-8 (byte 0x{e.object[e.start]:02x})") from None
        except OSError as e:
            raise ParameterError(f"{f}: cannot read the parameters file ({e.strerror})") from None
        try:
            loaded = load_yaml(text) or {}
        except yaml.YAMLError as e:
            raise _yaml_error(str(f), e) from None
        if not isinstance(loaded, dict):
            raise ParameterError(f"{f}: a parameters file must be a mapping of names to values")
        params.update(loaded)
    params.update(overrides or {})
    return absolute_paths(params)


def parse_override(name: str, value: str):
    """The YAML value of ``-p NAME VALUE``; malformed YAML raises one-line ``ParameterError``."""
    try:
        return load_yaml(value)
    except yaml.YAMLError as e:
        raise _yaml_error(f"-p {name}", e) from None


#: Parameters naming inputs that must exist when given non-empty (absolute by then: ``read_params``).
#: (every task's ``path_parameters`` but dicts of folders, checked one by one below, and ``blind_ids``)
PATH_PARAMS = (*(p for p in path_parameters() if p != "video_roots"), "blind_ids")


#: Parameters whose documented values go beyond their default's type (the parameters cells' comments).
ALSO_ACCEPTS = {"dimensions": (list,), "subjects": (list,), "limit": (type(None),)}


def _too_large(value) -> str | None:
    """Why a parameter value is too large to be a path, a name or a list of them (``None`` if it is not)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str) and len(v.encode("utf-8", "surrogatepass")) > MAX_STRING:
            return f"a string of {len(v.encode('utf-8', 'surrogatepass'))} bytes (at most {MAX_STRING}: paths and names)"
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return None


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
        return is_bool(value)  # the one rule (core.flags); check_params stores the parsed value
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, type(default))


def _exists(path: str) -> bool:
    return Path(path).expanduser().exists()


def check_params(notebook: str, params: dict, known: dict) -> None:
    """Check ``params`` against the notebook's ``parameters`` cell before anything runs.

    Unknown names; types of the defaults (``known`` is papermill's ``inspect_notebook``; an int
    default takes ints, a float default numbers, ``limit`` also null); ranges and known values:
    ``batch_size``/``num_shards``/``max_new_tokens`` >= 1, ``limit`` >= 0, ``0 <= shard_index <
    num_shards``, ``reduction``, ``scorer``, ``recipe``, ``video_input``; existing files for ``PATH_PARAMS`` (and
    ``video_roots`` values) given non-empty. Raises one-line ``ParameterError``.
    """
    unknown = sorted(set(params) - set(known))
    if unknown:
        near = {u: difflib.get_close_matches(u, list(known), n=1, cutoff=0.6) for u in unknown}
        hint = "; ".join(f"did you mean {near[u][0]!r} for {u!r}?" for u in unknown if near[u])
        raise ParameterError(f"{notebook} has no parameter(s) {unknown}; " + (f"{hint} " if hint else "")
                             + f"it accepts {sorted(known)}")
    for name, value in params.items():
        why = _too_large(value)
        if why:
            raise ParameterError(f"{notebook}: parameter {name}: {why}")
    defaults = {name: _default_value(info) for name, info in known.items()}

    def bad(name, why):
        return ParameterError(f"{notebook}: parameter {name}={params[name]!r}: {why}")

    for name, value in params.items():
        default = defaults[name]
        if isinstance(value, ALSO_ACCEPTS.get(name, ())):
            continue
        if not _type_ok(value, default):
            raise bad(name, f"expected {_type_name(default)} (like the default {default!r}), got {_type_name(value)}")
        if isinstance(default, bool):
            params[name] = parse_bool(value)  # "yes", "true", 1: the notebook gets a bool
    for name in ("batch_size", "num_shards", "max_new_tokens"):
        if name in params and params[name] < 1:
            raise bad(name, "must be >= 1")
    if params.get("limit") is not None and params.get("limit", 0) < 0:
        raise bad("limit", "must be >= 0 (0 or null: all items)")
    for p in SURFACE:  # the values a spec field takes (config: its ``choices``); empty and UNSET: the default
        if p.choices and p.name in params and is_given(p.name, params[p.name]) and params[p.name] not in p.allowed():
            raise bad(p.name, f"must be one of {sorted(p.allowed())}{did_you_mean(params[p.name], p.allowed())}")
    if isinstance(params.get("batch_policy"), dict):
        try:
            policy_from(params["batch_policy"])
        except ValueError as e:
            raise bad("batch_policy", str(e)) from None
    if "shard_index" in params or "num_shards" in params:
        num_shards = params.get("num_shards", defaults.get("num_shards"))
        index = params.get("shard_index", defaults.get("shard_index"))
        if isinstance(num_shards, int) and isinstance(index, int) and not 0 <= index < num_shards:
            name = "shard_index" if "shard_index" in params else "num_shards"
            raise bad(name, f"need 0 <= shard_index ({index}) < num_shards ({num_shards})")
    for name, bench in data_parameters(known).items():  # a report's data mapping: the task's own names, checked
        try:
            with_data({"benchmark": params.get(bench, defaults.get(bench)), "data": params.get(name, {})}, name)
        except ValueError as e:
            raise ParameterError(f"{notebook}: parameter {e}") from None
    for prefix, bench, given in [("", "benchmark", params), *((f"{n}.", b, params[n]) for n, b in data_parameters(known).items()
                                                              if isinstance(params.get(n), dict))]:
        benchmark = params.get(bench, defaults.get(bench))
        merged = {**defaults, **params, **given}
        unread = get_task(benchmark).unread_paths(merged) if is_task(benchmark) else ()
        for name in (p for p in PATH_PARAMS if p not in unread):
            if given.get(name) and not _exists(given[name]):
                raise ParameterError(f"{notebook}: parameter {prefix}{name}={given[name]!r}: no such file or folder")
        for key, path in (given.get("video_roots") or {}).items() if "video_roots" not in unread else ():
            if path and not (isinstance(path, str) and _exists(path)):
                raise ParameterError(f"{notebook}: parameter {prefix}video_roots[{key!r}]={path!r}: no such folder")


def notebook_parameters(notebook) -> dict:
    """The ``parameters`` cell of ``notebook`` as papermill's ``inspect_notebook`` gives it
    (name -> ``{"name", "default", "help"}``), read with ``ast`` (papermill takes seconds to import)."""
    path = Path(notebook)
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ParameterError(f"{path}: not a readable notebook ({type(e).__name__})") from None
    cell = next((c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if cell is None:
        return {}
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    lines = source.splitlines()
    out = {}
    try:
        body = ast.parse(source).body
    except SyntaxError as e:
        raise ParameterError(f"{path}: the parameters cell is not valid Python (line {e.lineno}: {e.msg})") from None
    for node in body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
        if isinstance(target, ast.Name) and node.value is not None:
            comment = lines[node.end_lineno - 1].partition("#")[2].strip()
            out[target.id] = {"name": target.id, "default": ast.get_source_segment(source, node.value), "help": comment}
    return out


def data_parameters(known: dict) -> dict[str, str]:
    """A notebook's data mappings -> the parameter naming their benchmark: ``data`` -> ``benchmark`` (reports 51,
    52), ``<x>_data`` -> ``<x>_benchmark`` (report 50's ``ranking_data``)."""
    return {n: n[:-4] + "benchmark" for n in known if (n == "data" or n.endswith("_data")) and n[:-4] + "benchmark" in known}


def effective_params(params: dict, known: dict) -> dict:
    """The values the notebook will run with: its defaults, then ``params``; a ``data`` mapping spread into
    parameters of their own (``pipeline.params.with_data``: the task's names, checked by ``check_params``)."""
    values = {**{name: _default_value(info) for name, info in known.items()}, **params}
    try:
        return with_data(values)
    except ValueError:
        return values


def notebook_protocol(known: dict) -> str | None:
    """``ranking`` or ``generation``: the protocol of the notebook's default benchmark(s), if any; ``None``
    for a notebook that takes both (a SEED ``annotation_file`` and an MMMU / CMMMU ``source``: the reports
    51 and 52 run on any benchmark; the audit's ``responses``: notebook 53)."""
    if "data" in known or ("annotation_file" in known and "source" in known):
        return None  # (a report's one data mapping takes either protocol's task)
    if "responses" in known:  # the reproduction audit (53) reads other harnesses' files of either protocol
        return None
    default = _default_value(known.get("benchmark") or known.get("benchmarks") or {})
    first = default[0] if isinstance(default, list) and default else default
    return get_task(first).protocol if is_task(first) else None


def notebook_benchmark(known: dict) -> str | None:
    """The benchmark of a notebook without a ``benchmark`` parameter (notebook 11): the one task whose loader
    arguments the notebook takes, all of them; ``None`` when none or several fit."""
    fits = [t.name for t in all_tasks() if (args := set(t.data_parameters()) - {"version"}) and args <= set(known)]
    return fits[0] if len(fits) == 1 else None


def check_param_values(notebook: str, params: dict, known: dict) -> None:
    """The values the notebook would run with (``mmbench_lib.pipeline.preflight.check_values``):
    one-line ``ParameterError`` naming the parameter, its value and what to do."""
    values = effective_params(params, known)
    if "benchmark" not in values and "benchmarks" not in values and notebook_benchmark(known):
        values["benchmark"] = notebook_benchmark(known)  # its data is checked as that benchmark's
    try:
        check_values(values, notebook_protocol(known))
    except BadValue as e:
        name = f"data.{e.name}" if "data" in data_parameters(known) and is_task(values.get("benchmark")) \
            and e.name in data_names(values["benchmark"]) else e.name  # a value of the report's data mapping
        raise ParameterError(f"{notebook}: parameter {name}={values.get(e.name)!r}: {e}") from None
    for name, bench in data_parameters(known).items():  # report 50's two mappings: each as its task's data
        if name != "data" and values.get(bench) and isinstance(values.get(name), dict):
            part = with_data({"benchmark": values[bench], "data": values[name]})
            try:
                check_values(part)
            except BadValue as e:
                raise ParameterError(f"{notebook}: parameter {name}.{e.name}={part.get(e.name)!r}: {e}") from None
    if values.get("blind_ids"):  # read before any item is scored, not after
        try:
            blind = read_blind_ids(values["blind_ids"])
        except ValueError as e:
            raise ParameterError(f"{notebook}: parameter blind_ids: {e}") from None
        bench = values.get("benchmark")
        if isinstance(bench, str) and same_benchmark(blind["benchmark"]) != same_benchmark(bench):
            raise ParameterError(f"{notebook}: parameter blind_ids: {blind['path']} holds ids of {blind['benchmark']!r}, "
                                 f"this run is {bench!r}")


#: notebook parameters a run folder keeps beside the run's identity: a report's benchmarks, models and papers, the SEED
#: notebooks' annotation file, where the model ran (placement changes the numerics) and in how many shards
KEPT = ("benchmarks", "models", "papers", "annotation_file", "device_map", "max_memory", "num_shards")
#: spec fields a run folder does not keep here: the data (its selection is compared next, its files are hashed by the
#: run), a served engine's options (those that change an answer are in ``RunSpec.identity``, compared by the run), the
#: display name and the likelihood engine (neither changes a stored row)
NOT_KEPT = ("data", "engine_options", "name", "scorer")
#: parameters that decide what a run computes: a run folder holding predictions keeps their values. The record's
#: identity (``core.record``: the flat surface but ``NOT_IDENTITY``), less the selection (``pipeline.selection``,
#: compared next) and :data:`NOT_KEPT`, and the notebook parameters :data:`KEPT`
RESUME_KEYS = tuple(p.name for p in SURFACE if p.name not in NOT_IDENTITY and p.name not in SELECTION_KEYS
                    and p.key not in NOT_KEPT) + KEPT
#: those a manifest records as the notebook gave them: its flat names but paths and the dtype (resolved there) and
#: the baseline (a ``random`` model on a generation benchmark records the random baseline)
CONFIG_KEYS = tuple(k for k in RESUME_KEYS if k in FLAT and k not in ("baseline", "dtype")
                    and not any(Path in p.kind for p in SURFACE if p.name == k))


def _plain(value):
    """A value as JSON holds it (``{0: "20GiB"}`` and a manifest's ``{"0": "20GiB"}`` compare equal)."""
    return json.loads(json.dumps(value, default=str))


def _norm_split(values: dict) -> dict:
    b = values.get("benchmark")
    if "split" in values and is_task(b) and get_task(b).takes_split():
        values = {**values, "split": get_task(b).resolve_split(values["split"])}
    return values


def _previous_settings(folder: Path, notebook: Path, known: dict) -> tuple[str, dict, tuple] | None:
    """What an existing run folder was made with: (where, values, keys to compare) from its
    ``params.yaml`` (as the notebook resolves them) or, for a run made outside ``mmbench run``, its
    manifests' ``config``."""
    others = sorted({p.name.lstrip(".").replace(".partial", "") for p in folder.glob("*.ipynb")} - {notebook.name})
    if others:
        raise ParameterError(f"run folder {folder} holds a run of {others[0]}, not {notebook.name}; use another --run-id")
    saved = folder / "params.yaml"
    if saved.is_file():
        try:
            old = load_yaml(saved.read_text(encoding="utf-8")) or {}
        except (OSError, ValueError, yaml.YAMLError):
            raise ParameterError(f"{saved}: unreadable; use another --run-id") from None
        old = absolute_paths(old, repo_root()) if isinstance(old, dict) else {}  # relative ones: saved before the rule
        return str(saved), effective_params(old, known), RESUME_KEYS
    for m in sorted(folder.glob(f"{Path(MANIFEST).stem}*.json")) + sorted(folder.glob(f"*/{Path(MANIFEST).stem}*.json")):
        try:
            config = from_manifest(json.loads(m.read_text(encoding="utf-8"))).params
        except (OSError, ValueError):
            continue
        if config:
            return str(m), config, CONFIG_KEYS
    return None


def check_resume(folder: Path, notebook: Path, params: dict, known: dict) -> None:
    """An existing run folder with predictions is resumed only with the settings it was made with
    (``RESUME_KEYS``) and the same selection of items (``mmbench_lib.pipeline.selection``: a narrower
    ``limit``, other ``dimensions`` / ``subjects`` / ``level`` / ``part`` would rewrite its metrics over a
    subset); checked before anything is written to it. One-line ``ParameterError``."""
    stem = Path(PREDICTIONS).stem
    if not folder.is_dir() or not any(p.stat().st_size for p in folder.rglob(f"{stem}*.jsonl") if "quarantine" not in p.name):
        return
    previous = _previous_settings(folder, notebook, known)
    if previous is None:
        return
    where, old, keys = previous
    old, new = _norm_split(old), _norm_split(effective_params(params, known))
    for key in keys:
        if key == "max_new_tokens" and new.get(key) == 0:
            continue  # 0: the prompt mode's default, resolved in the notebook (the run's own guard compares it)
        if key in old and key in new and _plain(old[key]) != _plain(new[key]):
            raise ParameterError(
                f"run folder {folder} holds predictions made with {key}={old[key]!r} ({where}); this run asks for "
                f"{key}={new[key]!r}: use another --run-id, or the same settings to resume")
    change = selection_change(old, new)
    if change:
        raise ParameterError(describe_change(f"run folder {folder} ({where})", change).replace("run id", "--run-id"))


def prepare_run(notebook, param_files: list[str] | None = None, overrides: dict | None = None,
                run_id: str | None = None) -> tuple[Path, Path, dict]:
    """Every check, then the run folder: ``(notebook, folder, params)``. Nothing is written to the
    folder (nor is it created) before all checks pass; a folder that already holds a run keeps its
    ``params.yaml`` until this run has finished (``run_notebook`` writes it then: the notebook's own
    checks may still refuse the resume)."""
    nb = Path(notebook)
    if not nb.is_file():
        raise FileNotFoundError(f"notebook not found: {nb}")
    params = read_params(param_files, overrides)
    try:  # before any check that could echo a value: a key is never printed nor stored
        check_no_credentials(params)
    except ValueError as e:
        raise ParameterError(f"{nb.name}: parameter {e}") from None
    known = notebook_parameters(nb)
    check_params(nb.name, params, known)
    check_param_values(nb.name, params, known)
    params["run_id"] = run_id = validate_run_id(run_id or params.get("run_id") or make_run_id(nb.stem))
    folder = shard_dir(run_folder(check_outputs_root(), run_id), shard_from_params(params))  # a shard writes only in its own folder
    check_resume(folder, nb, params, known)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ParameterError(f"cannot create the run folder {folder}: {e.strerror}") from None
    if not (folder / "params.yaml").exists():
        save_params(folder, params)
    return nb, folder, params


def save_params(folder: Path, params: dict) -> None:
    write_text_atomic(folder / "params.yaml", yaml.safe_dump(params, sort_keys=True, allow_unicode=True))


class NotebookFailed(RuntimeError):
    """A cell failed or the kernel died; the message is one line: the cause and the kept notebook."""


class RunInterrupted(Exception):
    """Ctrl-C during a run: the items already stored are kept; ``run_id`` resumes the run."""

    def __init__(self, folder: Path, run_id: str):
        super().__init__(f"interrupted; finished items are kept in {folder}")
        self.folder, self.run_id = folder, run_id


# Third-party noise a run does not need (kept with ``mmbench --debug``): the kernel's start-up warning
# about TCP transport and the tracebacks it logs when its sockets close under a Ctrl-C go to its log,
# raised to CRITICAL; library deprecation notices (transformers' FutureWarning) are ignored in the kernel.
QUIET_KERNEL_ARGS = ["--IPKernelApp.log_level=CRITICAL"]
QUIET_WARNINGS = "ignore::FutureWarning"
#: third-party progress bars (transformers' "Loading weights", hub downloads) off unless the user set the variable
QUIET_BARS = {"HF_HUB_DISABLE_PROGRESS_BARS": "1"}


def notebook_failure(error: BaseException, notebook: Path, kept: Path) -> NotebookFailed | None:
    """One line for papermill's ``PapermillExecutionError`` (the cell's exception type and message)
    or nbclient's dead-kernel / timeout errors; ``None`` for anything else."""
    ename = getattr(error, "ename", None)
    if ename is not None:  # papermill.exceptions.PapermillExecutionError
        cell = f"cell {error.exec_count}" if getattr(error, "exec_count", None) else f"cell index {error.cell_index}"
        cause = f"{ename}: {error.evalue}"
    elif type(error).__name__ in ("DeadKernelError", "CellTimeoutError"):
        cell, cause = "a cell", f"{type(error).__name__}: {error}"
    elif isinstance(error, RuntimeError) and "kernel" in str(error).lower():  # jupyter_client: died while starting
        cell, cause = "its start", f"the kernel died ({error}); the same command resumes from the stores"
    else:
        return None
    cause = " ".join(cause.split())
    return NotebookFailed(f"{notebook.name} failed in {cell}: {cause} (partial notebook: {kept})")


def run_notebook(notebook, param_files: list[str] | None = None, overrides: dict | None = None,
                 run_id: str | None = None, timeout: int | None = None, progress: bool = True,
                 debug: bool = False) -> Path:
    """Execute ``notebook`` with papermill; returns the run folder.

    The notebook's ``run_id`` parameter is set to the folder's name so that its predictions,
    metrics and figures land beside the executed copy. A failing notebook raises ``NotebookFailed``;
    Ctrl-C raises ``RunInterrupted`` (the partial notebook kept). Third-party warnings are filtered
    unless ``debug``.
    """
    nb, folder, params = prepare_run(notebook, param_files, overrides, run_id)
    import papermill as pm

    had_notebook = (folder / nb.name).exists()  # a resumed run: its notebook is replaced only by a run that ends
    final = folder / nb.name
    partial = folder / f".{nb.stem}.partial.ipynb"  # papermill rewrites it as cells finish
    echoes = Echo("stdout"), Echo("stderr")
    cells = {}  # one line per long cell (core.progress.CellLines), no bar redrawn per cell
    if progress:
        lines = CellLines(sum(c.get("cell_type") == "code" for c in json.loads(nb.read_text(encoding="utf-8"))["cells"])
                          + 1)  # + papermill's injected parameters cell
        cells = {"on_cell_start": lines.start, "on_cell_executed": lines.complete}
    if progress:  # the kernel and the first cell's imports take seconds: say what is starting
        print(f"{nb.name}: starting the kernel; run folder {folder}", flush=True)
    env, quiet = {PROGRESS_ENV: "text"}, {}
    if not debug:
        env["PYTHONWARNINGS"] = ",".join(w for w in (os.environ.get("PYTHONWARNINGS"), QUIET_WARNINGS) if w)
        quiet = {"extra_arguments": QUIET_KERNEL_ARGS}
        env.update({k: v for k, v in QUIET_BARS.items() if k not in os.environ})  # set the variable to see them
    try:
        with _kernel_env(env):
            pm.execute_notebook(
                str(nb), str(partial), parameters=params, kernel_name="python3",
                cwd=str(repo_root()), progress_bar=False, execution_timeout=timeout,
                stdout_file=echoes[0], stderr_file=echoes[1], **quiet, **cells,
            )
    except BaseException as e:
        for echo in echoes:
            echo.close()
        kept = partial if had_notebook and partial.exists() else _publish_notebook(partial, final)
        if isinstance(e, KeyboardInterrupt) or getattr(e, "ename", None) == "KeyboardInterrupt":
            raise RunInterrupted(folder, params["run_id"]) from None
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise NotebookFailed(f"{nb.name} stopped: {e.strerror} while writing {e.filename or folder} (run folder "
                                 f"{folder}); stored items are kept: free space, then the same command resumes") from None
        failure = notebook_failure(e, nb, kept)
        if failure is None:
            raise
        raise failure from e
    for echo in echoes:
        echo.close()
    _publish_notebook(partial, final)
    save_params(folder, params)
    write_results(folder)
    return folder


@contextlib.contextmanager
def _kernel_env(env: dict):
    """``env`` set in this process while the kernel starts (it inherits it), restored afterwards."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class Echo:
    """A file papermill writes the cells' stdout or stderr to as they print: whole lines go to this
    process's stream at once (``tqdm.write``: above any bar a library draws there)."""

    def __init__(self, name: str):
        self.name, self.pending = name, ""

    def write(self, text: str) -> None:
        from tqdm import tqdm

        lines = (self.pending + text).split("\n")
        self.pending = lines.pop()
        for line in lines:
            tqdm.write(line, file=getattr(sys, self.name))

    def flush(self) -> None:
        getattr(sys, self.name).flush()

    def close(self) -> None:
        """Write out a last line the cells left without a newline."""
        if self.pending:
            self.write("\n")


def _publish_notebook(partial: Path, final: Path) -> Path:
    """Move the executed notebook into place only when it is whole JSON (a full disk or a killed
    kernel must never leave an unreadable notebook under the run's name); keep it aside otherwise.
    Returns where the notebook is."""
    try:
        json.loads(partial.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return partial
    os.replace(partial, final)
    return final
