"""Compare runs: per-dimension tables, group averages both ways, and ranks among the runs.

SEED-Bench-2 Table 2 ranks models by level averages; here the runs being compared are ranked
the same way (competition ranking: ties share the better rank), each row naming the recipe
(prompt, reduction) and scorer that produced it, since SEED-2 has no single recipe (P-T1).
"""
from __future__ import annotations

import pandas as pd

from mmbench_lib.analysis import reader
from mmbench_lib.analysis.reader import Run
from mmbench_lib.published import competition_rank


def load_run(run_dir) -> Run:
    """A run folder (:func:`mmbench_lib.analysis.reader.load_run`) labelled ``model (recipe, reduction)``."""
    run = reader.load_run(run_dir)
    recipe = run.manifest.get("recipe") or {}
    run.label = f"{run.metrics.get('model')} ({recipe.get('name', run.metrics.get('recipe'))}, {run.metrics.get('reduction')})"
    return run


def _pct(v):
    return None if v is None else 100 * v


def group_ranks(runs: list[Run], groups: list[str], kind: str = "accuracy_dim_mean") -> pd.DataFrame:
    """One row per run: each group's average in percent (``accuracy_dim_mean`` or ``accuracy_micro``)
    and its rank among the runs; N/A where a run lacks the group (e.g. L3 without image output)."""
    rows = []
    for r in runs:
        g = {x["group"]: x for x in r.metrics["groups"]}
        man = r.manifest
        row = {"run": r.label, "model": r.metrics.get("model"), "recipe": (man.get("recipe") or {}).get("name"),
               "reduction": r.metrics.get("reduction"), "scorer": (man.get("model") or {}).get("scorer")}
        for name in groups:
            row[name] = _pct(g.get(name, {}).get(kind))
        rows.append(row)
    df = pd.DataFrame(rows)
    for name in groups:
        vals = df[name]
        ranks = competition_rank([v for v in vals if pd.notna(v)])
        it = iter(ranks)
        df[f"{name} rank"] = [next(it) if pd.notna(v) else None for v in vals]
    return df


def dimension_comparison(runs: list[Run]) -> pd.DataFrame:
    """Per-dimension accuracy (%), one column per run (label), with question counts."""
    table = None
    for r in runs:
        df = pd.DataFrame(r.metrics["per_dimension"])[["dimension_id", "dimension", "n", "accuracy"]]
        df["accuracy"] = 100 * df["accuracy"].astype(float)
        df = df.rename(columns={"accuracy": r.label, "n": "n"})
        table = df if table is None else table.merge(df.drop(columns=["n"]), on=["dimension_id", "dimension"], how="outer")
    return table
