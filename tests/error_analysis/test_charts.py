"""The error-analysis figure: a category a source does not have is "n/a" (no bar, no interval), a share of 0 is a
mark at zero, the legend stays clear of the axis label, no text under 8 pt."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from mmbench_lib.analysis.plots import MIN_FONT, smallest_font
from mmbench_lib.error_analysis import errors


def test_categories_tell_na_from_zero():
    tags = pd.DataFrame({"category": ["perceptual error"] * 2 + [""] * 6,
                         "auto_category": ["answer extraction error"] * 8})
    comparison = errors.compare_published(errors.distribution(tags), label="this run, by hand",
                                          auto_label="automatic suggestions")
    breakdowns = {"subject": pd.DataFrame({"subject": ["Math", "Art"], "n": [3, 3], "wrong": [3, 2]})}
    fig = errors.figure(comparison, breakdowns, title="t")
    ax = fig.axes[0]
    other = list(errors.CATEGORIES).index("other")
    na = [t for t in ax.texts if t.get_text() == "n/a"]
    assert len(na) == 2 and all(abs(t.get_position()[1] - other) < 0.5 for t in na)  # both papers lack "other"
    bars_at_other = [p for p in ax.patches if abs(p.get_y() + p.get_height() / 2 - other) < 0.45]
    assert all(p.get_width() == 0 for p in bars_at_other)  # n/a draws no bar; ours is 0 there
    marks = [ln for ln in ax.lines if ln.get_marker() == "D"]
    assert marks and all(set(ln.get_xdata()) == {0} for ln in marks)
    assert sum(len(ln.get_xdata()) for ln in marks) == 14  # our 0% shares: every category but one, twice
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert hatched and "automatic suggestions, n = 6" in [t.get_text() for t in ax.get_legend().get_texts()]
    widths = {round(p.get_width()) for p in hatched}
    assert 100 in widths  # the 6 suggestions of the untagged cases, not mixed with the 2 hand tags
    solid = [p for p in ax.patches if not p.get_hatch() and p.get_facecolor()[:3] == matplotlib.colors.to_rgb("#c0392b")]
    assert {round(p.get_width()) for p in solid} == {0, 100}  # hand: 2 of 2 perceptual
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert ax.get_tightbbox(r).y0 > 0  # nothing stretches the layout to the figure's origin
    assert not ax.get_legend().get_window_extent(r).overlaps(ax.xaxis.label.get_window_extent(r))
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)


def test_live_distribution_says_na_for_a_category_the_papers_lack():
    from mmbench_lib.error_analysis import browser

    tags = pd.DataFrame({"category": ["other", ""], "auto_category": ["", "answer extraction error"]})
    html = browser.distribution_html(tags)
    row = html.split("data-category='other'")[1].split("</tr>")[0]
    assert "MMMU Fig. 6 n/a" in row and "nan" not in html
