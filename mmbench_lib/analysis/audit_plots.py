"""Figures of the reproduction audit (:mod:`mmbench_lib.pipeline.audit`): accuracy per rule set and file with 95%
Wilson intervals, and the waterfall from a reported number to the last score."""
from __future__ import annotations

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
        ax.set_title(f"{Path(f['path']).name} ({f['format']}, n={f['stats']['items']})", fontsize=9)
        for yi, acc, hi in zip(y, t["accuracy"], t["high"]):
            ax.text(hi + 1.5, yi, f"{acc:.1f}", va="center", fontsize=8)
    axes[-1, 0].set_xlabel("accuracy (%), 95% Wilson interval")
    fig.tight_layout()
    return fig


def waterfall_figure(waterfall, title: str = ""):
    """The waterfall: the file's own score, each step's change with its interval, and the unexplained rest up to the
    reported figure (a line)."""
    import matplotlib.pyplot as plt

    w = waterfall.reset_index(drop=True)
    reported = float(w.loc[0, "to"])
    rows = w.iloc[1:]
    fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.5 * len(rows)))
    for i, (_, r) in enumerate(rows.iterrows()):
        y = len(rows) - 1 - i
        if r["from"] != r["from"]:  # a level (the file's own score): a bar from 0
            ax.barh(y, r["to"], color="#4c72b0", alpha=0.8)
            ax.errorbar(r["to"], y, xerr=[[r["to"] - r["low"]], [r["high"] - r["to"]]], fmt="none", ecolor="black",
                        capsize=3)
            label, end = f"{r['to']:.1f}", r["high"]
        else:
            left, change = r["from"], r["to"] - r["from"]
            color = "#c44e52" if r["step"] == "unexplained rest" else ("#55a868" if change >= 0 else "#dd8452")
            ax.barh(y, change, left=left, color=color, alpha=0.85)
            ax.errorbar(r["to"], y, xerr=[[max(0.0, change - r["low"])], [max(0.0, r["high"] - change)]], fmt="none",
                        ecolor="black", capsize=3)
            label, end = f"{change:+.1f} [{r['low']:+.1f}, {r['high']:+.1f}]", max(left, left + r["high"])
        ax.text(end + 1.5, y, label, va="center", fontsize=8)
    ax.axvline(reported, color="black", ls="--", lw=1)
    ax.text(reported, -0.75, f" reported {reported:.1f}", fontsize=8, va="bottom")
    ax.set_yticks(range(len(rows)), list(rows["step"])[::-1])
    ax.set_xlim(0, 100)
    ax.set_ylim(-0.8, len(rows) - 0.5)
    ax.set_xlabel("accuracy (%); bars: change per step, whiskers: its 95% interval")
    ax.set_title(title or "from the file's own score to the reported figure", fontsize=10)
    fig.tight_layout()
    return fig
