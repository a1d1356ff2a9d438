"""The error-analysis figure: the category distribution of the analysed sample beside MMMU Fig. 6 and
CMMMU Fig. 4 (each share with a 95% Wilson interval over its source's n; the hand tags in solid red, the
automatic suggestions of untagged cases apart, hatched light red, never mixed with the tags), and the run's errors by
subject / dimension, difficulty and image type. Styled as every figure of the suite
(:mod:`mmbench_lib.analysis.plots`: no text under 8 pt, legends off the bars)."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from mmbench_lib.analysis.plots import MIN_FONT, NA_COLOR, RUN_COLORS, wrap
from mmbench_lib.core.uncertainty import wilson_interval

OURS_COLOR = "#c0392b"
AUTO_COLOR = "#f1948a"


def figure(comparison, breakdowns: dict | None = None, title: str = "", ns: dict | None = None,
           automatic: str | None = None):
    """``comparison``: ``category`` plus one percent column per source (ours first); ``ns``: source ->
    number of analysed errors (for the intervals and the legend); ``automatic``: the column of automatic
    suggestions (hatched); ``breakdowns``: name -> frame with the value column, ``n`` and ``wrong``."""
    breakdowns = {k: v for k, v in (breakdowns or {}).items() if v is not None and len(v)}
    ns = ns or {}
    panels = 1 + len(breakdowns)
    ncols = min(panels, 2)
    nrows = math.ceil(panels / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.2 * ncols, 4.9 * nrows), squeeze=False)
    axes = [a for row in axes for a in row]
    for a in axes[panels:]:
        a.set_visible(False)
    _categories(axes[0], comparison, ns, automatic)
    for ax, (by, df) in zip(axes[1:], breakdowns.items()):
        _breakdown(ax, by, df.head(12))
    if title:
        fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return fig


def _categories(ax, comparison, ns: dict, automatic: str | None = None):
    sources = [c for c in comparison.columns if c != "category"]
    h = 0.8 / max(len(sources), 1)
    published = 0
    for i, s in enumerate(sources):
        if s == automatic:
            color, hatch = AUTO_COLOR, "////"
        else:
            color, hatch = (OURS_COLOR if i == 0 else RUN_COLORS[(published + 1) % len(RUN_COLORS)]), None
            published += i > 0
        ys = np.arange(len(comparison)) + (i - (len(sources) - 1) / 2) * h
        vals = comparison[s].astype(float).to_numpy()
        n = ns.get(s)
        label = f"{s}, n = {n}" if n is not None and f"n = {n}" not in s and f"{n} errors" not in s else s
        na = np.isnan(vals)
        ax.barh(ys[~na], vals[~na], height=h * 0.9, color=color, label=wrap(label, 60), hatch=hatch,
                edgecolor="#8a5a00" if hatch else None, linewidth=0)
        for y in ys[na]:  # the source has no such category: n/a, not a bar of 0
            ax.text(0.8, y, "n/a", va="center", fontsize=MIN_FONT, color=NA_COLOR, style="italic")
        zero = ~na & (vals == 0)
        if zero.any():  # 0%: a mark at zero (an empty unclipped line would stretch the layout to the origin)
            ax.plot(np.zeros(zero.sum()), ys[zero], "D", ms=3.5, color=color, clip_on=False, zorder=3)
        if n and (~na).any():
            iv = np.array([wilson_interval(v / 100 * n, n) for v in vals[~na]]) * 100
            ax.errorbar(vals[~na], ys[~na], xerr=[np.maximum(vals[~na] - iv[:, 0], 0), np.maximum(iv[:, 1] - vals[~na], 0)],
                        fmt="none", ecolor="#333333", elinewidth=0.7, capsize=1.5)
    ax.set_yticks(range(len(comparison)), comparison["category"], fontsize=9)
    ax.set_ylim(len(comparison) - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.tick_params(axis="x", labelsize=9)
    ax.set_xlabel("share of analysed errors (%); lines: 95% Wilson interval;\n"
                  "diamond at 0 = 0%; n/a = the source has no such category", fontsize=9)
    ax.set_title("error categories", fontsize=10)
    ax.legend(fontsize=MIN_FONT, loc="upper center", bbox_to_anchor=(0.5, -0.26), frameon=False,
              ncol=2 if len(sources) > 3 else 1)


def _breakdown(ax, by: str, df):
    ys = np.arange(len(df))
    ax.barh(ys, df["n"], color="#dddddd", label="items")
    ax.barh(ys, df["wrong"], color="#d62728", label="wrong")
    for y, (n, w) in enumerate(zip(df["n"], df["wrong"])):
        ax.text(n + 0.05 * max(df["n"].max(), 1), y, f"{w}/{n}", va="center", fontsize=MIN_FONT)
    ax.set_yticks(list(ys), [wrap(v.replace("_", " "), 24) for v in df[by].astype(str)], fontsize=MIN_FONT)
    ax.set_ylim(len(df) - 0.5, -0.5)
    ax.set_xlim(0, df["n"].max() * 1.25 + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.tick_params(axis="x", labelsize=MIN_FONT)
    ax.set_xlabel("items (wrong of all scored)", fontsize=9)
    ax.set_title(f"errors by {by.replace('_', ' ')}", fontsize=10)
    ax.legend(fontsize=MIN_FONT, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
