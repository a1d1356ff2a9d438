"""One ``results.json`` at the top of a run folder, covering all its sub-runs, and the results table
``mmbench run`` and ``mmbench metrics`` print (one row per sub-run, as lm-evaluation-harness prints
its tasks).

A sub-run is the folder itself or any folder below it with a ``metrics.json`` (the quickstart's
``seed__smollm2``, the generation notebook's ``random`` / ``smollm2+ocr``), read with
:func:`mmbench_lib.analysis.reader.load_run`. Each gets its whole metrics (schema in
:mod:`mmbench_lib.core.metrics`) and one headline entry (``summary``, the schema's entry keys):

* generation: the ``overall`` entry (``submission`` and no accuracy on a test split);
* ranking: all its scored questions pooled (question-weighted, the one 95% interval of ``core.uncertainty``);
  ``scope`` names the group those dimensions make up (``All``, ``L2``, ...) or counts them.

More: docs/modules.md, ``mmbench_lib/analysis/results.py``.
"""
from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass
from pathlib import Path

from mmbench_lib.tasks.base import get_task, is_task
from mmbench_lib.tasks.recipes import RECIPES
from mmbench_lib.analysis.reader import RANKING, RunError, display_model, load_run, resolve_run
from mmbench_lib.core.datasource import describe
from mmbench_lib.core.record import flat_params
from mmbench_lib.core.metrics import ENTRY_KEYS, SCHEMA_VERSION, ci_fractions, entry
from mmbench_lib.core.store import METRICS, SHARDS, write_json_atomic

RESULTS = "results.json"
COLUMNS = ("run", "benchmark", "scope", "model", "data", "protocol", "setting", "n", "accuracy", "95% interval",
           "failed", "n/a", "truncated")


def sub_runs(folder) -> list[Path]:
    """The folder and the folders below it holding ``metrics.json`` (hidden folders and a sharded
    run's ``shards/`` skipped: the merge's metrics stand for them), in the order they finished (their
    metrics' modification times)."""
    folder = resolve_run(folder)
    found = [p.parent for p in folder.rglob(METRICS)]
    found = [p for p in found if not any(part.startswith(".") or part == SHARDS for part in p.relative_to(folder).parts)]
    return sorted(found, key=lambda p: ((p / METRICS).stat().st_mtime_ns, str(p)))


def one_run(ref) -> Path:
    """The one run ``ref`` names (``reader.resolve_run``: run id, folder, ``outputs/<id>``): the folder itself when it
    is a run, its only sub-run when it is a top folder holding one (a generation run's ``<id>/<label>``); RunError,
    one line naming them, when it holds several."""
    folder = resolve_run(ref)
    if (folder / METRICS).is_file():
        return folder
    found = sub_runs(folder)
    if len(found) > 1:
        names = [p.relative_to(folder).as_posix() for p in found]
        raise RunError(f"{ref}: a folder of {len(found)} sub-runs {names[:8]}: name one of them, e.g. {ref}/{names[0]}")
    return found[0] if found else folder


def data_source(run) -> str:
    """What data a run scored (``core.datasource.describe``): ``demo data``, ``full split`` or ``subset (n=12)``,
    from the run's manifest (its ``config``, item count, and whether the folder is one shard)."""
    man = run.manifest or {}
    config = flat_params(man) or {"data": man.get("data") or {}}
    one_shard = (config.get("num_shards") or 1) > 1 and Path(run.folder).parent.name == SHARDS
    n = man.get("n_items") or (len(run.samples) if run.files else None)
    bench = man.get("benchmark") or config.get("benchmark")
    declared = get_task(bench).declared_size(config.get("split")) if is_task(bench) else 0
    return describe(config, n, one_shard, declared)


def setting(run) -> str:
    """What else makes this run's numbers another run's (``""`` when nothing): the split where the task has several
    (MMMU-Pro's ``standard4-direct`` / ``standard10-direct`` / ``vision-cot`` ask other questions with other gold
    answers; MMMU's ``validation`` / ``dev``) and the option order (``rot-1``: CircularEval's rotation 1;
    ``perm-3``: options permuted with seed 3), from the run's metrics and manifest."""
    man = run.manifest or {}
    config = flat_params(man) or {}
    bench = run.benchmark or man.get("benchmark")
    parts = []
    split = run.metrics.get("split") or config.get("split") or man.get("split")
    if is_task(bench) and len(get_task(bench).splits) > 1 and split:
        parts.append(str(split))
    if config.get("rotation"):
        parts.append(f"rot-{config['rotation']}")
    if config.get("permutation_seed") is not None:
        parts.append(f"perm-{config['permutation_seed']}")
    return ", ".join(parts)


