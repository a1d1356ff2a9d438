"""A task's runs by setting and prompt method (notebook 21): the accuracy table, the per-group table and the chart
beside the task's published leaderboard, from official output files scored by the task's own module.

Each run's accuracy carries the suite's one 95% interval (``core.uncertainty``); the spread over the official random
fallback's seeds is reported in the table, not drawn as an interval. Our rows not comparable with the leaderboard's
(demo data, a subset, a random-weight model) say so as the heat-maps do (``not ranked: ...``), and the chance line
of each setting is its own (1 in 4 for four options, 1 in 10 for ten).

More: docs/modules.md, ``mmbench_lib/reports/settings.py``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from mmbench_lib import published  # noqa: E402
from mmbench_lib.analysis.reader import RunError, load_run  # noqa: E402
from mmbench_lib.analysis.results import random_weights  # noqa: E402
from mmbench_lib.core.datasource import describe  # noqa: E402
from mmbench_lib.core.uncertainty import proportion_interval  # noqa: E402

SETTING_ORDER = ("standard4", "standard10", "vision")


def _not_ranked(data: str, run_folder: Path) -> str:
    """Why a run is not comparable with the leaderboard's rows (``""`` when it is)."""
    why = [data] if data and data != "full split" else []
    try:
        if random_weights(load_run(run_folder)):
            why.append("random-weight model")
    except (RunError, OSError, ValueError):  # a given official file: no run folder to read
        pass
    return ", ".join(why)


def settings_table(task, files: Sequence[Path], fallback_seeds: int = 100) -> pd.DataFrame:
    """One row per official output file: model, setting, method, n, data, accuracy (%) with its 95% interval
    (``ci_low`` / ``ci_high``), chance (%, the mean of 1 / options), ``not_ranked``, the fallback count and the spread
    over ``fallback_seeds`` seeds of the random fallback, and the answer modes' counts."""
    rows = []
    for f in map(Path, files):
        items, s = task.module.score_responses(f, seeds=range(fallback_seeds))
        spread = s["fallback_seed_spread"] or {}
        made = f.parent.parent / "metrics.json"  # a run made here: the data label it recorded; a given file: its count
        data = (json.loads(made.read_text(encoding="utf-8")).get("data") if made.is_file() else None) or describe(
            {"source": str(f)}, s["overall"]["n"], declared=task.declared_size(None))
        n, k = s["overall"]["n"], s["overall"]["correct"]
        lo, hi = proportion_interval(k, n)
        options = [r.get("n_options") for r in items if r.get("n_options")]
        rows.append({"model": s["model"], "setting": s["setting"], "method": s["method"], "n": n, "data": data,
                     "accuracy": 100 * s["overall"]["accuracy"], "ci_low": None if lo is None else 100 * lo,
                     "ci_high": None if hi is None else 100 * hi,
                     "chance": 100 * sum(1 / o for o in options) / len(options) if options else math.nan,
                     "not_ranked": _not_ranked(data, f.parent.parent), "fallbacks": s["counts"]["fallbacks"],
                     "seed_mean": 100 * spread.get("mean", math.nan), "seed_sd": 100 * spread.get("sd", 0.0),
                     "seed_min": 100 * spread.get("min", math.nan), "seed_max": 100 * spread.get("max", math.nan),
                     **{f"mode_{k}": v for k, v in s["counts"]["modes"].items()}})
    table = pd.DataFrame(rows)
    return table.fillna({c: 0 for c in table.columns if c.startswith("mode_")})


def per_group_table(task, files: Sequence[Path]) -> pd.DataFrame:
    """Accuracy (%) per subject and discipline (the official ``Overall-<discipline>`` layout), one column per run."""
    per = []
    for f in map(Path, files):
        _items, s = task.module.score_responses(f, seeds=range(1))
        for name, v in s["official"].items():
            per.append({"run": f"{s['model']} {s['setting']}-{s['method']}", "group": name, "num": v["num"],
                        "acc": 100 * v["acc"]})
    return pd.DataFrame(per).pivot_table(index="group", columns="run", values="acc", sort=False)


def settings_figure(task, results: pd.DataFrame, published_models: Sequence[str]):
    """Each run's accuracy per setting and method (95% interval bars) beside the leaderboard's values of
    ``published_models`` (the task's first published table, its column per setting from ``Task.table_column``), with
    each setting's own chance line; our rows not comparable with the leaderboard's are labelled ``not ranked``."""
    name = task.published_tables[0]
    board = published.load(name).set_index("model")
    pub = []
    for m in published_models:
        for st in SETTING_ORDER:
            col = task.table_column(name, f"{st}-direct")
            if m in board.index and col in board.columns and pd.notna(board.loc[m, col]):
                pub.append({"model": f"{m} (leaderboard)", "setting": st, "method": "best", "accuracy": board.loc[m, col]})
    ours = results.assign(model=[m if not why else f"{m} [not ranked: {why}]"
                                 for m, why in zip(results["model"], results["not_ranked"])])
    both = pd.concat([ours[["model", "setting", "method", "accuracy", "ci_low", "ci_high"]], pd.DataFrame(pub)],
                     ignore_index=True)
    both["run"] = both["model"] + " " + both["method"]
    order = [s for s in SETTING_ORDER if s in set(both["setting"])]
    table = both.pivot_table(index="setting", columns="run", values="accuracy", sort=False, dropna=False).reindex(order)
    low = both.assign(d=both["accuracy"] - both["ci_low"]).pivot_table(index="setting", columns="run", values="d",
                                                                        sort=False, dropna=False).reindex(order)
    high = both.assign(d=both["ci_high"] - both["accuracy"]).pivot_table(index="setting", columns="run", values="d",
                                                                          sort=False, dropna=False).reindex(order)
    low, high = low.reindex(columns=table.columns), high.reindex(columns=table.columns)
    err = [[low[c].fillna(0).to_numpy(), high[c].fillna(0).to_numpy()] for c in table.columns]
    fig, ax = plt.subplots(figsize=(max(7, 1.3 * len(table.columns) + 3), 4.5))
    table.plot.bar(ax=ax, yerr=err, capsize=3, rot=0, width=0.8)
    chance = results.groupby("setting")["chance"].mean()
    for i, st in enumerate(order):  # each setting's own chance: 1 in 4 for four options, 1 in 10 for ten
        if st in chance and pd.notna(chance[st]):
            ax.hlines(chance[st], i - 0.45, i + 0.45, linestyles=":", colors="grey", lw=1)
    bars = [b for b in ax.containers if isinstance(b, matplotlib.container.BarContainer)]
    for b, col in zip(bars, table.columns):  # each run's value on its bar (0% is a 0, no value no label)
        ax.bar_label(b, [f"{v:.0f}" if pd.notna(v) else "" for v in table[col]], fontsize=7, padding=2)
    ns = ", ".join(str(int(v)) for v in sorted(set(results["n"])))
    ax.set_xlabel(f"setting (our runs: n = {ns} items per run; leaderboard: the full {task.declared_size(None):,})")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{task.title} by setting and prompt (dotted: chance in each setting)\nerror bars: 95% Wilson "
                 "intervals of our runs; the leaderboard's rows have none", fontsize=10)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig
