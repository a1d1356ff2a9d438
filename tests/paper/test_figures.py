"""paper.figures at paper quality: one colour per rank in every column of a heat-map, top-5 cells
not in the grey of n/a, interval text >= 8 pt; leaderboard labels that leave the panel to the bars
and no hatched "missing" bars; MMMU Table 12 with the test set and our split in separate panels;
no text under 8 pt anywhere."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib import colors as mcolors

from mmbench_lib import paper
from mmbench_lib.analysis.plots import MIN_FONT, NA_FILL, smallest_font
from mmbench_lib.paper import figures


def _cell_colors(fig):
    return fig.axes[0].images[0].get_array()


def test_one_colour_is_one_rank_in_every_column():
    # column a ranks 3 rows, column b ranks 6: rank 2 must look the same in both
    df = pd.DataFrame({"model": list("PQRSTU"), "source": ["paper"] * 5 + ["ours"],
                       "a": [90, 80, 70, math.nan, math.nan, math.nan], "b": [60, 50, 40, 30, 20, 10]})
    iv = pd.DataFrame({"a": [""] * 6, "b": [""] * 5 + ["5-6"]})
    fig = figures.rank_heatmap(df, ["a", "b"], intervals=iv, title="t")
    rgba = _cell_colors(fig)
    assert np.allclose(rgba[1, 0], rgba[1, 1]) and np.allclose(rgba[0, 0], rgba[0, 1])  # rank 2, rank 1
    assert not np.allclose(rgba[0, 1], rgba[1, 1])
    assert np.allclose(rgba[3, 0], mcolors.to_rgba(NA_FILL))  # no rank: the n/a grey, written "n/a"
    texts = {(round(t.get_position()[0], 1), round(t.get_position()[1], 1)): t for t in fig.axes[0].texts}
    assert texts[(0.5, 3.5)].get_text() == "n/a"
    interval = next(t for t in fig.axes[0].texts if t.get_text() == "[5-6]")
    assert interval.get_fontsize() >= MIN_FONT
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)


def test_seed1_heatmap_top5_cells_are_not_the_grey_of_not_evaluated():
    ranks, text, _iv = paper.seed1_rank_frame()
    fig = paper.seed1_heatmap()
    rgba = _cell_colors(fig)
    cols = [c for c in ranks.columns if c not in ("model", "source", "not_ranked")]
    top5 = [(i, j) for i in range(len(ranks)) for j, c in enumerate(cols) if text.iloc[i][c] == "1-5"]
    assert top5
    grey = np.array(mcolors.to_rgba(NA_FILL))
    assert all(not np.allclose(rgba[i, j], grey) for i, j in top5)
    ranked = [rgba[i, j] for i in range(len(ranks)) for j, c in enumerate(cols) if not np.isnan(ranks.iloc[i][c])]
    assert all(not np.allclose(rgba[i, j], c) for i, j in top5 for c in ranked[:50])  # nor a rank's colour
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)


def test_leaderboard_labels_leave_room_for_the_bars_and_nothing_is_hatched():
    table = paper.seed1_leaderboard_table()
    long = "a model with a very long name [llava-chat-336, mean, demo data] (ours)"
    ours = pd.DataFrame([{"dimension_id": d, "dimension": n, "rank": pd.NA, "model": long, "accuracy": acc,
                          "source": "run x", "origin": "ours", "n": 3, "accuracy_ci_low": 0.0, "accuracy_ci_high": 60.0}
                         for (d, n), acc in zip(table[["dimension_id", "dimension"]].drop_duplicates().itertuples(index=False),
                                                [0.0] + [33.3] * 11)])
    fig = paper.seed1_leaderboards(pd.concat([table, ours], ignore_index=True))
    fig.canvas.draw()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_yticklabels()]
    assert len(panels) == 12
    for ax in panels:
        assert not any(p.get_hatch() for p in ax.patches)  # no hatched "missing" bars
        widest = max(t.get_window_extent().width for t in ax.get_yticklabels())
        assert widest < 0.45 * ax.get_window_extent().width  # labels never take half of a panel
        assert "ours 1" in [t.get_text() for t in ax.get_yticklabels()]
    notes = " ".join(t.get_text() for t in fig.texts)
    assert "ours 1 = a model with a very long name" in notes  # the key under the figure
    first = panels[0]
    assert "0.0 (n=3)" in [t.get_text() for t in first.texts]  # 0% with its n ...
    assert "not legible" in [t.get_text() for t in first.texts]  # ... and an illegible value is said to be so
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)


def test_image_types_keep_the_test_set_and_our_split_apart(monkeypatch):
    table = paper.mmmu_image_type_table()
    label = "Random Choice [baseline, demo data] (ours)"
    table[label] = [20.0, 25.0] + [math.nan] * (len(table) - 2)
    table[f"{label} ci_low"], table[f"{label} ci_high"] = table[label] - 10, table[label] + 10
    table[f"{label} n"] = pd.array([24, 9] + [None] * (len(table) - 2), dtype="Int64")
    table.attrs["splits"] = {label: "validation"}
    fig = paper.mmmu_image_types(table)
    w, h = fig.get_size_inches() * fig.dpi
    assert h < 2000 and w < 2000
    ours_ax, pub_ax = fig.axes[0], fig.axes[1]
    assert "validation" in ours_ax.get_title(loc="left") and "test" in pub_ax.get_title(loc="left")
    assert [t.get_text() for t in ours_ax.get_yticklabels()] == ["Overall", "Diagrams"]  # our types only
    assert "20.0 (n=24)" in [t.get_text() for t in ours_ax.texts]
    assert len(pub_ax.get_yticklabels()) == len(table)
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)


@pytest.mark.parametrize("name", ["mmmu_fig6_errors", "cmmmu_fig4_errors"])
def test_error_distributions_carry_n_and_intervals(name):
    fig = paper.error_distribution(name, "t")
    assert any("n = " in t.get_text() and "Wilson" in t.get_text() for t in fig.texts)
    assert fig.axes[0].collections  # the interval lines
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)


def test_paired_differences_labels_keep_each_run_on_its_line():
    table = pd.DataFrame([{"benchmark": "seed2", "run_a": "SmolLM2-135M-Instruct [seed1-ppl, sum, demo data] (ours)",
                           "run_b": "Random Choice [seed1-ppl, sum, demo data] (ours)", "n": 48, "difference": -4.2,
                           "ci_low": -20.8, "ci_high": 12.5, "mcnemar_exact_p": 0.80}])
    fig = figures.paired_differences(table)
    label = fig.axes[0].get_yticklabels()[0].get_text()
    assert label.split("\n") == ["SEED-Bench-2: Random Choice [seed1-ppl, sum, demo data]",
                                 "minus SmolLM2-135M-Instruct [seed1-ppl, sum, demo data]"]  # no dangling "data]"
    assert "seed2" not in label  # the display name, not the key
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)


def test_image_type_heatmap_has_its_value_scale():
    table = paper.mmmu_image_type_table()
    fig = paper.mmmu_image_types(table)
    pub_ax = fig.axes[0]
    bars = [a for a in fig.axes if hasattr(a, "_colorbar")]
    assert len(bars) == 1  # a heat-map of values says which colour is which value
    cbar = bars[0]._colorbar
    assert "accuracy (%)" in cbar.ax.get_ylabel() and "n/a" in cbar.ax.get_ylabel()
    assert cbar.norm.vmin == 0 and cbar.norm.vmax == 100
    cols = [c for c in table.columns if c not in ("image_type", "n_samples")]
    vals = table[cols].astype(float).to_numpy()
    rgba = pub_ax.images[0].get_array()
    for i, j in [(1, 0), (6, 5), (len(table) - 1, len(cols) - 1)]:  # the colour of a cell is the bar's at its value
        assert np.allclose(rgba[i, j], cbar.cmap(cbar.norm(vals[i, j])), atol=0.02)
    assert not cbar.ax.get_window_extent().overlaps(pub_ax.get_window_extent())
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)
