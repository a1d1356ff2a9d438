"""The typed record of a run folder: what its ``manifest.json`` holds, read in one place (older manifests upgraded),
and one comparison of two runs that names every field in which they differ.

A manifest written since the run spec holds ``spec`` (five parts: task, model, generation, selection, judges, plus
``run``) and ``identity`` (``RunSpec.identity()``); older ones hold a flat ``config`` (and before that, top-level
``benchmark`` / ``data`` only). Every reader gets the same :class:`RunRecord` from :func:`from_manifest`: ``params``
flat, as the run was given them (the names of ``pipeline.config.FLAT``, kept in step by
``tests/core/test_record.py``), the recorded identity, and what the run wrote it was made with (:meth:`RunRecord.made`).
Resume, report reuse, shard merge, ``compare`` and ``metrics`` compare two records through :func:`differences`.

More: docs/modules.md, ``mmbench_lib/core/record.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

#: spec fields whose flat parameter has another name (``pipeline.config.FLAT``); every other field keeps its name
RENAMED = {("model", "spec"): "model", ("model", "name"): "model_name", ("model", "engine_options"): "endpoint"}
#: ``task.data`` keys that are flat parameters of their own (generation tasks' source, subjects, cache dir)
DATA_FLAT = ("source", "subjects", "cache_dir")
#: the spec's parts whose fields say where a run is written, how fast and how it reports, and those fields (by spec
#: part; their flat names are :data:`NOT_IDENTITY`): never what a run computes
NOT_COMPUTED = {"model": ("device", "device_map", "max_memory"), "generation": ("batch_size", "batch_policy", "backend"),
                "selection": ("shard_index", "num_shards"), "task": ("data.cache_dir",),
                "run": ("out_dir", "parameters", "progress", "retry_failed")}
#: flat parameters that do not change what a run computes (where it is written, how fast, how it reports)
NOT_IDENTITY = tuple(RENAMED.get((part, key), key.removeprefix("data.")) for part, keys in NOT_COMPUTED.items()
                     for key in keys)
#: the value a field had in runs recorded before it existed: the spec field's default (kept in step with
#: ``pipeline.config`` by ``tests/core/test_record.py``), by spec part
PART_DEFAULTS = {"task": {"prompt_mode": "official"},
                 "model": {"trust_remote_code": False, "processor_kwargs": {}, "system_prompt": None,
                           "chat_template_kwargs": {}, "video_input": "native"},
                 "generation": {"stop_strings": [], "baseline": "none"},
                 "selection": {"rotation": 0, "permutation_seed": None, "lettered_only": False}}
#: the one table of what an older manifest's missing fields meant, by flat name (resume, reuse, compare)
DEFAULTS = {key: value for part in PART_DEFAULTS.values() for key, value in part.items()}
#: identity fields that say where the data is, not what it is (a run folder may be resumed from another checkout)
WHERE = ("task.data.", "judges.generated_dir")
#: a recorded field compared whole even where both sides are mappings (the option order is one setting)
WHOLE = ("selection.options",)


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

    @property
    def spec_identity(self) -> dict | None:
        """The ``RunSpec.identity()`` the run recorded (runs since the spec), else ``None``."""
        found = self.raw.get("identity")
        return found if isinstance(found, dict) else None

    @property
    def data(self) -> dict:
        """The task's data as the run read it (the manifest's ``data``, else its parameters')."""
        found = self.raw.get("data")
        return found if isinstance(found, dict) else self.params.get("data") or {}

    @property
    def source(self) -> str | None:
        """A generation run's data source as the run resolved it (else as given)."""
        return self.raw.get("source") or self.params.get("source")

    @property
    def shard(self) -> dict:
        """The shard the manifest describes (``index``, ``count``, ``item_ids``); ``{}`` for a whole run."""
        found = self.raw.get("shard")
        return found if isinstance(found, dict) else {}

    def made(self, recipe_defaults: dict | None = None) -> dict:
        """What the run wrote its rows were made with: benchmark, model name, recipe (ranking; with
        ``recipe_defaults`` for fields recorded after it), generation settings, option order and the path video
        items took. Older manifests upgraded: generation before prompt modes was ``official``; a ranking run before
        ``video_input`` put frames in as images."""
        raw = self.raw
        recipe = raw.get("recipe")
        if isinstance(recipe, dict) and recipe_defaults:
            recipe = {**recipe_defaults, **recipe}
        generation = raw.get("generation")
        if isinstance(generation, dict) and "baseline" in generation:
            generation = {**generation, "prompt_mode": generation.get("prompt_mode", DEFAULTS["prompt_mode"])}
        video = raw.get("video_input")
        return {"benchmark": self.benchmark, "model": self.model.get("name"), "recipe": recipe,
                "generation": generation, "options": raw.get("options"),
                "video_input": (video or {}).get("used", "frames") if "recipe" in raw else None}


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


