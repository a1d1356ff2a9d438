"""A run's accuracy on the **vision-required** items (the blind-solvable ones left out) beside its full score.

SEED-Bench v1 §3.3 ("Automatic Filtering") fed every generated question *without its image* to three
LLMs (Vicuna-7B, Flan-T5-XXL, LLaMA-7B) and removed the 5.52% that all three answered correctly, "since
such questions are not helpful to evaluate the visual comprehension capability"; SEED-Bench-2 §3.3
verifies its generated questions the same way, and CMMMU §3.1 removes the questions GPT-4, Qwen-7B,
Deepseek-7B and Yi-7B all solve without the images. ``mmbench_lib.reports.blind`` applies that rule to
any benchmark with the suite's text-only models and writes the ids it flags to a ``blind_solvable.json``;
this module owns that file's format and reports any run on the items that are left.

More: docs/modules.md, ``mmbench_lib/analysis/subsets.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from mmbench_lib.analysis.reader import Run, load_run, samples_df
from mmbench_lib.core import manifest
from mmbench_lib.core.metrics import SCHEMA_VERSION, ci_fractions, entry
from mmbench_lib.core.store import write_json_atomic
from mmbench_lib.core.uncertainty import SCORED
from mmbench_lib.tasks.base import canonical_name

FORMAT = "mmbench.blind_solvable/1"
BLIND_FILE = "blind_solvable.json"
VISION_FILE = "vision_required.json"
RULE = "correct under every blind model"
SUBSETS = ("all", "vision_required", "blind_solvable")


def _benchmark(name) -> str:
    return canonical_name(str(name))


def write_blind_ids(path, benchmark: str, ids, split: str | None = None, models=(), n_items: int = 0,
                    per_dimension: dict | None = None) -> Path:
    """Write ``blind_solvable.json`` (module doc) atomically; returns its path."""
    path = Path(path)
    body = {"format": FORMAT, "benchmark": _benchmark(benchmark), "split": split, "rule": RULE,
            "models": list(models), "n_items": int(n_items), "ids": sorted(str(i) for i in ids),
            "per_dimension": per_dimension or {}, "created": manifest.now()}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, body)
    return path


def read_blind_ids(path) -> dict:
    """A ``blind_solvable.json`` (a file, or a report folder holding one), checked: ValueError in one line
    naming the file and what is wrong."""
    path = manifest.resolve(path)
    if path.is_dir():
        path = path / BLIND_FILE
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such blind-solvable ids file (write one with notebooks/51_blind_solvability)") from None
    except ValueError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        got = body.get("format") if isinstance(body, dict) else type(body).__name__
        raise ValueError(f"{path}: not a blind-solvable ids file (format {got!r}, expected {FORMAT!r})")
    ids = body.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError(f"{path}: field 'ids' must be a list of item id strings")
    if not isinstance(body.get("benchmark"), str):
        raise ValueError(f"{path}: field 'benchmark' must name the benchmark")
    return {**body, "ids": list(ids), "path": str(path)}


def _entry(df: pd.DataFrame) -> dict:
    """One schema entry of a frame of ``samples_df`` rows (scored = status ok with a judged answer)."""
    ok = df[(df["status"] == SCORED) & df["correct"].notna()]
    failed = int((df["status"] == "failed").sum())
    na = int(len(df) - len(ok) - failed)
    lo, hi = ci_fractions(ok[["id", "correct", "cluster"]].assign(status=SCORED).to_dict("records")) if len(ok) \
        else (None, None)
    return entry(int(ok["correct"].astype(bool).sum()), len(ok), failed=failed, na=na, ci_low=lo, ci_high=hi)


def vision_required(run, blind) -> dict:
    """Entries (``core.metrics`` schema) of ``run`` on all, vision-required and blind-solvable items,
    overall and per dimension (subject). ``run``: a folder or ``Run``; ``blind``: a path or the dict of
    :func:`read_blind_ids`. ValueError when the file is for another benchmark."""
    blind = blind if isinstance(blind, dict) else read_blind_ids(blind)
    run = run if isinstance(run, Run) else load_run(run)
    df = samples_df(run)
    bench = _benchmark(df["benchmark"].dropna().iloc[0] if df["benchmark"].notna().any() else run.benchmark)
    if bench != _benchmark(blind["benchmark"]):
        raise ValueError(f"{blind['path']}: blind-solvable ids of {blind['benchmark']!r}, but run {run.key} is {bench!r}")
    splits = sorted({str(x) for x in df["split"].dropna().unique()}) if "split" in df else []
    if blind.get("split") and splits and blind["split"] not in splits:
        raise ValueError(f"{blind['path']}: blind-solvable ids of split {blind['split']!r}, but run {run.key} is on "
                         f"{splits}: ids of another split would flag unrelated items")
    flagged = df["id"].isin(set(blind["ids"]))
    if blind["ids"] and not flagged.any():
        raise ValueError(f"{blind['path']}: none of its {len(blind['ids'])} blind-solvable ids is an item of run "
                         f"{run.key} (e.g. {blind['ids'][0]!r}); made on other data?")
    parts = {"all": df, "vision_required": df[~flagged], "blind_solvable": df[flagged]}
    per_dim = {}
    for dim, g in df.groupby("dimension", sort=False):
        f = g["id"].isin(set(blind["ids"]))
        per_dim[str(dim)] = {"all": _entry(g), "vision_required": _entry(g[~f]), "blind_solvable": _entry(g[f])}
    return {"schema_version": SCHEMA_VERSION, "run": run.key, "benchmark": bench, "blind_ids": blind["path"],
            "rule": blind.get("rule"), "blind_models": [m.get("label") for m in blind.get("models", [])],
            "blind_solvable_in_run": int(flagged.sum()), "overall": {k: _entry(v) for k, v in parts.items()},
            "per_dimension": per_dim}


def _pct(v):
    return None if v is None else 100 * v


def table(results: dict[str, dict]) -> pd.DataFrame:
    """One row per run and dimension (plus an ``all`` row per run): ``n`` and accuracy (%) with its 95%
    interval on all items, on the vision-required items and on the blind-solvable items."""
    rows = []
    for label, res in results.items():
        for dim, e in [("all", res["overall"]), *res["per_dimension"].items()]:
            row = {"run": label, "dimension": dim}
            for subset in SUBSETS:
                x = e[subset]
                row.update({f"{subset} n": x["n"], f"{subset} %": _pct(x["accuracy"]),
                            f"{subset} ci_low": _pct(x["ci_low"]), f"{subset} ci_high": _pct(x["ci_high"])})
            rows.append(row)
    return pd.DataFrame(rows)


def vision_required_report(runs, blind) -> pd.DataFrame:
    """:func:`vision_required` of each run (``{label: folder}`` or a list of folders), written to the run
    folder as ``vision_required.json``; returns :func:`table` of all of them."""
    blind = blind if isinstance(blind, dict) else read_blind_ids(blind)
    runs = runs if isinstance(runs, dict) else {str(Path(r).name): r for r in runs}
    results = {}
    for label, folder in runs.items():
        run = folder if isinstance(folder, Run) else load_run(folder)
        results[label] = vision_required(run, blind)
        write_json_atomic(run.folder / VISION_FILE, results[label])
    return table(results)