def random_weights(run) -> bool:
    """Whether the run's model has random weights (a ``tiny-*`` test model, or a model record that says so): its
    numbers are not a model's and are never ranked."""
    man = run.manifest or {}
    return "random-weight" in json.dumps(man.get("model") or {}, default=str) or \
        str(flat_params(man).get("model", "")).startswith("tiny-")


@dataclass(frozen=True)
class Result:
    """A run's headline as every output shows it: ``value`` (fraction, None when nothing was scored), ``n`` scored
    items, the 95% interval ``low``-``high`` (fractions, ``core.uncertainty``'s one rule) and ``label`` (model,
    protocol, setting, data: what tells two runs apart)."""

    value: float | None
    n: int
    low: float | None
    high: float | None
    label: str

    def cells(self) -> tuple[str, str]:
        """(accuracy, interval) in %, one decimal, as the tables print them (``n/a`` / ``-`` when absent)."""
        return _pct(self.value), "-" if self.low is None else f"{_pct(self.low)}-{_pct(self.high)}"


def result(record: dict) -> Result:
    """THE result of a sub-run record (``run_result``; a ``results.json`` entry): every output reads it here."""
    s = record.get("summary") or {}
    return Result(s.get("accuracy"), int(s.get("n") or 0), s.get("ci_low"), s.get("ci_high"),
                  record.get("label") or label(record))


def protocol_of(record: dict) -> str:
    """The record's protocol with what decides its answers: a ranking run's recipe (``ranking (seed1-ppl)``), a
    generation run's prompt mode (``generation (cot)``, from ``run_result``)."""
    protocol, recipe = str(record.get("protocol")), record.get("recipe")
    if isinstance(recipe, str) and recipe and recipe not in protocol and not protocol.startswith("generation"):
        reduction = record.get("reduction") or (record.get("metrics") or {}).get("reduction")
        return f"{protocol} ({recipe}, {reduction})" if reduction else f"{protocol} ({recipe})"
    return protocol


def label(record: dict) -> str:
    """``model [protocol, setting, data]``: the one label of a sub-run record (``full split`` left out)."""
    how = [protocol_of(record)]
    how += [x for x in (record.get("setting"), record.get("data")) if x and x != "full split"]
    return f"{record.get('model')} [{', '.join(how)}]"


def _ranking_summary(run) -> tuple[str, dict]:
    dims = run.metrics.get("per_dimension") or []
    total = {k: sum(d.get(k) or 0 for d in dims) for k in ("n", "correct", "failed", "n/a")}
    low, high = ci_fractions(run.samples.to_dict("records")) if total["n"] else (None, None)
    present = {d["dimension_id"] for d in dims}
    groups = get_task(run.benchmark).groups if is_task(run.benchmark) else {}
    scope = next((g for g, ids in groups.items() if set(ids) == present), f"{len(present)} dimensions")
    if run.metrics.get("scored") is False:  # answers withheld (a test split): the run wrote a submission file
        scope = "submission"
    return scope, entry(total["correct"], total["n"], total["failed"], total["n/a"], low, high)


def _generation_summary(run) -> tuple[str, dict]:
    overall = run.metrics.get("overall")
    if overall:
        return "overall", {k: overall.get(k) for k in ENTRY_KEYS}
    counts = run.metrics.get("counts") or {}
    return "submission", entry(0, 0, counts.get("failed", 0)) | {"n": counts.get("ok", 0), "correct": None}


def _protocol(protocol: str, recipe, mode: str | None = None) -> str:
    """``ranking`` as the reader has it, ``generated letters`` for a SEED run whose recipe generates the
    letter (``lmms-eval-gen``, ``vlmevalkit-gen``; stored like a ranking run), ``generation (<mode>)`` for a
    generation run (``mode``: its prompt mode; runs before modes were ``official``)."""
    if protocol == RANKING and isinstance(recipe, str) and recipe in RECIPES \
            and RECIPES[recipe].generates:
        return "generated letters"
    if protocol == RANKING:
        return protocol
    return f"{protocol} ({mode or 'official'})"


def fallback_note(run) -> str | None:
    """Why the run's batched generation fell back to one request at a time (its manifest's model record,
    ``generation.mode``), or None when it did not."""
    gen = ((run.manifest or {}).get("model") or {}).get("generation") or {}
    if isinstance(gen, dict) and "fallback" in str(gen.get("mode", "")):
        return str(gen.get("reason") or "no reason recorded")
    return None


def truncation_rate(metrics: dict) -> float | None:
    """The share of a generation run's answered items whose response stopped at the token budget (None: ranking)."""
    counts = metrics.get("counts") or {}
    if "truncated" not in counts or not counts.get("ok"):
        return None
    return counts["truncated"] / counts["ok"]