def call_record(made: dict, spec_identity: dict | None = None) -> RunRecord:
    """The record of a call about to write rows: ``made`` as :meth:`RunRecord.made` gives it (a generation call
    has no recipe), and the call's ``RunSpec.identity()``."""
    ranking = made.get("recipe") is not None
    man = {"benchmark": made.get("benchmark"), "model": {"name": made.get("model")},
           "generation": made.get("generation"), "options": made.get("options"),
           **({"recipe": made["recipe"], "video_input": {"used": made.get("video_input")}} if ranking else {}),
           **({"identity": spec_identity} if isinstance(spec_identity, dict) else {})}
    return from_manifest(man)


def changes(a: dict, b: dict, ignore=(), where: bool = True, prefix: str = "", nested: bool = True) -> list[tuple]:
    """Every field in which two dicts differ, as ``(name, a's value, b's value)``: sorted by name, nested mappings
    field by field under dotted names (not :data:`WHOLE` ones; ``nested=False``: in ``a``'s order, whole), leaving
    out the names in ``ignore`` (a dotted name, with its sub-fields) and, with ``where=False``, the paths of
    the data (:data:`WHERE`: their contents are hashed elsewhere)."""
    out: list[tuple] = []
    keys = list(dict.fromkeys([*a, *b])) if not nested else sorted(set(a) | set(b), key=str)
    for key in keys:
        name, va, vb = prefix + str(key), a.get(key), b.get(key)
        if name in ignore or any(name.startswith(i + ".") for i in ignore):
            continue
        if nested and isinstance(va, dict) and isinstance(vb, dict) and va and vb and name not in WHOLE:
            out += changes(va, vb, ignore, where, name + ".")
        elif va != vb and (where or not (name.startswith(WHERE) and isinstance(va, str) and isinstance(vb, str)
                                         and ("/" in va or "/" in vb))):
            out.append((name, va, vb))
    return out


def _plain_words(name: str, a, b) -> str:
    return f"{name}: {a!r} vs {b!r}"


def differences(a: RunRecord, b: RunRecord, ignore=NOT_IDENTITY, *, over: str = "params", where: bool = True,
                word: Callable[[str, Any, Any], str | None] | None = None, recipe_defaults: dict | None = None
                ) -> list[str]:
    """Every field in which two runs differ, one line each (``word(name, a, b)``; default ``name: a vs b``; a hook
    returning ``None`` drops the field), empty when they are the same run. ``over`` is what is compared:

    * ``"params"``: the flat parameters outside ``ignore`` (older runs' :data:`DEFAULTS` filled in), then the data
      files' hashes (``compare``, the paper's paired tests);
    * ``"spec"``: the recorded ``RunSpec.identity()``, by dotted field (``ignore``: dotted names; ``where``);
    * ``"made"``: what each run wrote it was made with (:meth:`RunRecord.made`), in that order (resume)."""
    word = word or _plain_words
    if over == "spec":
        found = changes(a.spec_identity or {}, b.spec_identity or {}, ignore, where)
    elif over == "made":
        found = changes(a.made(recipe_defaults), b.made(recipe_defaults), ignore, nested=False)
    else:
        ia, ib = a.identity(), b.identity()
        found = [(n, ia.get(n, DEFAULTS.get(n)), ib.get(n, DEFAULTS.get(n))) for n in sorted(set(ia) | set(ib))
                 if n not in ignore and ia.get(n, DEFAULTS.get(n)) != ib.get(n, DEFAULTS.get(n))]
        found += [(f"data file {k}", a.data_sha256[k], b.data_sha256[k]) for k in sorted(set(a.data_sha256) &
                  set(b.data_sha256)) if a.data_sha256[k] != b.data_sha256[k]]
        if word is _plain_words:
            return [f"{n}: sha256 {str(x)[:12]} vs {str(y)[:12]}" if n.startswith("data file ") else word(n, x, y)
                    for n, x, y in found]
    return [line for n, x, y in found if (line := word(n, x, y)) is not None]
