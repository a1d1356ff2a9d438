"""The headline of the paper-figures notebook (``notebooks/40_paper_figures.ipynb``): what it wrote and the
results of the runs it added as our rows, as the ``report`` section of its own ``results.json``
(``analysis.results.write_results``), which ``mmbench run`` prints at the end."""
from __future__ import annotations

from pathlib import Path

from mmbench_lib.analysis.reader import RunError
from mmbench_lib.analysis.results import COLUMNS, collect, table_rows, write_results


def _typed(row: list[str]) -> list:
    """A results-table row with its counts as ints and its accuracy as a number (``None``: n/a), so that the
    printed report aligns them."""
    num = {"n": int, "accuracy": float, "failed": int, "n/a": int}
    return [num[c](v) if c in num and v not in ("n/a", "") else (None if c in num else v) for c, v in zip(COLUMNS, row)]


def end_report(out_dir, papers: str, files: dict, our_runs) -> dict:
    """One row per sub-run of ``our_runs`` (the results table of ``mmbench metrics``: n, accuracy, 95%
    interval, failed, n/a), titled with the tables and figures written; returns the report section."""
    tables = sorted(n for n, p in files.items() if str(p[0]).endswith(".csv"))
    figures = sorted(n for n, p in files.items() if str(p[0]).endswith(".png"))
    rows = []
    for run in our_runs:
        try:
            rows += [_typed(r) for r in table_rows(collect(run))]
        except RunError as e:  # a run folder that cannot be read still gets its row, with the reason
            rows.append([Path(run).name, "?", str(e)[:80]] + [""] * (len(COLUMNS) - 3))
    ours = f"our rows from {len(rows)} run(s)" if rows else "no runs of ours added (runs = [], demo = False)"
    body = {"name": f"Paper tables and figures ({papers}): {len(tables)} tables and {len(figures)} figures in {out_dir}; {ours}",
            "columns": list(COLUMNS), "rows": rows, "notes": "accuracy and interval in %",
            "papers": papers, "tables": tables, "figures": figures, "our_runs": [str(r) for r in our_runs]}
    write_results(out_dir, report=body)
    return body
