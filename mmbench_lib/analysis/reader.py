"""One reader for run folders of both protocols: :func:`load_run` (a typed :class:`Run`) and
:func:`samples_df` (every item of any number of runs in one pandas frame, one row per item).

A run folder holds ``manifest.json`` (or shard manifests ``manifest.shard-KK-of-NN.json``, in the folder or, as
``mmbench run`` writes them, in its shard folders ``shards/<k>-of-<n>/``),
``metrics.json`` (schema in :mod:`mmbench_lib.core.metrics`, version 1 files upgraded on read) and
its item rows: ``predictions.jsonl`` / ``predictions.shard-KK-of-NN.jsonl`` (ranking, docs/protocols.md §1.5 /
§2.5) or, for generation runs, ``scored.jsonl`` (official parser output, docs/protocols.md §3.7 / §4.5).
Ranking and generation rows get the same columns (:data:`COLUMNS`); for a generation run
``prediction`` is the parsed answer (``parsed_pred``), ``dimension`` the subject and ``group``
the discipline, as in :class:`mmbench_lib.core.items.Item`.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pandas as pd

from mmbench_lib.core import manifest as manifest_mod
from mmbench_lib.core import paths
from mmbench_lib.core.metrics import upgrade
from mmbench_lib.core.store import MANIFEST, METRICS, SHARDS, read_jsonl
from mmbench_lib.tasks.base import UnknownTask, canonical_name, get_task, load_items as task_items
from mmbench_lib.core.record import RunRecord, flat_params, from_manifest

RANKING, GENERATION = "ranking", "generation"
SCORED_FILE = "scored.jsonl"
#: group fields of an item (SEED dimension / level / part; MMMU subject, discipline, difficulty, image type)
GROUP_FIELDS = ("dimension_id", "dimension", "group", "level", "part", "question_type", "difficulty", "image_type",
                "cluster")
#: protocol-specific fields (``None`` where the protocol has none); ``scores``: ranking's per-choice log-likelihoods
#: under both reductions; ``extracted``: a generated-letter run's letter by each extractor (pipeline.letters);
#: ``option_order``: options shown in another order (``mmbench_lib.tasks.options``), shown position -> original
#: option index; ``video_input``: how a video item reached the model (``native`` clip, ``frames`` as images, ``none``)
EXTRA_FIELDS = ("response", "parsed_pred", "fallback", "mode", "truncated", "scores", "extracted", "num_choices",
                "error", "option_order", "video_input")
COLUMNS = ("run", "run_id", "benchmark", "split", "id", *GROUP_FIELDS, "prediction", "answer", "correct", "status",
           "model", "protocol", "recipe", *EXTRA_FIELDS)
#: the files of an unmerged sharded run, each shard in its own folder (``mmbench_lib.core.store.shard_dir``)
SHARD_FILES = "shards/*-of-*/{}.shard-*-of-*.{}"
#: generation rows name the item fields as the official files do
_GENERATION_NAMES = {"subject": "dimension", "discipline": "group"}


class RunError(ValueError):
    """A folder that is not a readable run: names the folder and what is missing or which version."""


def outputs_root() -> Path:
    """``outputs/`` (``MMBENCH_OUTPUTS``), as :func:`mmbench_lib.pipeline.runs.outputs_root`."""
    return manifest_mod.resolve(os.environ.get("MMBENCH_OUTPUTS", "outputs"))


def resolve_run(ref) -> Path:
    """The run folder ``ref`` names (``core.paths.find_run``: a folder, else a run id or ``<run id>/<sub-run>``
    under ``outputs/``); RunError, one line, when it names none."""
    found = paths.find_run(ref)
    if found is None:
        raise RunError(f"{ref}: no such run folder (neither a folder nor a run id under {outputs_root()})")
    return found


def run_key(folder) -> str:
    """How a table names a run: its path under ``outputs/`` (``<run id>/<sub run>``), else the full path."""
    folder = Path(folder).resolve()
    try:
        return str(folder.relative_to(outputs_root().resolve()))
    except ValueError:
        return str(folder)


def item_files(folder: Path) -> tuple[str, list[Path]]:
    """The protocol of a run folder and its item files (generation: ``scored.jsonl``; ranking:
    every ``predictions*.jsonl``, shards included). RunError when there are none."""
    if (folder / SCORED_FILE).is_file():
        return GENERATION, [folder / SCORED_FILE]
    files = sorted(folder.glob("predictions*.jsonl")) or sorted(folder.glob(SHARD_FILES.format("predictions", "jsonl")))
    if files:
        return RANKING, files
    if not folder.is_dir():
        raise RunError(f"{folder}: no such run folder")
    below = sorted(str(p.parent.relative_to(folder)) for pattern in (SCORED_FILE, "predictions*.jsonl")
                   for p in folder.glob(f"*/{pattern}") if p.parent.name != SHARDS)
    if below:  # a folder of sub-runs (notebook 20's baselines, the quickstart's pairs)
        raise RunError(f"{folder}: a folder of sub-runs {sorted(set(below))[:8]}: read one of them "
                       f"(samples_df(['{folder}/{below[0]}', ...])), or compare them all with `mmbench compare {folder}`")
    found = sorted(p.name for p in folder.iterdir())[:8]
    raise RunError(f"{folder}: no item rows (predictions.jsonl, predictions.shard-KK-of-NN.jsonl or scored.jsonl); "
                   f"found {found}; a run of an older layout must be run again")


def read_manifest(folder: Path) -> dict:
    """``manifest.json``, else the shard manifests merged (their ``shard`` entry dropped); ``{}`` if none."""
    main = folder / MANIFEST
    paths = [main] if main.is_file() else (sorted(folder.glob("manifest.shard-*-of-*.json"))
                                           or sorted(folder.glob(SHARD_FILES.format("manifest", "json"))))
    out: dict = {}
    for p in paths:
        try:
            m = json.loads(p.read_text(encoding="utf-8"))
        except ValueError as e:
            raise RunError(f"{p}: not valid JSON ({e})") from None
        out = {**{k: v for k, v in m.items() if k != "shard"}, **out}
    return out


def read_metrics(folder: Path) -> dict:
    """``metrics.json`` in the current schema (version 1 upgraded); RunError when missing or newer."""
    path = folder / METRICS
    if not path.is_file():
        raise RunError(f"{folder}: no {METRICS} (an unmerged shard folder? run `mmbench merge` first)")
    try:
        return upgrade(json.loads(path.read_text(encoding="utf-8")), where=str(path))
    except ValueError as e:
        raise RunError(str(e)) from None


def read_rows(files: Iterable[Path]) -> list[dict]:
    """Item rows of the files in order; the last row of an id wins (a resumed or merged run)."""
    rows: dict[str, dict] = {}
    for f in files:
        for r in read_jsonl(f)[0]:  # a torn last line is dropped, as the store does on resume
            if "id" not in r:
                raise RunError(f"{f}: a row without field 'id'")
            rows[str(r["id"])] = r
    return list(rows.values())


def _model_name(man: dict, metrics: dict) -> str | None:
    model = man.get("model")
    if isinstance(model, dict):
        return model.get("name") or model.get("adapter") or metrics.get("model")
    return model or metrics.get("model")


def _recipe(protocol: str, man: dict, metrics: dict) -> str | None:
    """Ranking: the recipe name; generation: the prompt (official, or the baseline answering it)."""
    if protocol == RANKING:
        recipe = man.get("recipe")
        return (recipe.get("name") if isinstance(recipe, dict) else recipe) or metrics.get("recipe")
    gen = man.get("generation") or {}
    baseline = gen.get("baseline", metrics.get("baseline"))
    if baseline in ("random", "frequent"):
        return f"{baseline} baseline"
    tokens = gen.get("max_new_tokens", metrics.get("max_new_tokens"))
    mode = gen.get("prompt_mode", metrics.get("prompt_mode")) or "official"
    return ("official prompt" if mode == "official" else f"{mode} prompt mode") + (" + OCR" if baseline == "ocr" else "") + (f", max {tokens} tokens" if tokens else "")


def short_model(spec) -> str:
    """A model spec with a local folder (``vlm:/ckpt/step-500``, ``~/m``) named by the folder, not its whole path."""
    spec = str(spec)
    target = spec.split(":", 1)[1] if ":" in spec.split("/", 1)[0] else spec
    if target.startswith(("/", "~", "./", "../")):
        return Path(target.rstrip("/")).name or spec
    return spec


def display_model(manifest: dict, metrics: dict, default=None) -> str:
    """The name a run's rows and legends carry: the run's ``model_name`` (the spec's ``model.name``; ``+ OCR`` for the OCR
    baseline), else ``default`` (or the metrics' label / model) with a local folder named by its folder name;
    the Random / Frequent Choice baselines keep their names."""
    given = flat_params(manifest or {}).get("model_name")
    base = metrics.get("baseline")
    if given and base not in ("random", "frequent"):
        return f"{given} + OCR" if base == "ocr" else given
    return short_model(default if default is not None else metrics.get("label") or metrics.get("model") or "model")


def frame(rows: list[dict], protocol: str, man: dict, metrics: dict, key: str, run_id: str) -> pd.DataFrame:
    """The rows of one run under :data:`COLUMNS`."""
    common = {"run": key, "run_id": run_id, "model": _model_name(man, metrics), "protocol": protocol,
              "recipe": _recipe(protocol, man, metrics)}
    out = []
    for r in rows:
        r = {_GENERATION_NAMES.get(k, k): v for k, v in r.items()} if protocol == GENERATION else r
        rec = {c: r.get(c) for c in COLUMNS}
        rec.update(common)
        rec["id"] = str(r["id"])
        rec["benchmark"] = r.get("benchmark") or man.get("benchmark") or metrics.get("benchmark")
        rec["split"] = r.get("split") or man.get("split") or metrics.get("split")
        rec["status"] = r.get("status", "ok")
        rec["cluster"] = str(r.get("cluster") if r.get("cluster") is not None else r["id"])
        image_type = r.get("image_type")
        rec["image_type"] = [image_type] if isinstance(image_type, str) else list(image_type or [])
        if protocol == GENERATION:
            rec["prediction"] = r.get("parsed_pred")
        out.append(rec)
    df = pd.DataFrame(out, columns=list(COLUMNS))
    df["correct"] = df["correct"].astype("boolean")
    return df


@dataclass
class Run:
    """A run folder read once: ``key`` names it in tables, ``samples`` is its :func:`samples_df`."""

    folder: Path
    key: str
    manifest: dict
    metrics: dict
    protocol: str
    files: list[Path] = field(repr=False)
    label: str = ""
    _samples: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def record(self) -> RunRecord:
        """The run's typed record (``core.record``: its manifest read in the one place, older ones upgraded)."""
        return from_manifest(self.manifest)

    @property
    def benchmark(self) -> str:
        b = self.metrics.get("benchmark") or self.manifest.get("benchmark") or ""
        return canonical_name(b)

    @property
    def run_id(self) -> str:
        given = (self.manifest.get("parameters") or {}).get("run_id")
        return str(given or (self.folder.name if Path(self.key).is_absolute() else Path(self.key).parts[0]))

    @property
    def samples(self) -> pd.DataFrame:
        if self._samples is None:
            self._samples = frame(read_rows(self.files), self.protocol, self.manifest, self.metrics, self.key,
                                  self.run_id)
        return self._samples


def load_run(folder) -> Run:
    """A run folder (either protocol, shards included) with its manifest, metrics (current schema)
    and, read on first use, its samples. RunError naming the folder and what is missing."""
    folder = resolve_run(folder)
    protocol, files = item_files(folder)
    metrics = read_metrics(folder)
    return Run(folder=folder, key=run_key(folder), manifest=read_manifest(folder), metrics=metrics,
               protocol=protocol, files=files)


def samples_df(runs) -> pd.DataFrame:
    """Every item of ``runs`` (a folder, a :class:`Run`, or a list of them) in one frame: one row
    per item and run, the same :data:`COLUMNS` for both protocols. Folders need no ``metrics.json``."""
    if isinstance(runs, (str, os.PathLike, Run)):
        runs = [runs]
    frames = []
    for r in runs:
        if not isinstance(r, Run):
            folder = Path(r)
            protocol, files = item_files(folder)
            metrics = read_metrics(folder) if (folder / METRICS).is_file() else {}
            r = Run(folder=folder, key=run_key(folder), manifest=read_manifest(folder), metrics=metrics,
                    protocol=protocol, files=files)
        frames.append(r.samples)
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].copy()


def load_items(man: dict, where: str = "manifest.json") -> list:
    """The run's items, loaded again by the task loader its manifest records (ranking: ``benchmark``
    + ``data``, the loader's keyword arguments; generation: ``source``, ``split``, ``subjects``)."""
    benchmark = man.get("benchmark")
    if not benchmark:
        raise RunError(f"{where}: no field 'benchmark'")
    try:
        task = get_task(benchmark)
        args = task.manifest_args(man)
    except UnknownTask as e:
        raise RunError(f"{where}: {e}") from None
    except KeyError as e:
        what = " (the loader's arguments)" if e.args[0] == "data" else ""
        raise RunError(f"{where}: no field {e.args[0]!r}{what}") from None
    for k, v in args.items():
        if isinstance(v, str) and v[:1] in "{[":
            raise RunError(f"{where}: data.{k} is a Python repr string (manifest of the layout before metrics "
                           f"schema 2); rerun the evaluation to record it as JSON")
    return task_items(benchmark, args)
