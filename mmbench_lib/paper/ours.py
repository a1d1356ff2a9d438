"""Our runs as rows of the papers' tables: each column recomputed from the run's item rows, with a
95% interval for the accuracy and for the rank among the table's rows.

Every accuracy's interval is the suite's one rule (:data:`mmbench_lib.core.uncertainty.RULE`, as in
``results.json``, ``metrics`` and ``compare``): a pooled (``micro``) accuracy through
:func:`~mmbench_lib.core.uncertainty.proportion_interval`, a mean of dimension accuracies (``dim_mean``) as the
weighted proportion of :func:`~mmbench_lib.core.uncertainty.dimension_mean`. Only a rank, which is not a
proportion, gets the percentiles of a clustered bootstrap.

More: docs/modules.md, ``mmbench_lib/paper/ours.py``.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from mmbench_lib.analysis.reader import Run, samples_df
from mmbench_lib.core.metrics import SCORED
from mmbench_lib.core.uncertainty import dimension_mean, effective_n, proportion_interval

N_RESAMPLES = 2000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Column:
    """A paper column on our item rows: ``select`` marks the questions it pools."""

    name: str
    select: Callable[[pd.DataFrame], np.ndarray]
    average: str = "micro"  # or "dim_mean" (by ``dimension_id``)
    #: dimension ids the column needs: a run missing any of them gets N/A, not an average over the
    #: dimensions it has (an L2 run has no L3; ``mmbench_lib.core.metrics.group_summary`` likewise)
    complete: tuple[int, ...] = ()


def group(name: str, ids: Sequence[int], average: str = "micro") -> Column:
    """A benchmark group (SEED level, part, Spatial / Temporal): its dimensions, all required."""
    return Column(name, dims(ids), average, tuple(int(i) for i in ids))


def dims(ids: Sequence[int]) -> Callable[[pd.DataFrame], np.ndarray]:
    ids = {int(i) for i in ids}
    return lambda df: df["dimension_id"].astype(int).isin(ids).to_numpy() if "dimension_id" in df else np.zeros(len(df), bool)


def field_in(field: str, values: Sequence[str]) -> Callable[[pd.DataFrame], np.ndarray]:
    values = set(values)
    return lambda df: df[field].isin(values).to_numpy() if field in df else np.zeros(len(df), bool)


def has_tag(field: str, value: str) -> Callable[[pd.DataFrame], np.ndarray]:
    """Rows whose list-valued ``field`` (MMMU ``image_type``) contains ``value``."""
    return lambda df: np.array([value in (v or []) for v in df[field]], bool) if field in df else np.zeros(len(df), bool)


def every(df: pd.DataFrame) -> np.ndarray:
    return np.ones(len(df), bool)


# --------------------------------------------------------------------------- item rows
def item_rows(run) -> pd.DataFrame:
    """The run's samples (:func:`mmbench_lib.analysis.reader.samples_df`; a folder or a
    :class:`~mmbench_lib.analysis.reader.Run`) with ``correct`` as a 0/1 float (NaN when unjudged)."""
    df = run.samples.copy() if isinstance(run, Run) else samples_df(run)
    if df.empty:
        return df
    df["correct"] = df["correct"].astype("Float64").astype(float)
    return df


# --------------------------------------------------------------------------- bootstrap
@dataclass
class Estimate:
    """Point values (%) per column, their percentile intervals and the bootstrap draws (B x columns)."""

    point: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    draws: dict[str, np.ndarray]
    clusters: int
    n: int


def _column_value(weights: np.ndarray, correct: np.ndarray, counts: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100.0 * (weights @ correct) / (weights @ counts)


def estimate(rows: pd.DataFrame, columns: Sequence[Column], n_resamples: int = N_RESAMPLES, seed: int = 0,
             confidence: float = CONFIDENCE) -> Estimate:
    """Every column's accuracy from the scored rows, with one clustered bootstrap shared by all columns.

    A column is N/A (``nan``) when it pools no scored question, any of its questions is N/A
    (``status == "n/a"``: SEED-2 image output without an image producer), or the run lacks one of
    the dimensions it needs (``Column.complete``), as in ``metrics``.
    """
    ok = rows[rows["status"] == SCORED] if len(rows) else rows
    codes, uniques = pd.factorize(ok["cluster"]) if len(ok) else (np.zeros(0, int), [])
    k = len(uniques)
    rng = np.random.default_rng(seed)
    weights = np.vstack([np.ones(k), rng.multinomial(k, np.full(k, 1.0 / k), size=n_resamples)]) if k else None
    point, low, high, draws = {}, {}, {}, {}
    for col in columns:
        mask = col.select(ok) if len(ok) else np.zeros(0, bool)
        na = bool(len(rows)) and bool(((rows["status"] == "n/a") & col.select(rows)).any())
        na = na or _lacks(rows, col.complete)
        if not k or not mask.any() or na:
            point[col.name] = low[col.name] = high[col.name] = math.nan
            draws[col.name] = np.full(n_resamples, math.nan)
            continue
        if col.average == "dim_mean":
            per_dim = []
            for d in sorted(set(ok.loc[mask, "dimension_id"].astype(int))):
                m = mask & (ok["dimension_id"].astype(int) == d).to_numpy()
                per_dim.append(_column_value(weights, np.bincount(codes[m], ok["correct"].to_numpy()[m], k),
                                             np.bincount(codes[m], minlength=k).astype(float)))
            with warnings.catch_warnings():  # a draw that misses every question of a dimension
                warnings.simplefilter("ignore", RuntimeWarning)
                values = np.nanmean(np.vstack(per_dim), axis=0)
        else:
            values = _column_value(weights, np.bincount(codes[mask], ok["correct"].to_numpy()[mask], k),
                                   np.bincount(codes[mask], minlength=k).astype(float))
        point[col.name] = float(values[0])
        boot = values[1:]
        draws[col.name] = boot
        if col.average == "micro":  # a proportion: the one rule
            y = ok["correct"].to_numpy()[mask]
            lo, hi = proportion_interval(float(y.sum()), len(y), effective_n(y, ok["cluster"].to_numpy()[mask]),
                                         confidence)
            low[col.name], high[col.name] = 100 * lo, 100 * hi
            continue
        _, lo, hi = dimension_mean(ok["correct"].to_numpy()[mask], ok["dimension_id"].to_numpy()[mask],
                                   ok["cluster"].to_numpy()[mask], confidence)
        low[col.name], high[col.name] = 100 * lo, 100 * hi
    return Estimate(point, low, high, draws, clusters=k, n=int(len(ok)))


def _lacks(rows: pd.DataFrame, needed: Sequence[int]) -> bool:
    """Whether ``rows`` (any status) hold no question of some dimension in ``needed``."""
    if not needed:
        return False
    present = set(rows["dimension_id"].dropna().astype(int)) if "dimension_id" in rows else set()
    return not set(needed) <= present


def rank_interval(draws: np.ndarray, others: Sequence[float], decimals: int | None = None,
                  confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile interval of the competition rank of each draw among ``others`` (fixed values)."""
    other = np.array([o for o in others if o is not None and not (isinstance(o, float) and math.isnan(o))], float)
    d = draws[np.isfinite(draws)]
    if not len(d):
        return math.nan, math.nan
    if decimals is not None:
        d, other = np.round(d, decimals), np.round(other, decimals)
    ranks = 1 + (other[None, :] > d[:, None]).sum(axis=1)
    alpha = (1 - confidence) / 2
    return float(np.quantile(ranks, alpha, method="inverted_cdf")), float(np.quantile(ranks, 1 - alpha,
                                                                                     method="inverted_cdf"))


