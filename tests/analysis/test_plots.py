"""analysis.plots: accuracy bars carry n and the 95% interval, 0% and n/a are told apart, the legend
stays off the bars, no text is smaller than 8 pt, titles use display names."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from mmbench_lib.analysis import plots


def _entry(dim, name, acc, n, lo=None, hi=None, na=0, failed=0):
    return {"dimension_id": dim, "dimension": name, "n": n, "correct": round((acc or 0) * n), "accuracy": acc,
            "ci_low": lo, "ci_high": hi, "failed": failed, "n/a": na, "random_expected": 0.25}


METRICS = {"benchmark": "seed2", "model": "smollm2", "recipe": "seed1-ppl", "reduction": "sum", "per_dimension": [
    _entry(1, "Scene Understanding", 0.0, 3, 0.0, 0.0),
    _entry(2, "Instance Identity", 0.5, 4, 0.2, 0.8),
    _entry(25, "Text-to-Image Generation", None, 0, na=3),
]}


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_dimension_bars_show_n_intervals_and_tell_zero_from_na():
    fig = plots.dimension_bars({plots.run_label(METRICS): METRICS})
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "0.0% (n=3)" in texts and "50.0% (n=4)" in texts
    assert "n/a (3 need image output)" in texts  # N/A says so ...
    bars = [p for p in ax.patches if p.get_width() > 0]
    assert len(bars) == 1 and bars[0].get_width() == pytest.approx(50.0)  # ... and has no bar, nor has 0%
    zero_marks = [ln for ln in ax.lines if ln.get_marker() == "D" and list(ln.get_xdata()) == [0]]
    assert len(zero_marks) == 1  # 0% is a visible mark at zero
    segments = [c for c in ax.collections if hasattr(c, "get_segments")]
    ends = sorted(round(x, 6) for c in segments for seg in c.get_segments() for x in (seg[0][0], seg[1][0])
                  if seg[0][1] == seg[1][1])
    assert 20.0 in ends and 80.0 in ends  # the 95% interval of dimension 2
    title = ax.get_title(loc="left")
    assert title.startswith("SEED-Bench-2") and "seed2" not in title
    assert plots.smallest_font(fig) >= plots.MIN_FONT
    fig.canvas.draw()
    legend = fig.legends[0].get_window_extent()
    assert not _overlap(legend, ax.get_window_extent())  # the legend is not over the bars
    plt.close(fig)


def test_group_bars_by_discipline_with_intervals():
    runs = {"Random Choice": {"per_discipline": {"Science": {"n": 6, "accuracy": 1 / 6, "ci_low": 0.0, "ci_high": 0.5,
                                                             "failed": 0, "n/a": 0},
                                                 "Business": {"n": 3, "accuracy": 0.0, "ci_low": 0.0, "ci_high": 0.0,
                                                              "failed": 0, "n/a": 0}}},
            "Frequent Choice": {"per_discipline": {"Science": {"n": 6, "accuracy": 0.5, "ci_low": 0.17, "ci_high": 0.83,
                                                               "failed": 0, "n/a": 0}}}}
    fig = plots.group_bars(runs, "per_discipline", title="MMMU validation: accuracy by discipline")
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "16.7% (n=6)" in texts and "0.0% (n=3)" in texts and "50.0% (n=6)" in texts
    assert "not run" in texts  # Frequent Choice has no Business entry: not a 0 bar
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Science", "Business"]
    assert plots.smallest_font(fig) >= plots.MIN_FONT
    fig.canvas.draw()
    assert not _overlap(fig.legends[0].get_window_extent(), ax.get_window_extent())
    plt.close(fig)


def test_display_names():
    assert [plots.display_name(b) for b in ("seed", "seed2", "mmmu", "cmmmu")] == ["SEED-Bench", "SEED-Bench-2", "MMMU",
                                                                                   "CMMMU"]
    assert plots.run_label({"model": "random", "recipe": "seed1-ppl", "reduction": "sum"}) == "Random Choice (seed1-ppl, sum)"
    assert plots.run_label({"baseline": "frequent", "model": "smollm2"}) == "Frequent Choice"
    assert plots.run_label({"model": "tiny-llava", "recipe": "llava-chat", "reduction": "mean"}) == \
        "tiny random-weight LLaVA (llava-chat, mean)"


def test_generation_runs_keyed_by_their_labels_are_shown_by_display_names():
    assert plots.run_label({"baseline": "ocr", "label": "smollm2+ocr", "model": "smollm2"}) == \
        "SmolLM2-135M-Instruct + OCR"
    assert plots.run_label({"baseline": "none", "label": "smollm2", "model": "smollm2"}) == "SmolLM2-135M-Instruct"
    entry = {"n": 3, "accuracy": 1 / 3, "ci_low": 0.0, "ci_high": 1.0, "failed": 0, "n/a": 0}
    runs = {k: {"baseline": b, "label": k, "model": m, "per_discipline": {"Science": entry}}
            for k, b, m in (("random", "random", "RandomAnswer"), ("smollm2+ocr", "ocr", "smollm2"))}
    runs["my run"] = {"label": "x", "per_discipline": {"Science": entry}}  # a label the caller chose is kept
    fig = plots.group_bars(runs, "per_discipline", title="MMMU validation: accuracy by discipline")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["Random Choice", "SmolLM2-135M-Instruct + OCR",
                                                                  "my run"]
    plt.close(fig)
