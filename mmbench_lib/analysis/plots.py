"""Figures: per-dimension accuracy bars. Each figure can be saved as PNG and SVG."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd


def dimension_bars(table: pd.DataFrame, runs: list[str], title: str = "", random_col: str | None = "random (expected)"):
    """Grouped horizontal bars: one group per dimension, one bar per run; random as a dashed line."""
    labels = [f"{int(d)}. {n}" for d, n in zip(table["dimension_id"], table["dimension"])]
    n_runs = len(runs)
    height = 0.8 / max(n_runs, 1)
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(labels) * max(1, n_runs / 2) + 1.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, run in enumerate(runs):
        ys = [k + (i - (n_runs - 1) / 2) * height for k in range(len(labels))]
        ax.barh(ys, table[run].fillna(0), height=height, label=run, color=colors[i % len(colors)])
    if random_col and random_col in table:
        for k, v in enumerate(table[random_col]):
            if pd.notna(v):
                ax.plot([v, v], [k - 0.45, k + 0.45], ls="--", color="grey", lw=1, label="random (expected)" if k == 0 else None)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("accuracy (%)")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def save(fig, out_dir, name: str) -> list[Path]:
    """Save ``fig`` as ``<out_dir>/figures/<name>.png`` and ``.svg``; returns the paths."""
    folder = Path(out_dir) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.png", folder / f"{name}.svg"]
    fig.savefig(paths[0], dpi=120)
    fig.savefig(paths[1])
    return paths


def group_bars(table: pd.DataFrame, runs: list[str], title: str = ""):
    """Horizontal bars of accuracy per group (rows of ``table``, indexed by group) for each run column."""
    t = table[list(runs)]
    ax = t.plot.barh(figsize=(8, 0.6 * len(t) * max(1, len(runs) / 2) + 1.5))
    ax.set_xlim(0, 100)
    ax.set_xlabel("accuracy (%)")
    ax.invert_yaxis()
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower right")
    fig = ax.get_figure()
    fig.tight_layout()
    return fig
