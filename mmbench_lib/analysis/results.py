"""One ``results.json`` at the top of a run folder, covering all its sub-runs, and the results table
``mmbench run`` and ``mmbench metrics`` print (one row per sub-run, as lm-evaluation-harness prints
its tasks).

A sub-run is the folder itself or any folder below it with a ``metrics.json`` (the quickstart's
``seed__smollm2``, the generation notebook's ``random`` / ``smollm2+ocr``), read with
:func:`mmbench_lib.analysis.reader.load_run`. Each gets its whole metrics (schema in
:mod:`mmbench_lib.core.metrics`) and one headline entry (``summary``, the schema's entry keys):

* generation: the ``overall`` entry (``submission`` and no accuracy on a test split);
* ranking: all its scored questions pooled (question-weighted, 95% clustered bootstrap interval);
  ``scope`` names the group those dimensions make up (``All``, ``L2``, ...) or counts them.

``protocol`` is ``ranking`` or ``generation``, or ``generated letters`` for a SEED run whose recipe has
the model write the letter (a labelled non-paper protocol, :mod:`mmbench_lib.tasks.recipes`).
"""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from mmbench_lib.tasks.base import get_task, is_task
from mmbench_lib.tasks.recipes import RECIPES
from mmbench_lib.analysis.reader import RANKING, RunError, load_run
from mmbench_lib.core.metrics import ENTRY_KEYS, SCHEMA_VERSION, ci_fractions, entry
from mmbench_lib.core.store import METRICS, SHARDS, write_json_atomic

RESULTS = "results.json"
COLUMNS = ("run", "benchmark", "scope", "model", "protocol", "n", "accuracy", "95% interval", "failed", "n/a")


def sub_runs(folder) -> list[Path]:
    """The folder and the folders below it holding ``metrics.json`` (hidden folders and a sharded
    run's ``shards/`` skipped: the merge's metrics stand for them), in the order they finished (their
    metrics' modification times)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise RunError(f"{folder}: no such run folder")
    found = [p.parent for p in folder.rglob(METRICS)]
    found = [p for p in found if not any(part.startswith(".") or part == SHARDS for part in p.relative_to(folder).parts)]
    return sorted(found, key=lambda p: ((p / METRICS).stat().st_mtime_ns, str(p)))


def _ranking_summary(run) -> tuple[str, dict]:
    dims = run.metrics.get("per_dimension") or []
    total = {k: sum(d.get(k) or 0 for d in dims) for k in ("n", "correct", "failed", "n/a")}
    low, high = ci_fractions(run.samples.to_dict("records")) if total["n"] else (None, None)
    present = {d["dimension_id"] for d in dims}
    groups = get_task(run.benchmark).groups if is_task(run.benchmark) else {}
    scope = next((g for g, ids in groups.items() if set(ids) == present), f"{len(present)} dimensions")
    return scope, entry(total["correct"], total["n"], total["failed"], total["n/a"], low, high)


def _generation_summary(run) -> tuple[str, dict]:
    overall = run.metrics.get("overall")
    if overall:
        return "overall", {k: overall.get(k) for k in ENTRY_KEYS}
    counts = run.metrics.get("counts") or {}
    return "submission", entry(0, 0, counts.get("failed", 0)) | {"n": counts.get("ok", 0), "correct": None}


def _protocol(protocol: str, recipe) -> str:
    """``ranking`` / ``generation`` as the reader has it, except a SEED run whose recipe generates the
    letter (``lmms-eval-gen``, ``vlmevalkit-gen``; stored like a ranking run): ``generated letters``."""
    if protocol == RANKING and isinstance(recipe, str) and recipe in RECIPES \
            and RECIPES[recipe].generates:
        return "generated letters"
    return protocol


def run_result(run, top: Path) -> dict:
    """One sub-run's record: where, what, the headline entry and its whole metrics."""
    scope, summary = _ranking_summary(run) if run.protocol == RANKING else _generation_summary(run)
    rel = run.folder.resolve().relative_to(top.resolve()).as_posix()
    first = run.samples.iloc[0] if len(run.samples) else {}
    return {"run": top.name if rel == "." else rel, "benchmark": run.benchmark,
            "model": run.metrics.get("label") or first.get("model") or run.metrics.get("model"),
            "protocol": _protocol(run.protocol, first.get("recipe")), "recipe": first.get("recipe"), "split": run.metrics.get("split"),
            "scope": scope, "summary": summary, "metrics": run.metrics}


def collect(folder) -> dict:
    """The ``results.json`` body of a run folder: every sub-run's record (see the module doc)."""
    folder = Path(folder)
    return {"schema_version": SCHEMA_VERSION, "run_folder": str(folder),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "runs": [run_result(load_run(p), folder) for p in sub_runs(folder)]}


def write_results(folder) -> dict:
    """Collect the run folder's results and write them to ``<folder>/results.json``; returns them."""
    results = collect(folder)
    write_json_atomic(Path(folder) / RESULTS, results)
    return results


def read_results(folder) -> dict:
    """``results.json`` of a run folder, or the results collected now when it has none."""
    path = Path(folder) / RESULTS
    if path.is_file():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise RunError(f"{path}: not valid JSON ({e})") from None
    return collect(folder)


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}"


def table_rows(results: dict) -> list[list[str]]:
    """The table's cells (percentages with one decimal), one row per sub-run."""
    rows = []
    for r in results["runs"]:
        s = r["summary"]
        interval = "-" if s.get("ci_low") is None else f"{_pct(s['ci_low'])}-{_pct(s['ci_high'])}"
        rows.append([r["run"], r["benchmark"] or "?", r["scope"], str(r["model"]), r["protocol"], str(s["n"]),
                     _pct(s["accuracy"]), interval, str(s["failed"]), str(s["n/a"])])
    return rows


def format_table(results: dict) -> str:
    """The results as a Markdown table (accuracy and interval in %), as lm-eval prints its results."""
    rows = table_rows(results)
    if not rows:
        return f"no finished sub-run (no {METRICS}) in {results['run_folder']}"
    cells = [list(COLUMNS)] + rows
    widths = [max(3, *(len(row[i]) for row in cells)) for i in range(len(COLUMNS))]
    right = {"n", "accuracy", "95% interval", "failed", "n/a"}

    def line(row):
        return "|" + "|".join(c.rjust(w) if h in right else c.ljust(w) for c, w, h in zip(row, widths, COLUMNS)) + "|"

    rule = "|" + "|".join("-" * (w - 1) + (":" if h in right else "-") for w, h in zip(widths, COLUMNS)) + "|"
    return "\n".join([line(cells[0]), rule, *map(line, rows)])