def run_result(run, top: Path) -> dict:
    """One sub-run's record: where, what, the headline entry and its whole metrics."""
    scope, summary = _ranking_summary(run) if run.protocol == RANKING else _generation_summary(run)
    rel = run.folder.resolve().relative_to(top.resolve()).as_posix()
    first = run.samples.iloc[0] if len(run.samples) else {}
    fallback = fallback_note(run)
    protocol = _protocol(run.protocol, first.get("recipe"), run.metrics.get("prompt_mode"))
    protocol += "".join(f", {step}" for step in run.metrics.get("steps") or [])  # e.g. thinking trace removed
    model = display_model(run.manifest, run.metrics, run.metrics.get("label") or first.get("model")
                          or run.metrics.get("model"))
    record = {"run": top.name if rel == "." else rel, "benchmark": run.benchmark,
              "model": f"{model} (random weights)" if random_weights(run) else model, "data": data_source(run),
              "protocol": protocol + (", one at a time" if fallback else ""), "setting": setting(run),
              "recipe": first.get("recipe"), "reduction": run.metrics.get("reduction")}
    return {**record, "label": label(record), "generation_fallback": fallback, "split": run.metrics.get("split"),
            "scope": scope, "summary": summary, "truncation_rate": truncation_rate(run.metrics),
            "data_revision": (run.manifest or {}).get("data_revision") or (run.manifest or {}).get("data_sha256"),
            "failures": failure_reasons(run.samples),
            "all_failed_dimensions": all_failed_dimensions(run.samples), "metrics": run.metrics}


def _reason(error) -> str:
    """A failure's reason with what differs from item to item taken out: the leading ``item '<id>', ``,
    file paths (``<path>``) and numbers of 4+ digits (``<n>``); first line, at most 200 characters."""
    text = " ".join(str(error or "").splitlines()[:1])
    text = re.sub(r"^item '[^']*',?\s*", "", text)
    text = re.sub(r"'?(?:[A-Za-z]:)?/[^\s':,;)]+'?", "<path>", text)
    text = re.sub(r"\d{4,}", "<n>", text)
    return text[:200] or "no reason recorded"


def failure_reasons(samples, top: int = 10) -> list[dict]:
    """The failed items of a sub-run grouped by reason (the rows' ``error`` as :func:`_reason` reduces
    it): ``[{"reason", "n", "example_id"}, ...]``, most frequent first, at most ``top`` groups (the rest
    as one ``"(other reasons)"`` group); the full messages stay in ``predictions.jsonl``."""
    if not len(samples) or "status" not in samples or "error" not in samples:
        return []
    failed = samples[samples["status"] == "failed"]
    groups: dict[str, list] = {}
    for _, r in failed.iterrows():
        reason = _reason(r.get("error"))
        groups.setdefault(reason, []).append(str(r.get("id")))
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    first = {}  # each group's first message whole (paths kept): what a failure line shows
    for _, r in failed.iterrows():
        first.setdefault(_reason(r.get("error")), re.sub(r"^item '[^']*',?\s*", "",
                                                        " ".join(str(r.get("error") or "").splitlines()[:1]))[:300])
    out = [{"reason": k, "n": len(v), "example_id": v[0], "example": first[k]} for k, v in ranked[:top]]
    rest = ranked[top:]
    if rest:
        out.append({"reason": "(other reasons)", "n": sum(len(v) for _, v in rest), "example_id": rest[0][1][0]})
    return out


def all_failed_dimensions(samples) -> list[dict]:
    """The dimensions (subjects, categories) of a sub-run in which every item failed, e.g. every video
    question of a SEED v1 run whose frames were not found: ``[{"dimension", "n", "reason"}, ...]``."""
    if not len(samples) or "status" not in samples or "dimension" not in samples:
        return []
    out = []
    for dim, g in samples.groupby("dimension", sort=True):
        if len(g) and (g["status"] == "failed").all():
            out.append({"dimension": str(dim), "n": len(g), "reason": _reason(g["error"].iloc[0])})
    return out


def _shown(group: dict) -> str:
    """A failure group's reason as a line shows it: the example's own message where the reason had its paths or
    numbers taken out (``file not found: /data/x/1.png``, not ``<path>``)."""
    reason = group["reason"]
    return group.get("example") or reason if ("<path>" in reason or "<n>" in reason) else reason


