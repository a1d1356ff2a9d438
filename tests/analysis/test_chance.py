"""Chance, the exact test against it, Wilson intervals and Holm's correction: worked examples."""
import math

import pytest
from scipy import stats

from mmbench_lib.analysis.chance import chance_test, holm, item_chance, poisson_binomial_pmf, wilson


@pytest.mark.parametrize("k,n,p", [(0, 3, 0.25), (2, 3, 0.25), (3, 3, 0.25), (8, 36, 0.25), (30, 100, 0.25),
                                   (13, 20, 0.5), (1, 9, 1 / 9)])
def test_equal_chances_give_scipys_exact_binomial_test(k, n, p):
    assert chance_test(k, [p] * n) == pytest.approx(stats.binomtest(k, n, p, alternative="greater").pvalue, rel=1e-9)


def test_worked_examples():
    # two of three four-option items right: P(X >= 2) = 3 * 0.25^2 * 0.75 + 0.25^3 = 0.15625
    assert chance_test(2, [0.25] * 3) == pytest.approx(0.15625, abs=1e-12)
    # a two-option and a four-option item (unequal chances, a Poisson binomial)
    assert poisson_binomial_pmf([0.5, 0.25]) == pytest.approx([0.375, 0.5, 0.125])
    assert chance_test(1, [0.5, 0.25]) == pytest.approx(0.625) and chance_test(2, [0.5, 0.25]) == pytest.approx(0.125)
    # an open question (chance 0) answered right is impossible by luck
    assert chance_test(2, [0.25, 0.0]) == 0.0 and chance_test(0, [0.25, 0.0]) == 1.0


def test_wilson_interval_matches_the_closed_form():
    c, n, z = 1, 3, stats.norm.ppf(0.975)
    p = c / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert wilson(c, n) == pytest.approx((centre - half, centre + half), abs=1e-9)
    assert wilson(1, 3) == pytest.approx((0.0615, 0.7923), abs=1e-4) and wilson(0, 0) == (None, None)


def test_holm_step_down():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    out = holm([0.5, float("nan"), 0.001])
    assert out[0] == pytest.approx(0.5) and math.isnan(out[1]) and out[2] == pytest.approx(0.002)


def test_random_choice_expectation_per_item():
    assert item_chance("multiple-choice", 4, "B") == 0.25  # SEED, MMMU
    assert item_chance("multiple-choice", 5, ["A", "C"]) == 0.4  # MMMU: either listed letter is right
    assert item_chance("multiple-choice", 4, "AC") == 0.0  # CMMMU: one random letter never names both
    assert item_chance("true-false", 0, "对") == 0.5
    assert item_chance("short-answer", 0, "7") == 0.0 and item_chance("fill-in-the-blank", 0, "北京") == 0.0
