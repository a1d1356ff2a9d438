"""``mmbench compare RUN...``: runs side by side, and paired tests where they scored the same items.

More: docs/modules.md, ``mmbench_lib/analysis/compare.py``.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from mmbench_lib.analysis.reader import RunError, load_run, resolve_run
from mmbench_lib.analysis.results import protocol_of, result, run_result, sub_runs
from mmbench_lib.core.record import differences
from mmbench_lib.core.store import SHARDS, lock_holder
from mmbench_lib.core.uncertainty import compare_runs

RUN_COLUMNS = ("run", "model", "data", "benchmark", "protocol", "setting", "scope", "n", "accuracy %", "95% interval")
PAIR_COLUMNS = ("benchmark", "run a", "run b", "n common", "a %", "b %", "b - a", "95% interval", "only a right",
                "only b right", "McNemar p")


def find_folder(ref) -> Path:
    """A run folder: ``reader.resolve_run`` (a folder, else a run id or ``<id>/<sub-run>`` under ``outputs/``)."""
    return resolve_run(ref)


def compare_tables(refs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs table, pairs table) of the run folders ``refs`` (see the module doc); RunError when none has results."""
    folders: list[tuple[Path, Path]] = []
    for ref in refs:
        top = find_folder(ref)
        found = sub_runs(top) or [f for s in sorted((top / SHARDS).glob("*-of-*")) for f in sub_runs(s)]  # unmerged
        if not found:
            raise RunError(f"{ref}: no finished run (no metrics.json) in {top}")
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
        res = result(r)  # the one result: value, n, interval and label as results.json and `metrics` give them
        accuracy, interval = res.cells()
        rows.append({"run": name, "model": str(r["model"]), "data": r["data"], "benchmark": r["benchmark"],
                     "protocol": protocol_of(r), "setting": r.get("setting") or "", "scope": r["scope"],
                     "n": _n(res.n, folder, run), "accuracy %": accuracy,
                     "95% interval": "n/a" if interval == "-" else interval})
        runs.append((name, run))
    pairs, notes = [], []
    for i, (name_a, a) in enumerate(runs):
        for name_b, b in runs[i + 1:]:
            if a.benchmark != b.benchmark or a.protocol != b.protocol:
                continue
            why = unpairable(a, b)
            if why:
                differ = "; ".join(differences(a.record, b.record))  # every field in which the two runs differ
                notes.append(f"{name_a} and {name_b} not paired: {why}" + (f" (they differ in {differ})" if differ else ""))
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
    pairs = pd.DataFrame(pairs, columns=list(PAIR_COLUMNS))
    pairs.attrs["notes"] = notes
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS)), pairs


def _n(n, folder: Path, run):
    """The n of a finished run; a run being written (its lock held) shows its metrics' n and the rows stored now."""
    holder = lock_holder(folder)
    if holder is None:
        return n
    return f"{n} (being written: {len(run.samples)} rows now)"


def unpairable(a, b) -> str | None:
    """Why two runs of one benchmark cannot be paired item by item (``None`` when they can): a data file both
    manifests hash with different contents, or a common item whose gold answer differs."""
    ha, hb = a.manifest.get("data_sha256") or {}, b.manifest.get("data_sha256") or {}
    for key in sorted(set(ha) & set(hb)):
        if ha[key] != hb[key]:
            return f"their {key} files differ (sha256 {str(ha[key])[:12]} vs {str(hb[key])[:12]})"
    ga = dict(zip(a.samples["id"], a.samples["answer"]))
    gb = dict(zip(b.samples["id"], b.samples["answer"]))
    differ = sorted(i for i in set(ga) & set(gb) if ga[i] is not None and gb[i] is not None and str(ga[i]) != str(gb[i]))
    if differ:
        return f"{len(differ)} common item(s) have different gold answers, e.g. {differ[0]!r}: {ga[differ[0]]!r} vs {gb[differ[0]]!r}"
    return None