def failure_problem(results: dict, max_failed: float | None = None) -> str | None:
    """One line when a run's failures make its numbers untrustworthy, else ``None``: every item of a
    sub-run failed; with ``max_failed`` (a fraction in [0, 1]) more than that share of its items failed;
    without it, every item of one kind failed (all the items of a dimension, e.g. every video question),
    which would leave a headline number over the other kinds only. Giving ``max_failed`` is asking for
    partial runs: then only the share counts. The line gives the counts and the reasons with their counts
    (``results["runs"][i]["failures"]``)."""
    for r in results.get("runs", []):
        s = r.get("summary") or {}
        failed, n = s.get("failed") or 0, (s.get("n") or 0) + (s.get("failed") or 0)
        if not failed:
            continue
        why = "; ".join(f"{g['n']} x {_shown(g)} (e.g. {g['example_id']})" for g in r.get("failures") or [])
        if failed == n or (max_failed is not None and failed / n > max_failed):
            limit = "every item" if failed == n else f"more than max_failed={max_failed:g} of the items"
            return f"run {r['run']}: {failed} of {n} items failed ({limit}): {why or 'see predictions.jsonl'}"
        dims = r.get("all_failed_dimensions") or []
        if max_failed is None and dims:
            named = ", ".join(f"{d['dimension']} ({d['n']})" for d in dims[:6]) + (" ..." if len(dims) > 6 else "")
            return (f"run {r['run']}: every item of {len(dims)} dimension(s) failed: {named}; the headline covers the "
                    f"others only ({why}); fix the data, or accept a partial run with --max-failed FRACTION")
    return None


def collect(folder) -> dict:
    """The ``results.json`` body of a run folder: every sub-run's record (see the module doc)."""
    folder = resolve_run(folder)
    return {"schema_version": SCHEMA_VERSION, "run_folder": str(folder),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "runs": [run_result(load_run(p), folder) for p in sub_runs(folder)]}


def write_results(folder, report: dict | None = None) -> dict:
    """Collect the run folder's results and write them to ``<folder>/results.json``; returns them.
    ``report``: a report notebook's headline (``reports.subruns.headline``: name, columns, rows), kept
    under ``report`` (and carried over when the results are collected again)."""
    results = collect(folder)
    if report is None:
        try:
            report = json.loads((Path(folder) / RESULTS).read_text(encoding="utf-8")).get("report")
        except (OSError, ValueError, AttributeError):
            report = None
    if report is not None:
        results["report"] = report
    write_json_atomic(Path(folder) / RESULTS, results)
    return results


def read_results(folder) -> dict:
    """``results.json`` of a run folder, or the results collected now when it has none."""
    path = resolve_run(folder) / RESULTS
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
        accuracy, interval = result(r).cells()
        rows.append([r["run"], r["benchmark"] or "?", r["scope"], str(r["model"]), r.get("data") or "?", protocol_of(r),
                     r.get("setting") or "", str(s["n"]), accuracy, interval, str(s["failed"]), str(s["n/a"]),
                     "-" if r.get("truncation_rate") is None else f"{_pct(r['truncation_rate'])}%"])
    return rows


def format_table(results: dict) -> str:
    """The results as a Markdown table (accuracy and interval in %), as lm-eval prints its results."""
    rows = table_rows(results)
    if not rows:
        if results.get("report"):  # a report whose sub-runs all live elsewhere (reused): its headline says it all
            return format_report(results)
        return f"no finished sub-run (no {METRICS}) in {results['run_folder']}"
    cells = [list(COLUMNS)] + rows
    widths = [max(3, *(len(row[i]) for row in cells)) for i in range(len(COLUMNS))]
    right = {"n", "accuracy", "95% interval", "failed", "n/a", "truncated"}

    def line(row):
        return "|" + "|".join(c.rjust(w) if h in right else c.ljust(w) for c, w, h in zip(row, widths, COLUMNS)) + "|"

    rule = "|" + "|".join("-" * (w - 1) + (":" if h in right else "-") for w, h in zip(widths, COLUMNS)) + "|"
    notes = [f"\n{r['run']}: batched generation fell back to one request at a time: {r['generation_fallback']}"
             for r in results["runs"] if r.get("generation_fallback")]
    return "\n".join([line(cells[0]), rule, *map(line, rows)]) + "".join(notes)


def _report_cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.1f}"
    return str(v)


def format_report(results: dict) -> str:
    """A report notebook's headline (``results["report"]``) as a Markdown table under its name; empty
    when the results have none."""
    report = results.get("report")
    if not report:
        return ""
    cells = [[str(c) for c in report["columns"]]] + [[_report_cell(v) for v in row] for row in report["rows"]]
    widths = [max(3, *(len(row[i]) for row in cells)) for i in range(len(cells[0]))]
    rows = report["rows"]
    right = [bool(rows) and all(row[i] is None or (isinstance(row[i], (int, float)) and not isinstance(row[i], bool))
                                for row in rows) for i in range(len(widths))]

    def line(row):
        return "|" + "|".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)) + "|"

    rule = "|" + "|".join("-" * (w - 1) + (":" if r else "-") for w, r in zip(widths, right)) + "|"
    out = [f"{report['name']}:", line(cells[0]), rule, *map(line, cells[1:])]
    if report.get("notes"):
        out.append(report["notes"])
    return "\n".join(out)
