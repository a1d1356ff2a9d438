"""The headline of the paper-figures notebook (``notebooks/40_paper_figures.ipynb``): what it wrote and the
results of the runs it added as our rows, as its own ``results.json`` (``analysis.results.write_report``)."""
from __future__ import annotations

from pathlib import Path

from mmbench_lib.analysis.reader import RunError
from mmbench_lib.analysis.results import COLUMNS, collect, table_rows, write_report


def end_report(out_dir, papers: str, files: dict, our_runs) -> dict:
    """``<out_dir>/results.json``: one row per sub-run of ``our_runs`` (the results table of ``mmbench
    metrics``: n, accuracy, 95% interval, failed, n/a), titled with the tables and figures written."""
    tables = sorted(n for n, p in files.items() if str(p[0]).endswith(".csv"))
    figures = sorted(n for n, p in files.items() if str(p[0]).endswith(".png"))
    rows = []
    for run in our_runs:
        try:
            rows += table_rows(collect(run))
        except RunError as e:  # a run folder that cannot be read still gets its row, with the reason
            rows.append([Path(run).name, "?", str(e)[:80], "", "", "", "", "", "", ""])
    ours = f"our rows from {len(rows)} run(s) below" if rows else "no runs of ours added (runs = [], demo = False)"
    title = f"Paper tables and figures ({papers}): {len(tables)} tables and {len(figures)} figures in {out_dir}; {ours}"
    return write_report(out_dir, title, COLUMNS, rows, papers=papers, tables=tables, figures=figures,
                        our_runs=[str(r) for r in our_runs])
