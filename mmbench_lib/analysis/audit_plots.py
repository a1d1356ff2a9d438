"""Figures of the reproduction audit (:mod:`mmbench_lib.pipeline.audit`): accuracy per rule set and file with 95%
Wilson intervals, and the waterfall from a reported number to the last score."""
from __future__ import annotations

import textwrap
from pathlib import Path


def rules_figure(result: dict):
    """One row of bars per file: each rule set's accuracy (%) with its interval."""
    import matplotlib.pyplot as plt

    files = result["files"]
    fig, axes = plt.subplots(len(files), 1, figsize=(7.5, 1.0 + 0.42 * sum(len(f["table"]) for f in files)),
                             squeeze=False)
    for ax, f in zip(axes[:, 0], files):
        t = f["table"].iloc[::-1]
        y = range(len(t))
        ax.barh(y, t["accuracy"], color="#4c72b0", alpha=0.8)
        ax.errorbar(t["accuracy"], y, xerr=[t["accuracy"] - t["low"], t["high"] - t["accuracy"]], fmt="none",
                    ecolor="black", capsize=3, lw=1)
        ax.set_yticks(list(y), t["rule set"])
        ax.set_xlim(0, 100)
        ax.set_title(textwrap.fill(f"{Path(f['path']).name} ({f['format']}, n={f['stats']['items']})", 70), fontsize=9)
        for yi, acc, lo, hi in zip(y, t["accuracy"], t["low"], t["high"]):
            _label(ax, yi, f"{acc:.1f}", hi, lo)
    axes[-1, 0].set_xlabel("accuracy (%), 95% Wilson interval")
    fig.tight_layout()
    return fig


#: a label's width per character, in axis units (8 pt text on the 7.5 in wide figure, axis 0-100)
_CHAR = 1.25


def _label(ax, y, label: str, end: float, start: float) -> None:
    """A bar's label right of its whisker when it fits inside the axis, else left of the bar, else inside it."""
    width = _CHAR * len(label)
    if end + 1.5 + width <= 100:
        ax.text(end + 1.5, y, label, va="center", fontsize=8)
    elif start - 1.5 - width >= 0:
        ax.text(start - 1.5, y, label, va="center", ha="right", fontsize=8)
    else:
        ax.text(1.0, y + 0.3, label, va="center", fontsize=8)


def waterfall_figure(waterfall, title: str = ""):
    """The waterfall: the file's own score, each step's change with its interval, and the unexplained rest up to the
    reported figure (a line)."""
    import matplotlib.pyplot as plt

    w = waterfall.reset_index(drop=True)
    reported = float(w.loc[0, "to"])
    rows = w.iloc[1:]
    fig, ax = plt.subplots(figsize=(7.5, 1.3 + 0.55 * len(rows)))
    for i, (_, r) in enumerate(rows.iterrows()):
        y = len(rows) - 1 - i
        if r["from"] != r["from"]:  # a level (the file's own score): a bar from 0
            ax.barh(y, r["to"], color="#4c72b0", alpha=0.8)
            ax.errorbar(r["to"], y, xerr=[[r["to"] - r["low"]], [r["high"] - r["to"]]], fmt="none", ecolor="black",
                        capsize=3)
            label, end, start = f"{r['to']:.1f}", r["high"], 0.0
        else:
            left, change = r["from"], r["to"] - r["from"]
            color = "#c44e52" if r["step"] == "unexplained rest" else ("#55a868" if change >= 0 else "#dd8452")
            ax.barh(y, change, left=left, color=color, alpha=0.85)
            ax.errorbar(r["to"], y, xerr=[[max(0.0, change - r["low"])], [max(0.0, r["high"] - change)]], fmt="none",
                        ecolor="black", capsize=3)
            label, end = f"{change:+.1f} [{r['low']:+.1f}, {r['high']:+.1f}]", max(left, left + r["high"])
            start = min(left, left + change, left + r["low"])
        _label(ax, y, label, end, start)
    ax.axvline(reported, color="black", ls="--", lw=1)
    ax.text(reported, -0.75, f" reported {reported:.1f} " if reported > 85 else f" reported {reported:.1f}", fontsize=8,
            va="bottom", ha="right" if reported > 85 else "left")
    ax.set_yticks(range(len(rows)), [textwrap.fill(t, 26) for t in rows["step"]][::-1], fontsize=9)
    ax.set_xlim(0, 100)
    ax.set_ylim(-0.8, len(rows) - 0.5)
    ax.set_xlabel("accuracy (%): change per step, whiskers its 95% interval", fontsize=9)
    ax.set_title(textwrap.fill(title or "from the file's own score to the reported figure", 60), fontsize=10)
    fig.tight_layout()  # title, labels and axis text inside the saved size
    return fig
