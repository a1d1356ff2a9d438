"""Accuracy from a run's prediction rows, and the one ``metrics.json`` schema of both protocols.

SEED v1 (docs/protocols.md §1.5): Image / Video / All as question-weighted (micro) accuracies *and* as
means of the per-dimension accuracies, both labelled. SEED-2 (§2.5): the same for the subparts
and the cumulative levels L1/L2/L3. Failed items are left out of denominators and counted;
a group with an N/A dimension (image output from a model that cannot produce images) is N/A.

More: docs/modules.md, ``mmbench_lib/core/metrics.py``.
"""
from __future__ import annotations

import math

import pandas as pd

from mmbench_lib.core.uncertainty import SCORED, accuracy_ci

SCHEMA_VERSION = 2
#: the keys of every accuracy entry
ENTRY_KEYS = ("n", "correct", "accuracy", "ci_low", "ci_high", "failed", "n/a")


def entry(correct: int, n: int, failed: int = 0, na: int = 0, ci_low=None, ci_high=None) -> dict:
    """One accuracy entry of the schema: ``accuracy`` = correct / n (fraction; None when n = 0)."""
    return {"n": int(n), "correct": int(correct), "accuracy": correct / n if n else None,
            "ci_low": ci_low, "ci_high": ci_high, "failed": int(failed), "n/a": int(na)}


def ci_fractions(rows) -> tuple[float | None, float | None]:
    """95% interval of the rows' accuracy (the one rule, ``core.uncertainty.accuracy_ci``, which is in %), as fractions."""
    ci = accuracy_ci(rows)
    return tuple(None if ci.get(k) is None else ci[k] / 100 for k in ("low", "high"))


def frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=["id", "dimension_id", "dimension", "status", "correct", "num_choices"])
    if "status" not in df:
        df["status"] = SCORED
    return df


def per_dimension(rows: list[dict]) -> pd.DataFrame:
    """One row per dimension: the schema's entry (``n`` scored, ``correct``, ``accuracy`` as a
    fraction, ``failed``, ``n/a``) plus ``random_expected`` (fraction)."""
    df = frame(rows)
    out = []
    for (dim_id, name), g in df.groupby(["dimension_id", "dimension"], sort=True, dropna=False):
        ok = g[g["status"] == SCORED]
        n = len(ok)
        c = int(ok["correct"].astype(bool).sum()) if n else 0
        rand = (1.0 / ok["num_choices"]).mean() if n and "num_choices" in ok else math.nan
        e = entry(c, n, failed=int((g["status"] == "failed").sum()), na=int((g["status"] == "n/a").sum()))
        out.append({"dimension_id": dim_id, "dimension": name, **{k: v for k, v in e.items() if not k.startswith("ci_")},
                    "accuracy": e["accuracy"] if n else math.nan, "random_expected": rand})
    if not out:  # no rows (an empty shard, a zero-question file): an empty table with the schema's columns
        return pd.DataFrame(columns=["dimension_id", "dimension", "n", "correct", "accuracy", "failed", "n/a",
                                     "random_expected"])
    return pd.DataFrame(out)


