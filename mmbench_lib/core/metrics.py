"""Accuracy from a run's prediction rows: per dimension, per group, micro and dimension-mean.

SEED v1 (spec §1.5): Image / Video / All as question-weighted (micro) accuracies *and* as
means of the per-dimension accuracies, both labelled. SEED-2 (§2.5): the same for the subparts
and the cumulative levels L1/L2/L3. Failed items are left out of denominators and counted;
a group with an N/A dimension (image output from a model that cannot produce images) is N/A.
"""
from __future__ import annotations

import math

import pandas as pd

from mmbench_lib.core.uncertainty import SCORED, accuracy_ci


def frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=["id", "dimension_id", "dimension", "status", "correct", "num_choices"])
    if "status" not in df:
        df["status"] = SCORED
    return df


def per_dimension(rows: list[dict]) -> pd.DataFrame:
    """One row per dimension: n scored, correct, accuracy (%), failed and N/A counts, random expectation."""
    df = frame(rows)
    out = []
    for (dim_id, name), g in df.groupby(["dimension_id", "dimension"], sort=True, dropna=False):
        ok = g[g["status"] == SCORED]
        n = len(ok)
        na = int((g["status"] == "n/a").sum())
        acc = 100.0 * ok["correct"].astype(bool).sum() / n if n else math.nan
        rand = 100.0 * (1.0 / ok["num_choices"]).mean() if n and "num_choices" in ok else math.nan
        out.append({
            "dimension_id": dim_id, "dimension": name, "n": n, "correct": int(ok["correct"].astype(bool).sum()) if n else 0,
            "accuracy": acc, "failed": int((g["status"] == "failed").sum()), "n/a": na,
            "random_expected": rand,
        })
    return pd.DataFrame(out)


def group_summary(rows: list[dict], groups: dict[str, tuple], partial: bool = False) -> pd.DataFrame:
    """Each group twice: question-weighted (micro) and the mean of its per-dimension accuracies.

    A group is reported only when the run holds all its dimensions (``partial=True`` also
    reports the others over the dimensions present, flagged ``complete=False``). If any of its
    dimensions is N/A, the group is N/A (SEED-2 Table 2 leaves L3 empty for such models).
    """
    dims = per_dimension(rows).set_index("dimension_id")
    out = []
    for name, ids in groups.items():
        present = [d for d in ids if d in dims.index]
        if not present:
            continue
        sub = dims.loc[present]
        missing = [d for d in ids if d not in dims.index]
        if missing and not partial:
            continue
        if (sub["n/a"] > 0).any() or (sub["n"] == 0).all():
            micro = dmean = math.nan
        else:
            scored = sub[sub["n"] > 0]
            micro = 100.0 * scored["correct"].sum() / scored["n"].sum()
            dmean = scored["accuracy"].mean()
        out.append({
            "group": name, "n": int(sub["n"].sum()), "dimensions": len(present),
            "accuracy_micro": micro, "accuracy_dim_mean": dmean,
            "complete": not missing, "missing_dimensions": missing,
        })
    return pd.DataFrame(out)


def add_intervals(table: pd.DataFrame, rows: list[dict], key: str, members, prefix: str = "ci") -> pd.DataFrame:
    """95% clustered bootstrap interval columns for each row of ``table`` (``members(row)`` gives
    the dimension ids it pools)."""

    df = frame(rows)
    lows, highs = [], []
    for _, r in table.iterrows():
        ids = members(r)
        ci = accuracy_ci(df[df["dimension_id"].isin(ids)].to_dict("records")) if len(df) else {}
        lows.append(ci.get("low"))
        highs.append(ci.get("high"))
    table = table.copy()
    table[f"{prefix}_low"], table[f"{prefix}_high"] = lows, highs
    return table


def summarize(rows: list[dict], groups: dict[str, tuple], partial: bool = False, intervals: bool = True) -> dict:
    """The metrics.json body: per-dimension table, groups both ways, counts; with ``intervals``,
    95% clustered bootstrap intervals for every accuracy (micro for groups)."""
    df = frame(rows)
    dims = per_dimension(rows)
    grp = group_summary(rows, groups, partial)
    if intervals and not dims.empty:
        dims = add_intervals(dims, rows, "dimension_id", lambda r: [r["dimension_id"]])
        if not grp.empty:
            grp = add_intervals(grp, rows, "group", lambda r: list(groups[r["group"]]), prefix="micro_ci")
            grp.loc[grp["accuracy_micro"].isna(), ["micro_ci_low", "micro_ci_high"]] = None  # N/A groups
    return {
        "counts": {
            "items": int(len(df)), "scored": int((df["status"] == SCORED).sum()),
            "failed": int((df["status"] == "failed").sum()), "n/a": int((df["status"] == "n/a").sum()),
        },
        "per_dimension": _records(dims),
        "groups": _records(grp),
        "notes": {
            "accuracy_micro": "question-weighted: pooled correct / pooled questions (leaderboard Avg.)",
            "accuracy_dim_mean": "unweighted mean of per-dimension accuracies (leaderboard 'task' table)",
            "failed": "items whose media or model call failed; left out of denominators",
            "ci": "95% percentile bootstrap over clusters of questions sharing an image or video (scipy.stats.bootstrap)",
        },
    }


def _records(df: pd.DataFrame) -> list[dict]:
    recs = df.to_dict(orient="records")
    for r in recs:
        for k, v in r.items():
            if isinstance(v, float) and math.isnan(v):
                r[k] = None
            elif hasattr(v, "item"):
                r[k] = v.item()
    return recs
