"""Uncertainty the papers do not report: bootstrap intervals and paired tests between runs.

Accuracy intervals resample *clusters* (questions that share an image or video: SEED v1 has
several questions per CC3M image) rather than questions, so they are not too narrow. Published
rows have no item-level data, so no interval can be computed for them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: the status of an item that counts in a denominator (failed and n/a items do not)
SCORED = "ok"


def _scored(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df = df[df["status"] == SCORED].copy() if "status" in df else df.copy()
    df["correct"] = df["correct"].astype(bool).astype(float)
    if "cluster" not in df:
        df["cluster"] = df["id"]
    return df


def _ratio(s, c, axis=-1):
    return 100.0 * s.sum(axis=axis) / c.sum(axis=axis)


def accuracy_ci(rows, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> dict:
    """Accuracy (%) with a clustered percentile bootstrap interval (scipy.stats.bootstrap)."""
    df = _scored(rows)
    if df.empty:
        return {"accuracy": None, "low": None, "high": None, "n": 0, "clusters": 0}
    g = df.groupby("cluster")["correct"].agg(["sum", "count"])
    acc = 100.0 * g["sum"].sum() / g["count"].sum()
    if len(g) < 2:
        return {"accuracy": acc, "low": None, "high": None, "n": int(g["count"].sum()), "clusters": len(g)}
    from scipy import stats  # here, not at the top: scipy.stats costs a second on every `mmbench` command

    res = stats.bootstrap((g["sum"].to_numpy(float), g["count"].to_numpy(float)), _ratio, paired=True, vectorized=True,
                          confidence_level=confidence, n_resamples=n_resamples, method="percentile",
                          rng=np.random.default_rng(seed))
    return {"accuracy": acc, "low": float(res.confidence_interval.low), "high": float(res.confidence_interval.high),
            "n": int(g["count"].sum()), "clusters": len(g), "confidence": confidence, "method": "clustered percentile bootstrap"}


def accuracy_ci_table(rows, by: str = "dimension", **kw) -> pd.DataFrame:
    """``accuracy_ci`` per value of ``by`` (dimension, subject, ...) plus an overall row."""
    df = pd.DataFrame(rows)
    out = [{by: key, **accuracy_ci(g.to_dict("records"), **kw)} for key, g in df.groupby(by, sort=True)]
    out.append({by: "overall", **accuracy_ci(rows, **kw)})
    return pd.DataFrame(out)


def compare_runs(rows_a, rows_b, n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95) -> dict:
    """Two runs on the same items: accuracy difference (b - a) with a paired clustered bootstrap
    interval, and McNemar's exact test on the discordant items."""
    a, b = _scored(rows_a).set_index("id"), _scored(rows_b).set_index("id")
    common = a.index.intersection(b.index)
    if len(common) == 0:
        raise ValueError("the two runs share no scored item")
    from scipy import stats

    ca, cb = a.loc[common, "correct"].to_numpy(), b.loc[common, "correct"].to_numpy()
    only_a, only_b = int(((ca == 1) & (cb == 0)).sum()), int(((ca == 0) & (cb == 1)).sum())
    p = stats.binomtest(only_b, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
    clusters = a.loc[common, "cluster"].to_numpy()
    diff = pd.DataFrame({"c": clusters, "d": cb - ca}).groupby("c")["d"].agg(["sum", "count"])
    result = {"n": len(common), "accuracy_a": 100 * ca.mean(), "accuracy_b": 100 * cb.mean(),
              "difference": 100 * (cb.mean() - ca.mean()), "only_a_correct": only_a, "only_b_correct": only_b,
              "mcnemar_exact_p": float(p), "low": None, "high": None}
    if len(diff) >= 2:
        res = stats.bootstrap((diff["sum"].to_numpy(float), diff["count"].to_numpy(float)), _ratio, paired=True,
                              vectorized=True, confidence_level=confidence, n_resamples=n_resamples,
                              method="percentile", rng=np.random.default_rng(seed))
        result.update(low=float(res.confidence_interval.low), high=float(res.confidence_interval.high))
    return result


def wilson_interval(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` (fractions; ``(nan, nan)`` when ``n == 0``).
    Used for shares of annotated errors, where only counts (or printed shares of a known n) exist."""
    if not n:
        return float("nan"), float("nan")
    from scipy import stats  # where used (see accuracy_ci)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))
