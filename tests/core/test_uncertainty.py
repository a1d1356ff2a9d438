"""Bootstrap intervals cluster by shared image; McNemar counts discordant items."""
import pytest

from mmbench_lib.core.uncertainty import accuracy_ci, accuracy_ci_table, compare_runs


def _rows(correct, clusters=None, dim=1):
    clusters = clusters or list(range(len(correct)))
    return [{"id": f"q{i}", "status": "ok", "correct": c, "cluster": str(k), "dimension": dim} for i, (c, k) in enumerate(zip(correct, clusters))]


def test_interval_contains_the_estimate_and_is_deterministic():
    rows = _rows([True] * 60 + [False] * 40)
    ci = accuracy_ci(rows, seed=1)
    assert ci["accuracy"] == 60.0 and ci["low"] < 60 < ci["high"]
    assert 48 < ci["low"] < 55 and 65 < ci["high"] < 72  # binomial s.e. ~4.9 points
    assert accuracy_ci(rows, seed=1) == ci


def test_shared_images_widen_the_interval():
    # the same 100 answers, but every 5 questions share an image and agree with each other
    correct = [k % 2 == 0 for k in range(20) for _ in range(5)]
    independent = accuracy_ci(_rows(correct))
    clustered = accuracy_ci(_rows(correct, [k for k in range(20) for _ in range(5)]))
    assert clustered["clusters"] == 20 and independent["clusters"] == 100
    assert (clustered["high"] - clustered["low"]) > 1.5 * (independent["high"] - independent["low"])


def test_failed_items_are_left_out():
    rows = _rows([True, False, True, True]) + [{"id": "x", "status": "failed", "correct": False, "cluster": "x", "dimension": 1}]
    assert accuracy_ci(rows)["n"] == 4


def test_table_by_dimension_has_an_overall_row():
    t = accuracy_ci_table(_rows([True, False] * 10, dim=1) + [dict(r, id="b" + r["id"], dimension=2) for r in _rows([True] * 20)])
    assert list(t["dimension"]) == [1, 2, "overall"]
    assert t.set_index("dimension").loc[2, "accuracy"] == 100.0


def test_mcnemar_and_paired_difference():
    a = _rows([True] * 50 + [False] * 50)
    b = _rows([True] * 50 + [True] * 20 + [False] * 30)  # b fixes 20 items a got wrong, breaks none
    r = compare_runs(a, b)
    assert (r["only_a_correct"], r["only_b_correct"]) == (0, 20)
    assert r["difference"] == pytest.approx(20.0) and r["low"] > 0
    assert r["mcnemar_exact_p"] == pytest.approx(2 * 0.5 ** 20, rel=1e-6)
    with pytest.raises(ValueError, match="share no scored item"):
        compare_runs(a, [dict(x, id="z" + x["id"]) for x in b])
