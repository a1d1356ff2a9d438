"""Accuracy against chance: each item's chance of being right by a random pick, Wilson intervals, the
exact test of "no better than chance" and Holm's correction over several such tests.

Chance is what the papers' **Random Choice** baseline expects (MMMU §4.1, CMMMU §4.1; on SEED it is
the ``random_expected`` of ``core.metrics``, 1 / options): a uniformly random option per lettered question,
right with probability (gold options) / (options); a CMMMU true/false question 1/2; an open
(MMMU short answer, CMMMU fill-in) question 0, since Random Choice answers it empty. A CMMMU
multiple-choice question with several gold letters (``"AC"``) is right only if all are named
(``docs/protocols.md`` §4.4: the official scorer compares the letter strings), which one random
letter never does: 0.

More: docs/modules.md, ``mmbench_lib/analysis/chance.py``.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
from scipy import stats

from mmbench_lib.core.uncertainty import proportion_interval
from mmbench_lib.tasks.options import gold_letters


def item_chance(question_type: str | None, num_choices, answer) -> float:
    """The Random Choice expectation of one item (module doc), from its stored row fields."""
    if question_type == "true-false":
        return 0.5
    n = int(num_choices or 0)
    if n < 1:
        return 0.0
    gold = gold_letters(answer)
    if gold is None:
        return 0.0
    if isinstance(answer, list):  # MMMU: any of the listed letters is right
        return len(set(gold)) / n
    return 1.0 / n if len(gold) == 1 else 0.0


def row_chance(df) -> np.ndarray:
    """:func:`item_chance` of every row of a ``samples_df`` frame."""
    return np.array([item_chance(q, c, a) for q, c, a in zip(df["question_type"], df["num_choices"], df["answer"])],
                    dtype=float)


def wilson(correct: int, n: int, confidence: float = 0.95) -> tuple[float | None, float | None]:
    """Wilson score interval of ``correct / n`` (fractions); ``(None, None)`` when ``n == 0``."""
    return proportion_interval(correct, n, confidence=confidence)  # the one rule: core.uncertainty


def poisson_binomial_pmf(ps) -> np.ndarray:
    """Exact distribution of the number of successes of independent Bernoulli(``p_i``) trials: items with
    the same ``p`` form one binomial, the binomials are convolved."""
    pmf = np.array([1.0])
    for p, m in sorted(Counter(float(p) for p in ps).items()):
        pmf = np.convolve(pmf, stats.binom.pmf(np.arange(m + 1), m, p))
    return pmf


def chance_test(correct: int, ps) -> float:
    """One-sided exact p-value of "at most chance": P(X >= ``correct``) where X counts successes of
    independent Bernoulli(``p_i``) trials, one per item (module doc). Equals
    ``scipy.stats.binomtest(correct, n, p, alternative="greater")`` when every ``p_i`` is ``p``."""
    ps = list(ps)
    if not ps:
        return float("nan")
    pmf = poisson_binomial_pmf(ps)
    return float(min(1.0, pmf[int(correct):].sum()))


def holm(pvalues) -> list[float]:
    """Holm's step-down adjustment of several p-values (family-wise error), in the given order; NaN stays NaN."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if not len(ok):
        return out.tolist()
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out.tolist()
