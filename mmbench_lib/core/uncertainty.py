"""Uncertainty the papers do not report: one interval rule for every proportion, and paired tests between runs.

More: docs/modules.md, ``mmbench_lib/core/uncertainty.py``.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: the status of an item that counts in a denominator (failed and n/a items do not)
SCORED = "ok"
#: the normal quantile of a two-sided 95% interval (scipy.stats.norm.ppf(0.975); fixed so no scipy import)
Z95 = 1.959963984540054
METHOD = "Wilson score (effective n over clusters of questions sharing an image or video)"
#: the one rule in words (docs/uncertainty.md): every accuracy the suite prints, pooled or a mean of dimensions
RULE = ("95% Wilson score interval on the effective n: clusters of questions sharing an image or video (Kish's "
        "design effect) and, for a mean of dimension accuracies, the unequal weights of its questions (Kish's "
        "(sum w)^2 / sum w^2); never zero-width at 0/n or n/n")


def _scored(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df = df[df["status"] == SCORED].copy() if "status" in df else df.copy()
    df["correct"] = df["correct"].astype(bool).astype(float)
    if "cluster" not in df:
        df["cluster"] = df["id"]
    df["cluster"] = df["cluster"].fillna(df["id"]) if "id" in df else df["cluster"]
    return df


def _z(confidence: float) -> float:
    if confidence == 0.95:
        return Z95
    from scipy import stats  # here, not at the top: scipy.stats costs a second on every `mmbench` command
    return float(stats.norm.ppf(0.5 + confidence / 2))


def effective_n(correct, clusters) -> float:
    """``n / deff``: the number of independent questions the clustered ones are worth (Kish's design effect,
    the ratio-estimator variance over clusters divided by the binomial variance, at least 1). ``n`` when every
    question is its own cluster; the number of clusters when the design effect cannot be estimated (one
    cluster, or all answers equal); never below the number of clusters."""
    y = np.asarray(correct, float)
    n = len(y)
    if n == 0:
        return 0.0
    codes, uniques = pd.factorize(pd.Series(list(clusters), dtype=object).astype(str))
    g = len(uniques)
    if g == n:
        return float(n)
    p = y.mean()
    if g < 2 or p in (0.0, 1.0):
        return float(g)
    sums, sizes = np.bincount(codes, y, g), np.bincount(codes, minlength=g).astype(float)
    var_clustered = g / (g - 1) * float(((sums - p * sizes) ** 2).sum()) / n ** 2
    deff = max(1.0, var_clustered / (p * (1 - p) / n))
    return float(min(n, max(g, n / deff)))


def weighted_n(weights) -> float:
    """Kish's effective n of unequal weights, ``(sum w)^2 / sum w^2``: ``n`` when the weights are equal (a mean of
    dimension accuracies whose dimensions hold equally many questions is then the pooled accuracy, with its interval)."""
    w = np.asarray(weights, float)
    return float(w.sum() ** 2 / (w ** 2).sum()) if len(w) and (w ** 2).sum() else 0.0


def dimension_mean(correct, dimensions, clusters, confidence: float = 0.95) -> tuple[float | None, float | None, float | None]:
    """A mean of dimension accuracies (SEED-2 Table 2, SEED's dimension means) as a weighted proportion (fractions):
    ``(value, low, high)``, each question weighted ``1 / (D * n_d)``; the interval is the one rule
    (:func:`proportion_interval`) on the effective n of the clusters times the weighting's ``weighted_n / n``
    (Kish's design effects multiply). ``(None, None, None)`` without questions."""
    y = np.asarray(correct, float)
    if not len(y):
        return None, None, None
    dims = pd.Series(list(dimensions), dtype=object).astype(str)
    sizes = dims.map(dims.value_counts()).to_numpy(float)
    w = 1.0 / (dims.nunique() * sizes)
    value = float((w * y).sum())
    m = effective_n(y, clusters) * weighted_n(w) / len(y)
    lo, hi = proportion_interval(value * len(y), len(y), m, confidence)
    return value, lo, hi


def proportion_interval(k: float, n: float, n_effective: float | None = None,
                        confidence: float = 0.95) -> tuple[float | None, float | None]:
    """THE interval of a proportion ``k / n`` (fractions): Wilson's score interval, on ``n_effective`` questions
    when they cluster (same proportion, fewer independent observations). ``(None, None)`` when ``n == 0``."""
    if not n:
        return None, None
    m = n if n_effective is None else n_effective
    lo, hi = wilson_interval(k / n * m, m, confidence)
    return lo, hi


def accuracy_ci(rows, confidence: float = 0.95) -> dict:
    """Accuracy (%) of the scored rows with :func:`proportion_interval` (clusters from the rows' ``cluster``)."""
    df = _scored(rows)
    if df.empty:
        return {"accuracy": None, "low": None, "high": None, "n": 0, "clusters": 0}
    n, k = len(df), float(df["correct"].sum())
    m = effective_n(df["correct"], df["cluster"])
    lo, hi = proportion_interval(k, n, m, confidence)
    return {"accuracy": 100.0 * k / n, "low": 100.0 * lo, "high": 100.0 * hi, "n": n,
            "clusters": int(df["cluster"].nunique()), "n_effective": m, "confidence": confidence, "method": METHOD}


def accuracy_ci_table(rows, by: str = "dimension", **kw) -> pd.DataFrame:
    """``accuracy_ci`` per value of ``by`` (dimension, subject, ...) plus an overall row."""
    df = pd.DataFrame(rows)
    out = [{by: key, **accuracy_ci(g.to_dict("records"), **kw)} for key, g in df.groupby(by, sort=True)]
    out.append({by: "overall", **accuracy_ci(rows, **kw)})
    return pd.DataFrame(out)


def paired_difference_interval(both: int, only_a: int, only_b: int, neither: int, n_a: float | None = None,
                               n_b: float | None = None, confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's (1998, method 10) interval of ``p_b - p_a`` (fractions) for two runs on the same n questions,
    from the Wilson intervals of ``p_a`` and ``p_b`` (on ``n_a`` / ``n_b`` effective questions when they cluster)
    and the correlation of the paired answers."""
    n = both + only_a + only_b + neither
    pa, pb = (both + only_a) / n, (both + only_b) / n
    la, ua = proportion_interval(pa * n, n, n_a, confidence)
    lb, ub = proportion_interval(pb * n, n, n_b, confidence)
    denom = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    ad_bc = both * neither - only_a * only_b  # Newcombe's phi: AD - BC shrunk by N/2 when positive, 0 in between
    phi = (ad_bc - n / 2 if ad_bc > n / 2 else min(ad_bc, 0)) / math.sqrt(denom) if denom else 0.0
    d = pb - pa
    low = d - math.sqrt(max(0.0, (pb - lb) ** 2 - 2 * phi * (pb - lb) * (ua - pa) + (ua - pa) ** 2))
    high = d + math.sqrt(max(0.0, (ub - pb) ** 2 - 2 * phi * (ub - pb) * (pa - la) + (pa - la) ** 2))
    return max(-1.0, low), min(1.0, high)


def mcnemar_exact_p(only_a: int, only_b: int) -> float:
    """McNemar's exact test: two-sided binomial p of the discordant split (1 when there is none)."""
    m = only_a + only_b
    if not m:
        return 1.0
    from scipy import stats
    return float(stats.binomtest(only_b, m, 0.5).pvalue)


def compare_runs(rows_a, rows_b, confidence: float = 0.95) -> dict:
    """Two runs on the same items: accuracy difference (b - a, %) with Newcombe's paired interval
    (:func:`paired_difference_interval`) and McNemar's exact test on the discordant items."""
    a, b = _scored(rows_a), _scored(rows_b)
    a, b = (x.drop_duplicates("id").set_index("id") if len(x) else x for x in (a, b))
    common = a.index.intersection(b.index) if len(a) and len(b) else []
    if len(common) == 0:
        raise ValueError("the two runs share no scored item")
    ca, cb = a.loc[common, "correct"].to_numpy(), b.loc[common, "correct"].to_numpy()
    both, neither = int(((ca == 1) & (cb == 1)).sum()), int(((ca == 0) & (cb == 0)).sum())
    only_a, only_b = int(((ca == 1) & (cb == 0)).sum()), int(((ca == 0) & (cb == 1)).sum())
    clusters = a.loc[common, "cluster"].to_numpy()
    lo, hi = paired_difference_interval(both, only_a, only_b, neither, effective_n(ca, clusters),
                                        effective_n(cb, clusters), confidence)
    return {"n": len(common), "accuracy_a": 100 * ca.mean(), "accuracy_b": 100 * cb.mean(),
            "difference": 100 * (cb.mean() - ca.mean()), "only_a_correct": only_a, "only_b_correct": only_b,
            "mcnemar_exact_p": mcnemar_exact_p(only_a, only_b), "low": 100 * lo, "high": 100 * hi}


def wilson_interval(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` (fractions; ``(nan, nan)`` when ``n == 0``); ``k`` and
    ``n`` may be fractional (an effective sample size). Use :func:`proportion_interval`."""
    if not n:
        return float("nan"), float("nan")
    z = _z(confidence)
    p = min(1.0, max(0.0, k / n))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if p == 0 else max(0.0, centre - half)  # exact ends at 0/n and n/n (no rounding residue)
    high = 1.0 if p == 1 else min(1.0, centre + half)
    return float(low), float(high)