def add_intervals(table: pd.DataFrame, runs: Sequence[Run], columns: dict[str, Column],
                  decimals: int, ranked: Sequence[str] = ()) -> pd.DataFrame:
    """For each of our rows (``source == "ours"``, matched to ``runs`` by ``run`` = their ``key``): ``<col>_ci_low`` /
    ``<col>_ci_high`` for every column and ``<col>_rank_low`` / ``<col>_rank_high`` for ``ranked``
    columns; empty for published rows (no item-level data) and for runs without item rows."""
    table = table.copy()
    by_run = {r.key: r for r in runs}
    for name in columns:
        table[f"{name}_ci_low"] = math.nan
        table[f"{name}_ci_high"] = math.nan
    for name in ranked:
        table[f"{name}_rank_low"] = math.nan
        table[f"{name}_rank_high"] = math.nan
    if "source" not in table:
        return table
    for i in table.index[table["source"] == "ours"]:
        run = by_run.get(table.at[i, "run"])
        if run is None:
            continue
        rows = item_rows(run)
        if rows.empty:
            continue
        est = estimate(rows, list(columns.values()))
        for name in columns:
            table.at[i, f"{name}_ci_low"] = est.low[name]
            table.at[i, f"{name}_ci_high"] = est.high[name]
        for name in ranked:
            if pd.isna(table.at[i, name]) or ("not_ranked" in table and table.at[i, "not_ranked"]):
                continue  # no value, or a row not comparable with the papers': no rank, so no rank interval
            ranked = (table["not_ranked"] == "") if "not_ranked" in table else True  # rows left out of the ranks
            others = table.loc[(table.index != i) & ranked, name].astype(float).tolist()
            lo, hi = rank_interval(est.draws[name], others, decimals)
            table.at[i, f"{name}_rank_low"], table.at[i, f"{name}_rank_high"] = lo, hi
    return table


def point_values(run: Run, columns: dict[str, Column]) -> dict[str, float]:
    """Each column's accuracy (%) from the run's item rows (no resampling)."""
    rows = item_rows(run)
    if rows.empty:
        return {name: math.nan for name in columns}
    return estimate(rows, list(columns.values()), n_resamples=0).point
