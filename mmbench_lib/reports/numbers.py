"""A report's numbers through the one result model (``analysis.results.Result``: value, n, 95% interval, label).

A report (notebooks 50-52) shows a run's accuracy on all its items or on some of them (the items every protocol
scored, a group's items, the items complete under every option order). :func:`of_run` is the run's own result, as
``results.json``, ``mmbench metrics`` and ``mmbench compare`` show it; :func:`of_rows` the same model over some of
its item rows (the one interval rule, ``core.uncertainty``, clusters from the rows); :func:`interval_cell` prints an
interval as every table does (``Result.cells``). Where the rows are all the run's scored rows, the two agree
(``tests/reports/test_numbers.py``).

More: docs/modules.md, ``mmbench_lib/reports/numbers.py``.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from mmbench_lib.analysis.reader import load_run
from mmbench_lib.analysis.results import Result, result, run_result
from mmbench_lib.core.metrics import ci_fractions
from mmbench_lib.core.uncertainty import SCORED


def of_run(folder) -> Result:
    """A run's result (``analysis.results.result`` of its record): the value, n, interval and label every output
    shows for it."""
    run = load_run(Path(folder))
    return result(run_result(run, run.folder))


def of_rows(rows: pd.DataFrame, label: str = "") -> Result:
    """The result of scored item rows (``id``, ``correct``, ``cluster``; rows whose ``status`` is not ok left out):
    the accuracy, n and the one 95% interval; ``label`` as given (the run's, :func:`of_run`)."""
    if "status" in rows:
        rows = rows[rows["status"] == SCORED]
    rows = rows[rows["correct"].notna()]
    n = len(rows)
    if not n:
        return Result(None, 0, None, None, label)
    cluster = rows["cluster"] if "cluster" in rows else rows["id"]
    ok = pd.DataFrame({"id": rows["id"], "correct": rows["correct"].astype(bool), "cluster": cluster, "status": SCORED})
    low, high = ci_fractions(ok.to_dict("records"))
    return Result(int(ok["correct"].sum()) / n, n, low, high, label)


def interval_cell(low, high) -> str | None:
    """An interval (fractions) as the tables print it (``Result.cells``: ``14.9-38.8``); None when there is none."""
    if low is None or pd.isna(low):
        return None
    return Result(None, 0, float(low), float(high), "").cells()[1]


def percent(value) -> float | None:
    """A fraction as a table's percent cell, one decimal (None when absent)."""
    return None if value is None or pd.isna(value) else round(100 * float(value), 1)
