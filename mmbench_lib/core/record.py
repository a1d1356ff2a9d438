"""The typed record of a run folder: what its ``manifest.json`` holds, read in one place (older manifests upgraded),
and one comparison of two runs that names every field in which they differ.

A manifest written since the run spec holds ``spec`` (five parts: task, model, generation, selection, judges, plus
``run``); older ones hold a flat ``config`` (and before that, top-level ``benchmark`` / ``data`` only). Every reader
gets the same :class:`RunRecord` from :func:`from_manifest`: ``params`` flat, as the run was given them (the names of
``pipeline.config.FLAT``, kept in step by ``tests/core/test_record.py``).

More: docs/modules.md, ``mmbench_lib/core/record.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: spec fields whose flat parameter has another name (``pipeline.config.FLAT``); every other field keeps its name
RENAMED = {("model", "spec"): "model", ("model", "name"): "model_name", ("model", "engine_options"): "endpoint"}
#: ``task.data`` keys that are flat parameters of their own (generation tasks' source, subjects, cache dir)
DATA_FLAT = ("source", "subjects", "cache_dir")
#: flat parameters that do not change what a run computes (where it is written, how fast, how it reports)
NOT_IDENTITY = ("out_dir", "parameters", "progress", "retry_failed", "batch_size", "batch_policy", "backend",
                "device", "device_map", "max_memory", "shard_index", "num_shards", "cache_dir")
#: what a run's defaults were before the field existed (an older manifest reads as these)
DEFAULTS = {"prompt_mode": "official", "rotation": 0, "permutation_seed": None, "lettered_only": False}


def flat_params(man: dict) -> dict:
    """The flat parameters of a run from its manifest: its ``spec`` parts flattened, or the flat ``config`` that
    manifests before the spec recorded (``{}`` when it has neither)."""
    spec = man.get("spec") if isinstance(man, dict) else None
    if isinstance(spec, dict) and isinstance(spec.get("task"), dict):
        out: dict = {}
        for part, values in spec.items():
            if part == "run" or not isinstance(values, dict):
                continue
            for key, value in values.items():
                if part == "task" and key == "data":
                    data = value or {}
                    if "source" in data:
                        out.update({k: data[k] for k in DATA_FLAT if k in data})
                        out["data"] = {}
                    else:
                        out["data"] = value
                    continue
                out[RENAMED.get((part, key), key)] = value
        return {**out, **(spec.get("run") or {})}
    config = man.get("config") if isinstance(man, dict) else None
    return dict(config) if isinstance(config, dict) else {}


@dataclass(frozen=True)
class RunRecord:
    """A run as its manifest records it: ``benchmark``, flat ``params`` (older manifests upgraded), the data files'
    hashes, the item count, the model record, and the manifest itself (``raw``) for fields read nowhere else."""

    benchmark: str | None
    params: dict = field(default_factory=dict)
    data_sha256: dict = field(default_factory=dict)
    n_items: int | None = None
    model: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)

    def get(self, name: str, default: Any = None) -> Any:
        """A flat parameter, with the default older runs had before the field existed."""
        return self.params.get(name, DEFAULTS.get(name, default))

    def identity(self) -> dict:
        """The parameters that decide what the run computes (not where it is written or how fast)."""
        out = {k: v for k, v in self.params.items() if k not in NOT_IDENTITY}
        return {**DEFAULTS, **out, "benchmark": self.benchmark}


def from_manifest(man: dict | None) -> RunRecord:
    """THE reading of a manifest (any version): ``{}`` or None gives an empty record."""
    man = man if isinstance(man, dict) else {}
    params = flat_params(man)
    if not params and ("data" in man or "benchmark" in man):  # the earliest manifests: top-level fields only
        params = {k: man[k] for k in ("benchmark", "data", "split") if k in man}
    bench = man.get("benchmark") or params.get("benchmark")
    sha = man.get("data_sha256") if isinstance(man.get("data_sha256"), dict) else {}
    model = man.get("model") if isinstance(man.get("model"), dict) else {}
    return RunRecord(bench, params, sha, man.get("n_items"), model, man)


def differences(a: RunRecord, b: RunRecord, ignore=NOT_IDENTITY) -> list[str]:
    """Every field in which two runs differ, one ``name: a vs b`` each (parameters outside ``ignore``, then the data
    files' hashes); empty when they are the same run."""
    out = []
    ia, ib = a.identity(), b.identity()
    for name in sorted(set(ia) | set(ib)):
        if name in ignore:
            continue
        va, vb = ia.get(name, DEFAULTS.get(name)), ib.get(name, DEFAULTS.get(name))
        if va != vb:
            out.append(f"{name}: {va!r} vs {vb!r}")
    for key in sorted(set(a.data_sha256) & set(b.data_sha256)):
        if a.data_sha256[key] != b.data_sha256[key]:
            out.append(f"data file {key}: sha256 {str(a.data_sha256[key])[:12]} vs {str(b.data_sha256[key])[:12]}")
    return out
