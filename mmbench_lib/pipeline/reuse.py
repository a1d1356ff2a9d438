"""When a stored run may stand for the run a report asks for: only when its whole identity is the same.

A report (notebooks 50, 40) reuses a finished run from ``outputs/`` instead of making it again. The stored run's
manifest is read as a run record (``core.record``; an older flat ``config`` upgraded to the spec it describes,
``pipeline.resume.upgraded``); it is the run asked for only when its ``RunSpec.identity()`` equals the wanted one
(compared by ``core.record.differences``; the data by content below), and its recipe (up to the reduction: both are
stored), its data (the annotation file by hash, or the source folder) and the loader's filters are the same.
``limit`` is not identity: the caller asks that the run hold every item it reads (``reports.protocol.find_run``). A
CircularEval rotation (``rot-3``) is another run. :func:`identity_difference` names the first field that differs.
"""
from __future__ import annotations

import inspect

from mmbench_lib.core import manifest as manifest_mod
from mmbench_lib.core.record import PART_DEFAULTS, RunRecord, differences, from_manifest
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.pipeline.resume import upgraded
from mmbench_lib.tasks._common import file_sha256
from mmbench_lib.tasks.base import get_task, path_parameters
from mmbench_lib.tasks.recipes import Recipe, get_recipe

#: identity fields compared elsewhere: the data by content (below), the reduction (both are stored)
ELSEWHERE = ("task.data", "generation.reduction")


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


def _options_spelled_out(rec: RunRecord) -> RunRecord:
    """``rec`` with its identity's option order spelled out field by field (no order: the defaults)."""
    identity = rec.spec_identity or {}
    selection = dict(identity.get("selection") or {})
    order = selection.pop("options", None) or PART_DEFAULTS["selection"]
    return from_manifest({**rec.raw, "identity": {**identity, "selection": {**selection, **order}}})


def identity_difference(man: dict, wanted: RunSpec) -> str | None:
    """The first way the run recorded in manifest ``man`` is not the run ``wanted`` describes, in words
    (``"rotation 3 (wanted 0)"``), or ``None`` when it is the same run."""
    rec = from_manifest(man)
    try:
        old = _options_spelled_out(upgraded(rec, wanted.out_dir))
    except ValueError as e:  # no config, or one this version no longer reads as a spec: not reused
        return str(e)
    new = _options_spelled_out(from_manifest({"identity": wanted.identity()}))
    why = "; ".join(differences(old, new, ELSEWHERE, over="spec", word=lambda n, a, b: f"{n} {a!r} (wanted {b!r})"))
    if why:
        return why
    data = wanted.task.data
    if wanted.generates:
        if not rec.source or not _same_path(rec.source, data["source"]):
            return f"source {rec.source!r} (wanted {str(data['source'])!r})"
        return None
    recorded = rec.made(Recipe().to_dict())["recipe"]
    if not isinstance(recorded, dict) or ({**recorded, "reduction": None}
                                          != {**get_recipe(wanted.task.recipe).to_dict(), "reduction": None}):
        return f"recipe {(recorded or {}).get('name')!r} (wanted {wanted.task.recipe!r})"
    if rec.data_sha256.get("annotation_file") != file_sha256(data["annotation_file"]):
        return "annotation file (another file, by its SHA-256)"
    old, new = _filters(wanted.benchmark, rec.data), _filters(wanted.benchmark, data)
    if old != new:
        key = next(k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k))
        return f"loader filter {key} {old.get(key)!r} (wanted {new.get(key)!r})"
    if bool(rec.data.get("frames_root")) != bool(data.get("frames_root")):
        return "video frames (pre-extracted or decoded)"
    return None


def same_identity(man: dict, wanted: RunSpec) -> bool:
    """Whether the run of manifest ``man`` is the run ``wanted`` (:func:`identity_difference`)."""
    return identity_difference(man, wanted) is None
