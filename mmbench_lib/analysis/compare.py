"""``mmbench compare RUN...``: runs side by side, and paired tests where they scored the same items.

Each ``RUN`` is a run folder at any level (a run's top folder, one of its sub-runs, one shard), given as a path
(relative to the current directory) or a run id under ``outputs/``. :func:`compare_tables` returns two tables:

* one row per sub-run (:func:`mmbench_lib.analysis.results.run_result`): run, model, data source (demo data,
  full split or a subset with its n), benchmark, scope, n, accuracy and its 95% interval in % (the one rule of
  :mod:`mmbench_lib.core.uncertainty`);
* one row per pair of different sub-runs of one benchmark that share scored items: n common items, both
  accuracies on them, the difference (b - a) with Newcombe's paired 95% interval, the discordant counts and
  McNemar's exact p (:func:`mmbench_lib.core.uncertainty.compare_runs`). A folder given twice is one run.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from mmbench_lib.analysis.reader import RunError, load_run, resolve_run
from mmbench_lib.analysis.results import data_source, run_result, sub_runs
from mmbench_lib.core.store import SHARDS
from mmbench_lib.core.uncertainty import compare_runs

RUN_COLUMNS = ("run", "model", "data", "benchmark", "scope", "n", "accuracy %", "95% interval")
PAIR_COLUMNS = ("benchmark", "run a", "run b", "n common", "a %", "b %", "b - a", "95% interval", "only a right",
                "only b right", "McNemar p")


def find_folder(ref) -> Path:
    """A run folder: ``reader.resolve_run`` (a folder, else a run id or ``<id>/<sub-run>`` under ``outputs/``)."""
    return resolve_run(ref)


def _pct(v, digits: int = 1) -> str:
    return "n/a" if v is None else f"{100 * v:.{digits}f}"


def compare_tables(refs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs table, pairs table) of the run folders ``refs`` (see the module doc); RunError when none has results."""
    folders: list[tuple[Path, Path]] = []
    for ref in refs:
        top = find_folder(ref)
        found = sub_runs(top) or [f for s in sorted((top / SHARDS).glob("*-of-*")) for f in sub_runs(s)]  # unmerged
        for f in found:
            if f.resolve() not in [x.resolve() for x, _ in folders]:
                folders.append((f, top))
    if not folders:
        raise RunError(f"no finished run (no metrics.json) in {', '.join(map(str, refs))}")
    runs, rows = [], []
    for folder, top in folders:
        run = load_run(folder)
        r = run_result(run, top)
        name = top.name if r["run"] == top.name else f"{top.name}/{r['run']}"
        s = r["summary"]
        interval = "n/a" if s.get("ci_low") is None else f"{_pct(s['ci_low'])}-{_pct(s['ci_high'])}"
        rows.append({"run": name, "model": str(r["model"]), "data": data_source(run), "benchmark": r["benchmark"],
                     "scope": r["scope"], "n": s["n"], "accuracy %": _pct(s["accuracy"]), "95% interval": interval})
        runs.append((name, run))
    pairs = []
    for i, (name_a, a) in enumerate(runs):
        for name_b, b in runs[i + 1:]:
            if a.benchmark != b.benchmark or a.protocol != b.protocol:
                continue
            try:
                c = compare_runs(a.samples.to_dict("records"), b.samples.to_dict("records"))
            except ValueError:  # no common scored item: nothing to pair
                continue
            pairs.append({"benchmark": a.benchmark, "run a": name_a, "run b": name_b, "n common": c["n"],
                          "a %": f"{c['accuracy_a']:.1f}", "b %": f"{c['accuracy_b']:.1f}",
                          "b - a": f"{c['difference']:+.1f}", "95% interval": f"{c['low']:+.1f} to {c['high']:+.1f}",
                          "only a right": c["only_a_correct"], "only b right": c["only_b_correct"],
                          "McNemar p": f"{c['mcnemar_exact_p']:.3g}"})
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS)), pd.DataFrame(pairs, columns=list(PAIR_COLUMNS))
