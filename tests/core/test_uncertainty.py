"""The one interval rule (core.uncertainty): Wilson at every n, on the effective n where questions share an image;
Newcombe's paired interval and McNemar's exact test between runs."""
import math

import pytest
from scipy import stats

from mmbench_lib.core.uncertainty import (accuracy_ci, accuracy_ci_table, compare_runs, effective_n,
                                          paired_difference_interval, proportion_interval, wilson_interval)


def _rows(correct, clusters=None, dim=1):
    clusters = clusters or list(range(len(correct)))
    return [{"id": f"q{i}", "status": "ok", "correct": c, "cluster": str(k), "dimension": dim} for i, (c, k) in enumerate(zip(correct, clusters))]


def test_wilson_worked_examples_at_small_n():
    """Wilson (1927): centre (p + z²/2n) / (1 + z²/n), half-width z sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n), z = 1.96.
    0/3: centre 0.281, half 0.281 -> [0, 56.1]; 2/3 -> [20.8, 93.9]; 3/3 -> [43.9, 100]."""
    for (k, n), (lo, hi) in {(0, 3): (0.0, 0.5615), (2, 3): (0.2077, 0.9385), (3, 3): (0.4385, 1.0)}.items():
        got = wilson_interval(k, n)
        assert got == pytest.approx((lo, hi), abs=1e-4)
        ref = stats.binomtest(k, n).proportion_ci(method="wilson")  # scipy's own Wilson
        assert got == pytest.approx((ref.low, ref.high), abs=1e-9)
    assert wilson_interval(0, 3)[0] == 0.0 and wilson_interval(3, 3)[1] == 1.0  # exact ends, no rounding residue
    assert proportion_interval(0, 0) == (None, None)


def test_the_same_k_of_n_gets_the_same_interval_every_time():
    a, b = accuracy_ci(_rows([True, True, False])), accuracy_ci(_rows([False, True, True], dim=2))
    assert (a["low"], a["high"]) == (b["low"], b["high"]) == pytest.approx((20.77, 93.85), abs=0.01)
    zero = accuracy_ci(_rows([False] * 3))
    assert zero["accuracy"] == 0 and zero["low"] == 0 and zero["high"] == pytest.approx(56.15, abs=0.01)


def test_interval_contains_the_estimate():
    ci = accuracy_ci(_rows([True] * 60 + [False] * 40))
    assert ci["accuracy"] == 60.0 and (ci["low"], ci["high"]) == pytest.approx((50.20, 69.06), abs=0.01)
    assert ci["n_effective"] == 100


def test_shared_images_widen_the_interval():
    # the same 100 answers, but every 5 questions share an image and agree with each other: worth 20 questions
    correct = [k % 2 == 0 for k in range(20) for _ in range(5)]
    independent = accuracy_ci(_rows(correct))
    clustered = accuracy_ci(_rows(correct, [k for k in range(20) for _ in range(5)]))
    assert clustered["clusters"] == 20 and independent["clusters"] == 100
    assert clustered["n_effective"] == pytest.approx(20)  # deff = 5 (= 20/19 * 20 * 2.5^2 / 100^2 / (0.25/100)), clamped
    assert (clustered["low"], clustered["high"]) == pytest.approx(tuple(100 * x for x in wilson_interval(10, 20)))


def test_effective_n_bounds():
    assert effective_n([1, 0, 1], ["a", "b", "c"]) == 3  # every question its own cluster
    assert effective_n([1, 1, 1, 0], ["a", "a", "b", "b"]) <= 4
    assert effective_n([0, 0, 0], ["a", "a", "b"]) == 2  # all answers equal: the clusters count
    assert effective_n([1, 0], ["a", "a"]) == 1  # one cluster


def test_failed_items_are_left_out():
    rows = _rows([True, False, True, True]) + [{"id": "x", "status": "failed", "correct": False, "cluster": "x", "dimension": 1}]
    assert accuracy_ci(rows)["n"] == 4


def test_table_by_dimension_has_an_overall_row():
    t = accuracy_ci_table(_rows([True, False] * 10, dim=1) + [dict(r, id="b" + r["id"], dimension=2) for r in _rows([True] * 20)])
    assert list(t["dimension"]) == [1, 2, "overall"]
    assert t.set_index("dimension").loc[2, "accuracy"] == 100.0