def group_summary(rows: list[dict], groups: dict[str, tuple], partial: bool = False) -> pd.DataFrame:
    """Each group twice: question-weighted (micro, also ``accuracy``) and the mean of its
    per-dimension accuracies, as fractions.

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
            micro = scored["correct"].sum() / scored["n"].sum()
            dmean = scored["accuracy"].mean()
        out.append({
            "group": name, "n": int(sub["n"].sum()), "correct": int(sub["correct"].sum()), "accuracy": micro,
            "failed": int(sub["failed"].sum()), "n/a": int(sub["n/a"].sum()), "dimensions": len(present),
            "accuracy_micro": micro, "accuracy_dim_mean": dmean,
            "complete": not missing, "missing_dimensions": missing,
        })
    return pd.DataFrame(out)


def add_intervals(table: pd.DataFrame, rows: list[dict], key: str, members, prefix: str = "ci") -> pd.DataFrame:
    """95% interval columns (fractions, ``ci_fractions``) for each row of ``table``
    (``members(row)`` gives the dimension ids it pools)."""

    df = frame(rows)
    lows, highs = [], []
    for _, r in table.iterrows():
        ids = members(r)
        lo, hi = ci_fractions(df[df["dimension_id"].isin(ids)].to_dict("records")) if len(df) else (None, None)
        lows.append(lo)
        highs.append(hi)
    table = table.copy()
    table[f"{prefix}_low"], table[f"{prefix}_high"] = lows, highs
    return table


def summarize(rows: list[dict], groups: dict[str, tuple], partial: bool = False, intervals: bool = True) -> dict:
    """The metrics.json body (schema version 2): per-dimension entries, group entries both ways,
    counts; with ``intervals``, 95% intervals (``ci_fractions``; groups: of the micro accuracy)."""
    df = frame(rows)
    dims = per_dimension(rows)
    grp = group_summary(rows, groups, partial)
    if not dims.empty:
        dims = add_intervals(dims, rows, "dimension_id", lambda r: [r["dimension_id"]]) if intervals \
            else dims.assign(ci_low=None, ci_high=None)
    if not grp.empty:
        grp = add_intervals(grp, rows, "group", lambda r: list(groups[r["group"]])) if intervals \
            else grp.assign(ci_low=None, ci_high=None)
        grp.loc[grp["accuracy_micro"].isna(), ["ci_low", "ci_high"]] = None  # N/A groups
    out = {
        "schema_version": SCHEMA_VERSION,
        "counts": {
            "items": int(len(df)), "scored": int((df["status"] == SCORED).sum()),
            "failed": int((df["status"] == "failed").sum()), "n/a": int((df["status"] == "n/a").sum()),
        },
        "per_dimension": _records(dims),
        "groups": _records(grp),
        "notes": {
            "accuracy": "fraction correct / n (schema_version 2); tables and figures show percent",
            "accuracy_micro": "question-weighted: pooled correct / pooled questions (leaderboard Avg.)",
            "accuracy_dim_mean": "unweighted mean of per-dimension accuracies (leaderboard 'task' table)",
            "failed": "items whose media or model call failed; left out of denominators",
            "ci": "95% Wilson score interval, on the effective n (design effect) where questions share an image or video",
        },
    }
    # withheld only where rows carry the answer field and it is empty (rows of an older run, or a caller's own rows,
    # without the field are scored as before)
    return withhold(out) if rows and all("answer" in r and r["answer"] is None for r in rows) else out


def withhold(metrics: dict) -> dict:
    """The metrics of a run whose answers are all withheld (a test split, e.g. MMBench's): no accuracy anywhere
    (each entry's answered items counted as ``withheld``, ``n`` 0, ``accuracy`` None), ``scored`` False, as a
    generation run on MMMU's test split reports it; the run writes the submission file instead."""
    def blank(e: dict) -> dict:
        e = {**e, "withheld": e.get("n", 0), "n": 0, "correct": 0, "accuracy": None, "ci_low": None, "ci_high": None}
        return {**e, "accuracy_micro": None, "accuracy_dim_mean": None} if "accuracy_micro" in e else e

    counts = metrics["counts"]
    return {**metrics, "scored": False, "counts": {**counts, "withheld": counts["scored"], "scored": 0},
            "per_dimension": [blank(d) for d in metrics["per_dimension"]], "groups": [blank(g) for g in metrics["groups"]],
            "notes": {**metrics["notes"], "withheld": "answers not public (a test split): no accuracy; the items answered "
                                                      "are counted as withheld and written to the submission file"}}


#: generation metrics keys holding ``{name: entry}`` maps (``overall`` and its variants are single entries)
GENERATION_BREAKDOWNS = ("per_subject", "per_discipline", "per_difficulty", "per_image_type", "per_question_type",
                         "per_category")


def upgrade(metrics: dict, where: str = "metrics.json") -> dict:
    """A ``metrics.json`` body in schema version 2: version 1 (no ``schema_version``) converted
    (ranking percentages to fractions, ``micro_ci_*`` to ``ci_*``; generation ``acc``/``num`` to
    ``accuracy``/``n``); a newer version is a ValueError naming ``where`` and the version."""
    version = metrics.get("schema_version", 1)
    if version == SCHEMA_VERSION:
        return metrics
    if version != 1:
        raise ValueError(f"{where}: metrics schema_version {version!r}; this mmbench reads versions 1 and {SCHEMA_VERSION}")
    m = dict(metrics, schema_version=SCHEMA_VERSION, upgraded_from=1)

    def pct(v):
        return None if v is None else v / 100

    if "per_dimension" in m or "groups" in m:  # ranking
        m["per_dimension"] = [{**d, "accuracy": pct(d.get("accuracy")), "random_expected": pct(d.get("random_expected")),
                               "ci_low": pct(d.get("ci_low")), "ci_high": pct(d.get("ci_high"))}
                              for d in m.get("per_dimension", [])]
        groups = []
        for g in m.get("groups", []):
            g = dict(g)
            g["accuracy_micro"], g["accuracy_dim_mean"] = pct(g.get("accuracy_micro")), pct(g.get("accuracy_dim_mean"))
            g["accuracy"] = g["accuracy_micro"]
            g["ci_low"], g["ci_high"] = pct(g.pop("micro_ci_low", None)), pct(g.pop("micro_ci_high", None))
            groups.append(g)
        m["groups"] = groups
    else:  # generation: fractions already, other key names

        def conv(e):
            if not isinstance(e, dict) or "acc" not in e:
                return e
            e = dict(e)
            e["n"], e["accuracy"] = e.pop("num", None), e.pop("acc")
            return {**{k: None for k in ("ci_low", "ci_high")}, "failed": 0, "n/a": 0, **e}

        for k in ("overall", "overall_excluding_truncated"):
            if k in m:
                m[k] = conv(m[k])
        for k in GENERATION_BREAKDOWNS:
            if isinstance(m.get(k), dict):
                m[k] = {name: conv(e) for name, e in m[k].items()}
    return m


def _records(df: pd.DataFrame) -> list[dict]:
    recs = df.to_dict(orient="records")
    for r in recs:
        for k, v in r.items():
            if isinstance(v, float) and math.isnan(v):
                r[k] = None
            elif hasattr(v, "item"):
                r[k] = v.item()
    return recs
