"""Compare runs: per-dimension tables, group averages both ways, and ranks among the runs.

SEED-Bench-2 Table 2 ranks models by level averages; here the runs being compared are ranked
the same way (competition ranking: ties share the better rank), each row naming the recipe
(prompt, reduction) and scorer that produced it, since SEED-2 has no single recipe (P-T1).
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from mmbench_lib.published import competition_rank


def load_run(run_dir) -> dict:
    """A run folder's metrics and manifest, with a label ``model (recipe, reduction)``."""
    d = Path(run_dir)
    metrics = json.loads((d / "metrics.json").read_text(encoding="utf-8"))
    manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8")) if (d / "manifest.json").exists() else {}
    recipe = manifest.get("recipe", {})
    label = f"{metrics.get('model')} ({recipe.get('name', metrics.get('recipe'))}, {metrics.get('reduction')})"
    return {"dir": str(d), "label": label, "metrics": metrics, "manifest": manifest}


def group_ranks(runs: list[dict], groups: list[str], kind: str = "accuracy_dim_mean") -> pd.DataFrame:
    """One row per run: each group's average (``accuracy_dim_mean`` or ``accuracy_micro``) and its
    rank among the runs; N/A where a run lacks the group (e.g. L3 without image output)."""
    rows = []
    for r in runs:
        g = {x["group"]: x for x in r["metrics"]["groups"]}
        man = r["manifest"]
        row = {"run": r["label"], "model": r["metrics"].get("model"), "recipe": (man.get("recipe") or {}).get("name"),
               "reduction": r["metrics"].get("reduction"), "scorer": (man.get("model") or {}).get("scorer")}
        for name in groups:
            row[name] = g.get(name, {}).get(kind)
        rows.append(row)
    df = pd.DataFrame(rows)
    for name in groups:
        vals = df[name]
        ranks = competition_rank([v for v in vals if pd.notna(v)])
        it = iter(ranks)
        df[f"{name} rank"] = [next(it) if pd.notna(v) else None for v in vals]
    return df


def dimension_comparison(runs: list[dict]) -> pd.DataFrame:
    """Per-dimension accuracy, one column per run (label), with question counts."""
    table = None
    for r in runs:
        df = pd.DataFrame(r["metrics"]["per_dimension"])[["dimension_id", "dimension", "n", "accuracy"]]
        df = df.rename(columns={"accuracy": r["label"], "n": "n"})
        table = df if table is None else table.merge(df.drop(columns=["n"]), on=["dimension_id", "dimension"], how="outer")
    return table
