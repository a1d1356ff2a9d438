"""When a stored run may stand for the run a report asks for: only when its whole identity is the same.

A report (notebooks 50, 40) reuses a finished run from ``outputs/`` instead of making it again. A stored run
is the run asked for only when its recorded ``RunSpec.identity()`` equals the wanted one (model and its settings,
option order, prompt mode, recipe, selection, judges, ...; the data compared by content below), and its recipe (up
to the reduction: both are stored), its data (the annotation file by hash, or the source folder) and the loader's
filters are the same. A run recorded before the identity (a flat ``config``) is compared field by field over
:data:`IDENTITY_FIELDS`. A CircularEval rotation (``rot-3``) is another run: its letters name other options.
:func:`identity_difference` is the one comparison; it names the first field that differs.
"""
from __future__ import annotations

import inspect

from mmbench_lib.core import manifest as manifest_mod
from mmbench_lib.pipeline.config import RunSpec, run_params
from mmbench_lib.pipeline.resume import spec_changes
from mmbench_lib.tasks._common import file_sha256
from mmbench_lib.tasks.base import get_task, path_parameters
from mmbench_lib.tasks.recipes import Recipe, get_recipe

#: the recorded config fields that make a run what it is; a stored run differing in any is another run
IDENTITY_FIELDS = (
    "benchmark", "model", "revision", "dtype", "trust_remote_code",  # the model
    "processor_kwargs", "system_prompt", "chat_template_kwargs", "stop_strings",  # its settings (model card)
    "baseline", "prompt_mode", "max_new_tokens",  # what is asked and how long an answer may be
    "rotation", "permutation_seed", "lettered_only",  # the option order (CircularEval) and its item filter
    "video_input", "generated_dir", "clip_model", "clip_pretrained", "ocr_lang", "ocr_psm", "seed",
    "split", "subjects",  # the selection (the loader's filters: ``data``, compared below)
)
# ``limit`` is left out: a run of the first M items answers the first N < M as a run of N would, and the
# caller asks that the run hold every item it reads (``reports.protocol.find_run``)

#: what a flat config recorded before a field existed meant (the field's default then)
_DEFAULTS = {"prompt_mode": "official", "rotation": 0, "permutation_seed": None, "lettered_only": False,
             "stop_strings": [], "processor_kwargs": {}, "chat_template_kwargs": {}, "system_prompt": None,
             "video_input": "native", "baseline": "none", "trust_remote_code": False}


def _norm(value):
    if isinstance(value, tuple):
        return [_norm(v) for v in value]
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _norm(v) for k, v in value.items()}
    return value


def _filters(benchmark: str, data: dict) -> dict:
    """The loader filters of ``data`` (no file arguments) with the loader's defaults filled in, so that
    ``dimensions="all"`` and a run that left it out (the same default selection) compare equal."""
    paths = set(path_parameters())
    params = inspect.signature(get_task(benchmark).module.load).parameters
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty and k not in paths}
    return {**defaults, **{k: _norm(v) for k, v in (data or {}).items() if k not in paths}}


def _same_path(a, b) -> bool:
    return str(manifest_mod.resolve(a).resolve()) == str(manifest_mod.resolve(b).resolve())


def _spec_difference(man: dict, wanted: RunSpec) -> str | None:
    """The first field of the recorded ``identity`` that is not ``wanted``'s, the data dict and the reduction aside
    (the data is compared by content below; both reductions are stored)."""
    def plain(i: dict) -> dict:
        sel = {k: v for k, v in (i.get("selection") or {}).items() if k != "options"}
        order = (i.get("selection") or {}).get("options") or {"rotation": 0, "permutation_seed": None,
                                                              "lettered_only": False}
        return {**i, "task": {k: v for k, v in (i.get("task") or {}).items() if k != "data"},
                "generation": {k: v for k, v in (i.get("generation") or {}).items() if k != "reduction"},
                "selection": {**sel, **order}}

    old, new = plain(man["identity"]), plain(wanted.identity())
    changes = spec_changes(old, new)
    return "; ".join(c.replace("(this call:", "(wanted") for c in changes) or None


def _flat_difference(cfg: dict, wanted: RunSpec) -> str | None:
    want = wanted.params()
    generates = wanted.generates or get_recipe(wanted.task.recipe).generates
    for name in IDENTITY_FIELDS:
        if name == "max_new_tokens" and not generates:
            continue
        old, new = _norm(cfg.get(name, _DEFAULTS.get(name))), _norm(want.get(name))
        if old != new:
            return f"{name} {old!r} (wanted {new!r})"
    return None


def identity_difference(man: dict, wanted: RunSpec) -> str | None:
    """The first way the run recorded in manifest ``man`` is not the run ``wanted`` describes, in words
    (``"rotation 3 (wanted 0)"``), or ``None`` when it is the same run."""
    cfg = run_params(man)
    if not cfg:
        return "no recorded config"
    why = _spec_difference(man, wanted) if isinstance(man.get("identity"), dict) else _flat_difference(cfg, wanted)
    if why:
        return why
    data = wanted.task.data
    if wanted.generates:
        if not man.get("source") or not _same_path(man["source"], data["source"]):
            return f"source {man.get('source')!r} (wanted {str(data['source'])!r})"
        return None
    recorded = man.get("recipe")
    if not isinstance(recorded, dict) or ({**Recipe().to_dict(), **recorded, "reduction": None}
                                          != {**get_recipe(wanted.task.recipe).to_dict(), "reduction": None}):
        return f"recipe {(recorded or {}).get('name')!r} (wanted {wanted.task.recipe!r})"
    sha = (man.get("data_sha256") or {}).get("annotation_file")
    if sha != file_sha256(data["annotation_file"]):
        return "annotation file (another file, by its SHA-256)"
    old, new = _filters(wanted.benchmark, man.get("data") or {}), _filters(wanted.benchmark, data)
    if old != new:
        key = next(k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k))
        return f"loader filter {key} {old.get(key)!r} (wanted {new.get(key)!r})"
    if bool((man.get("data") or {}).get("frames_root")) != bool(data.get("frames_root")):
        return "video frames (pre-extracted or decoded)"
    return None


def same_identity(man: dict, wanted: RunSpec) -> bool:
    """Whether the run of manifest ``man`` is the run ``wanted`` (:func:`identity_difference`)."""
    return identity_difference(man, wanted) is None