def test_newcombe_paired_interval():
    """Newcombe (1998) method 10 by hand on (both, only a, only b, neither) = (8, 5, 4, 9), n = 26: p_a = 13/26,
    p_b = 12/26, phi = (72 - 20 - 13) / sqrt(13*13*12*14) = 0.2308; Wilson limits, then
    low = d - sqrt((p_b-l_b)² - 2 phi (p_b-l_b)(u_a-p_a) + (u_a-p_a)²), high likewise."""
    la, ua = wilson_interval(13, 26)
    lb, ub = wilson_interval(12, 26)
    pa, pb, phi = 13 / 26, 12 / 26, (72 - 20 - 13) / math.sqrt(13 * 13 * 12 * 14)
    low = pb - pa - math.sqrt((pb - lb) ** 2 - 2 * phi * (pb - lb) * (ua - pa) + (ua - pa) ** 2)
    high = pb - pa + math.sqrt((ub - pb) ** 2 - 2 * phi * (ub - pb) * (pa - la) + (pa - la) ** 2)
    assert paired_difference_interval(8, 5, 4, 9) == pytest.approx((low, high))
    assert paired_difference_interval(8, 5, 4, 9) == pytest.approx((-0.2576, 0.1868), abs=1e-4)
    lo, hi = paired_difference_interval(3, 0, 0, 0)  # identical answers on 3 items: 0 inside, a real width
    assert lo < 0 < hi


def test_mcnemar_and_paired_difference():
    a = _rows([True] * 50 + [False] * 50)
    b = _rows([True] * 50 + [True] * 20 + [False] * 30)  # b fixes 20 items a got wrong, breaks none
    r = compare_runs(a, b)
    assert (r["only_a_correct"], r["only_b_correct"]) == (0, 20)
    assert r["difference"] == pytest.approx(20.0) and r["low"] > 0
    assert (r["low"], r["high"]) == pytest.approx(tuple(100 * x for x in paired_difference_interval(50, 0, 20, 30)))
    assert r["mcnemar_exact_p"] == pytest.approx(2 * 0.5 ** 20, rel=1e-6)
    with pytest.raises(ValueError, match="share no scored item"):
        compare_runs(a, [dict(x, id="z" + x["id"]) for x in b])


def test_a_mean_of_dimension_accuracies_is_a_weighted_proportion_under_the_same_rule():
    """Dimension 1: 2 of 2 right, dimension 2: 1 of 3: mean (1 + 1/3) / 2 = 2/3. Weights 1/4, 1/4, 1/6, 1/6, 1/6:
    Kish's n = 1 / (2/16 + 3/36) = 4.8 (5 singleton clusters: no clustering effect), Wilson of 3.2 of 4.8."""
    from mmbench_lib.core.uncertainty import dimension_mean, weighted_n
    assert weighted_n([0.25, 0.25] + [1 / 6] * 3) == pytest.approx(4.8)
    value, lo, hi = dimension_mean([1, 1, 0, 0, 1], [1, 1, 2, 2, 2], ["a", "b", "c", "d", "e"])
    assert value == pytest.approx(2 / 3)
    assert (lo, hi) == pytest.approx(wilson_interval(3.2, 4.8))
    # dimensions of equal size: the mean is the pooled accuracy, and its interval the pooled one (results.json's)
    eq = dimension_mean([1, 0, 0, 0], [1, 1, 2, 2], ["a", "b", "c", "d"])
    assert eq[1:] == pytest.approx(proportion_interval(1, 4, effective_n([1, 0, 0, 0], ["a", "b", "c", "d"])))
    # 0/n and n/n: one end exact, the other open (never a zero-width interval)
    none_right, all_right = dimension_mean([0] * 4, [1, 1, 2, 2], list("abcd")), dimension_mean([1] * 4, [1, 1, 2, 2], list("abcd"))
    assert none_right[1] == 0.0 and none_right[2] == pytest.approx(wilson_interval(0, 4)[1]) and none_right[2] > 0.3
    assert all_right[2] == 1.0 and all_right[1] < 0.7
