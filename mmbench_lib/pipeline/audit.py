"""Reproduction audit: the same responses re-scored under named rule sets, and the gap to a reported number.

Inputs (:func:`read_items`, the format told by the file): the official ``<Subject>/output.json`` folders
(read as ``score-responses`` reads them), lmms-eval sample logs (``samples_<task>_*.jsonl`` rows with
``doc_id`` / ``doc`` / ``resps``), VLMEvalKit prediction files (``.tsv`` / ``.xlsx`` / ``.json`` with ``index``
/ ``prediction`` / ``answer``), and a plain ``{id, response}`` JSONL whose questions come from ``gold`` (another
file of the formats above). The rules are the task's (:mod:`mmbench_lib.tasks.audits`).

:func:`audit` gives the rule-set table (n, accuracy, Wilson interval), the items each pair of rule sets
disagrees on, paired tests (Newcombe interval, McNemar), response statistics and, with ``reported``, the
waterfall (:func:`waterfall`). A judge is a hook (``judge(item) -> bool``), off unless given.
"""
from __future__ import annotations

import inspect
import io
import json
import re
import warnings
from itertools import combinations
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from mmbench_lib.core.items import DataError, read_utf8
from mmbench_lib.core.jsonl import read_rows
from mmbench_lib.core.paths import find_run, outputs_root
from mmbench_lib.core.uncertainty import compare_runs, proportion_interval
from mmbench_lib.tasks.mmmu_official import read_output_json as _read_output_json
from mmbench_lib.pipeline import audit_inputs as checks
from mmbench_lib.tasks import peer_rules
from mmbench_lib.tasks.copies.tables import hub_snapshot
from mmbench_lib.tasks.audits import audit_rules
from mmbench_lib.tasks.base import get_task
from mmbench_lib.tasks.thinking import split_trace

FORMATS = ("official-folders", "lmms-eval", "vlmevalkit", "plain-jsonl")
#: response tokens counted as word pieces (runs of letters/digits, or single other characters): the model's
#: tokenizer is not known from a file
_TOKEN = re.compile(r"\w+|[^\w\s]")
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER_IS = re.compile(r"(?i)(?:answer\s+is|答案[是为])[:：\s]*[(（]?([A-Za-z0-9.\-]+)")  # CMMMU: 答案是 / 答案为


def _jsonl(path: Path) -> list[dict]:
    rows = [row for _n, row in read_rows(path)]  # core.jsonl: bounded, one line per bad line
    if not rows:
        raise DataError(str(path), "no rows")
    return rows


def _table(path: Path) -> list[dict]:
    """A VLMEvalKit file as rows (``.tsv``, ``.xlsx`` through openpyxl, ``.json`` records)."""
    if path.suffix == ".xlsx":
        try:
            import openpyxl  # noqa: F401  (pandas' engine for .xlsx)
        except ImportError:
            raise DataError(str(path), "reading .xlsx needs openpyxl (pip install openpyxl), or give the .tsv") from None
        df = pd.read_excel(path)
    elif path.suffix == ".tsv":
        text = read_utf8(path).replace("\r\n", "\n")  # Windows line endings end lines; a lone \r is text
        df = pd.read_csv(io.StringIO(text), sep="\t", keep_default_na=False, na_values=[""], lineterminator="\n",
                         dtype={"answer": str, "prediction": str, "id": str})
    else:
        data = json.loads(read_utf8(path))
        df = pd.DataFrame(data if isinstance(data, list) else [])
    return df.to_dict("records")


def detect(path, benchmark: str | None = None) -> str:
    """The format of ``path`` (one of :data:`FORMATS`); DataError naming what was expected otherwise. The task's
    audit module (``benchmark``) recognises its official output first (``official_format``)."""
    path = Path(path)
    rules = audit_rules(benchmark) if benchmark else None
    official = getattr(rules, "OFFICIAL_FILES", "a folder of <Subject>/output.json")
    expected = (f"{official}, an lmms-eval samples_<task>_*.jsonl (doc_id, doc, resps), "
                "a VLMEvalKit .tsv/.xlsx/.json (index, prediction, answer) or a JSONL of {id, response}")
    if rules is not None and hasattr(rules, "official_format") and (path.is_dir() or path.is_file()):
        if rules.official_format(path):
            return "official-folders"
    elif path.is_dir() and (rules is None or hasattr(rules, "from_official")) and \
            (any(path.glob("*/output.json")) or any(path.glob("official/*/output.json"))):
        return "official-folders"  # a run of this suite too (a part without from_official reads no such folder)
    if path.is_dir():
        raise DataError(str(path), f"not an official output here; expected {expected}")
    if not path.is_file():
        raise DataError(str(path), "file or folder not found")
    if path.suffix in (".tsv", ".xlsx") or (path.suffix == ".json" and read_utf8(path).lstrip().startswith("[")):
        return "vlmevalkit"
    if path.suffix == ".jsonl":
        first = _jsonl(path)[0]
        if {"doc_id", "doc", "resps"} <= set(first):
            return "lmms-eval"
        if {"id", "response"} <= set(first):
            return "plain-jsonl"
        raise DataError(str(path), f"line 1 has fields {sorted(first)[:8]}; expected {expected}")
    raise DataError(str(path), f"unknown kind of file; expected {expected}")


def read_items(path, benchmark: str, gold: Sequence[dict] | None = None,
               notes: list[str] | None = None) -> tuple[list[dict], str]:
    """The items of one file and its format, checked (``audit_inputs``: the file of this benchmark, one row per id,
    the raw response or the item marked, gold answers and question types). ``gold``: items with the questions, for
    a plain JSONL. ``notes`` collects what was tolerated and counted (one line each)."""
    notes = [] if notes is None else notes
    rules, path = audit_rules(benchmark), Path(path)
    fmt = detect(path, benchmark)
    if fmt == "official-folders" and hasattr(rules, "read_official"):  # a reader may take the gold items (optional)
        takes_gold = "gold" in inspect.signature(rules.read_official).parameters
        with warnings.catch_warnings(record=True) as caught:  # the reader's counted tolerances: notes, one line each
            warnings.simplefilter("always")
            items = rules.read_official(path, gold=gold) if takes_gold else rules.read_official(path)
        notes += [str(w.message) for w in caught]
    elif fmt == "official-folders":
        path = path / "official" if not any(path.glob("*/output.json")) else path
        items = []
        for sub in checks.subject_folders(path, notes):
            for rec in _read_output_json(sub / "output.json"):
                items.append(rules.from_official(rec))
    elif fmt == "lmms-eval":
        items = [checks.mark_raw(row, _row(path, n, row, rules.from_lmms_eval, ("doc", "resps")))
                 for n, row in enumerate(_jsonl(path), 1)]
        marked = [it["id"] for it in items if it.get("response_problem")]
        if marked:
            notes.append(f"{path}: {len(marked)} items whose raw resps holds no text are scored as empty responses "
                         f"(not their filtered_resps): {marked[:5]}")
    elif fmt == "vlmevalkit":
        rows = _table(path)
        needed = getattr(rules, "VLMEVALKIT_COLUMNS", ("index", "prediction", "answer", "id"))
        if not rows or not set(needed) <= set(rows[0]):
            raise DataError(str(path), f"a VLMEvalKit prediction file needs columns {', '.join(needed[:-1])} and {needed[-1]} "
                                       f"(the item id); "
                                       f"found {sorted(rows[0]) if rows else 'no rows'}")
        items = [_row(path, n, row, rules.from_vlmevalkit, needed[-1:]) for n, row in enumerate(rows, 1)]
    else:
        if gold is None:
            raise DataError(str(path), "a JSONL of {id, response} needs the questions: pass --gold (the benchmark's data "
                                       "copy, a hub id in the local cache, or a file of another format); none is "
                                       "in the hub cache")
        by_id = {g["id"]: g for g in gold}
        items = []
        for n, row in enumerate(_jsonl(path), 1):
            if str(row["id"]) not in by_id:
                raise DataError(str(path), f"line {n}: id not among the gold items", str(row["id"]), "id")
            it = rules.with_gold({**row, "id": str(row["id"])}, by_id[str(row["id"])])
            if not isinstance(row.get("response"), str):
                it = {**it, "response": "", "response_problem": f"response is {type(row.get('response')).__name__}"}
            items.append(it)
        marked = [it["id"] for it in items if it.get("response_problem")]
        if marked:
            notes.append(f"{path}: {len(marked)} responses are not text, scored as empty: {marked[:5]}")
    if hasattr(rules, "annotate"):  # what the file's name tells (e.g. a setting or prompt method), optional
        items = rules.annotate(path, fmt, items)
    checks.check_benchmark(path, fmt, items, get_task(benchmark).name)
    items = checks.one_per_id(path, items, notes)
    checks.check_gold(path, items, options=fmt != "official-folders", letters=getattr(rules, "ANSWER_LETTERS", None),
                      multi=getattr(rules, "MULTI_LETTER_ANSWERS", False))
    return items, fmt


def _row(path, n, row, reader, needed):
    for key in needed:
        if key not in row:
            raise DataError(str(path), f"line {n}: field missing", None, key)
    try:
        return reader(row)
    except (KeyError, ValueError, SyntaxError) as e:
        raise DataError(str(path), f"line {n}: cannot read the item ({e})") from None


# --------------------------------------------------------------------------------------------- statistics

def response_stats(items: Sequence[dict], expected_ids: Sequence[str] | None = None,
                   max_new_tokens: int | None = None) -> dict:
    """Counts that explain gaps: tokens per response (word pieces), truncated responses (an unclosed thinking
    trace, or at least ``max_new_tokens`` word pieces), answers only as ``\\boxed{X}`` / "answer is X", empty
    responses, items of ``expected_ids`` missing from the file."""
    tokens = [len(_TOKEN.findall(it["response"])) for it in items]
    split = [split_trace(it["response"]) for it in items]
    truncated = [s.how == "unclosed" or (max_new_tokens is not None and t >= max_new_tokens)
                 for s, t in zip(split, tokens)]
    boxed = sum(bool(_BOXED.search(s.answer)) for s in split)
    answer_is = sum(bool(_ANSWER_IS.search(s.answer)) for s in split)
    ids = {it["id"] for it in items}
    missing = sorted(set(expected_ids or ()) - ids)
    s = pd.Series(tokens, dtype=float)
    return {"items": len(items), "tokens_mean": float(s.mean()) if len(s) else 0.0,
            "tokens_median": float(s.median()) if len(s) else 0.0, "tokens_max": int(s.max()) if len(s) else 0,
            "truncated": int(sum(truncated)), "with_trace": sum(x.how != "none" for x in split),
            "boxed": int(boxed), "answer_is": int(answer_is), "empty": sum(not it["response"].strip() for it in items),
            "missing": len(missing), "missing_examples": missing[:10], "truncated_ids": [it["id"] for it, t in
                                                                                          zip(items, truncated) if t]}


# ------------------------------------------------------------------------------------------------- audit

def score(items: Sequence[dict], benchmark: str, judge: Callable[[dict], bool] | None = None) -> pd.DataFrame:
    """One row per item, a boolean column per rule set (``judge`` added when given, clearly labelled)."""
    rules = audit_rules(benchmark).RULES
    df = pd.DataFrame({"id": [it["id"] for it in items], "question_type": [it["question_type"] for it in items],
                       "response": [it["response"] for it in items]})
    for name, (fn, _label) in rules.items():
        col = fn(items)
        if col and all(v is None for v in col):  # a rule that does not apply to this file (e.g. a ranking result)
            continue
        df[name] = col
    if any("own_correct" in it for it in items):
        df["file's own"] = [bool(it.get("own_correct")) for it in items]
    if judge is not None:
        df["judge (hook, not official)"] = [bool(judge(it)) for it in items]
    return df


def _rule_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c not in ("id", "question_type", "response")]


def rule_table(df: pd.DataFrame) -> pd.DataFrame:
    """Rule set, n, accuracy (%) and its 95% Wilson interval."""
    rows = []
    for c in _rule_columns(df):
        k, n = int(df[c].sum()), len(df)
        lo, hi = proportion_interval(k, n)
        rows.append({"rule set": c, "n": n, "correct": k, "accuracy": 100 * k / n if n else None,
                     "low": None if lo is None else 100 * lo, "high": None if hi is None else 100 * hi})
    return pd.DataFrame(rows)


def _rows(df, col):
    return [{"id": i, "correct": bool(c)} for i, c in zip(df["id"], df[col])]


def _distinct(low, high) -> bool:
    """A paired difference is distinguishable from zero when its 95% interval leaves out 0."""
    return low is not None and high is not None and (low > 0 or high < 0)


def paired_tests(df: pd.DataFrame) -> pd.DataFrame:
    """The reference rule set (the first) against each other rule set, plus any other pair whose difference is
    distinguishable from zero: difference (b - a, points), Newcombe's paired interval, McNemar's exact p."""
    cols = _rule_columns(df)
    # a rule set equal on every item to an earlier one repeats its pairs: only its pair with the reference is kept
    repeats = {c for i, c in enumerate(cols) if any(df[c].equals(df[e]) for e in cols[:i])}
    out = []
    for a, b in combinations(cols, 2):
        if a in repeats or (b in repeats and a != cols[0]):
            continue
        r = compare_runs(_rows(df, a), _rows(df, b))
        if a != cols[0] and not _distinct(r["low"], r["high"]):
            continue
        out.append({"a": a, "b": b, **{k: r[k] for k in ("n", "accuracy_a", "accuracy_b", "difference", "low", "high",
                                                         "only_a_correct", "only_b_correct", "mcnemar_exact_p")},
                    "distinguishable": "yes" if _distinct(r["low"], r["high"]) else "no"})
    return pd.DataFrame(out, columns=["a", "b", "n", "accuracy_a", "accuracy_b", "difference", "low", "high",
                                      "only_a_correct", "only_b_correct", "mcnemar_exact_p", "distinguishable"])


def disagreements(df: pd.DataFrame) -> pd.DataFrame:
    """The items each pair of rule sets scores differently, with the response text."""
    out = []
    for a, b in combinations(_rule_columns(df), 2):
        diff = df[df[a] != df[b]]
        for _, r in diff.iterrows():
            out.append({"a": a, "b": b, "id": r["id"], "a_correct": bool(r[a]), "b_correct": bool(r[b]),
                        "question_type": r["question_type"], "response": r["response"]})
    return pd.DataFrame(out, columns=["a", "b", "id", "a_correct", "b_correct", "question_type", "response"])


def _step(label, before, after, lo, hi, note="", factor="") -> dict:
    change = None if before is None or after is None else after - before
    distinct = "" if change is None or lo is None else ("yes" if _distinct(lo, hi) else "no")
    return {"step": label, "factor": factor, "from": before, "to": after, "change": change, "low": lo, "high": hi,
            "distinguishable": distinct, "note": note}


def _paired_step(df, a, b, label, note="", factor="") -> dict:
    r = compare_runs(_rows(df, a), _rows(df, b))
    return _step(label, r["accuracy_a"], r["accuracy_b"], r["low"], r["high"], note, factor)


def _subset_step(df, col, keep, narrower, label, note, factor="") -> tuple[dict | None, "pd.Series"]:
    """Accuracy on the ``keep`` items -> on ``keep & narrower`` (a subset of the same items, so the interval is
    the hybrid score interval of two proportions, Newcombe 1998 method 10 with phi = 0); None when nothing drops."""
    a, b = df[keep], df[keep & narrower]
    n, k, m, j = len(a), int(a[col].sum()), len(b), int(b[col].sum())
    if m == n or not m:
        return None, keep
    lo, hi = _unpaired(k, n, j, m)
    return _step(label, 100 * k / n, 100 * j / m, 100 * lo, 100 * hi, note, factor), keep & narrower


def _unpaired(k1, n1, k2, n2) -> tuple[float, float]:
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = proportion_interval(k1, n1)
    l2, u2 = proportion_interval(k2, n2)
    d = p2 - p1
    return d - ((p2 - l2) ** 2 + (u1 - p1) ** 2) ** 0.5, d + ((u2 - p2) ** 2 + (p1 - l1) ** 2) ** 0.5


def _reference(df: pd.DataFrame) -> tuple[str, str]:
    """The reference rule set (the first column: the task's official rule, ``RULES``' first key) and the trace-
    removed one (the second, when its name says so)."""
    cols = _rule_columns(df)
    return cols[0], (cols[1] if len(cols) > 1 and "trace removed" in cols[1] else "")


def waterfall(df: pd.DataFrame, reported: float, stats: dict, own: str | None = None,
              split: str | None = None, expected: int | None = None) -> pd.DataFrame:
    """From the file's own score (``own`` rule set; %) through the official rule and each factor the data shows
    to the last score, each step with its 95% interval (points) and whether it is distinguishable from zero, and
    the unexplained rest: ``reported`` minus the last score, with the interval that score's Wilson interval gives.
    Steps chain: each starts where the last ended. Factors, each only with evidence in the data: the parser (the
    own verdicts differ from the reference rule's), a thinking trace (responses carry one; paired), truncated
    responses left out, items of other splits left out (``split``: the ids' prefix), missing items (``expected``
    items, those absent counted wrong -> left out). The factors without evidence are ``attrs["not_present"]``."""
    ref, traced = _reference(df)
    own = own or ref
    ids = df["id"].astype(str)
    keep = pd.Series(True, index=df.index)
    n, k = len(df), int(df[own].sum())
    absent = []
    steps = [_step("reported", None, reported, None, None, "the figure to explain", "reported")]
    if expected and expected > n:
        lo, hi = proportion_interval(k, expected)
        steps.append(_step("file's own score (missing items counted wrong)", None, 100 * k / expected, 100 * lo,
                           100 * hi, f"{expected - n} of {expected} items missing from the file", "own"))
        lo, hi = _unpaired(k, expected, k, n)
        steps.append(_step("missing items left out", 100 * k / expected, 100 * k / n, 100 * lo, 100 * hi,
                           "accuracy over the items the file holds", "missing items"))
    else:
        lo, hi = proportion_interval(k, n)
        steps.append(_step("file's own score", None, 100 * k / n, 100 * lo, 100 * hi, f"rule set {own!r}", "own"))
        absent.append("missing items" if expected else "missing items (no --expected given)")
    last = own
    if own != ref and (df[own] != df[ref]).any():
        steps.append(_paired_step(df, own, ref, f"{own} rule -> " + ("official parser" if ref == "official" else f"{ref} rule"),
                                  "same responses", "parser"))
        last = ref
    elif own != ref:
        absent.append(f"parser (the file's own verdicts equal {ref!r} on every item)")
        last = ref
    if stats.get("with_trace") and traced in df:
        steps.append(_paired_step(df, ref, traced, "thinking trace removed",
                                  f"{stats['with_trace']} responses carry a trace", "trace"))
        last = traced
    else:
        absent.append("thinking traces")
    step = None
    if stats.get("truncated"):
        step, keep = _subset_step(df, last, keep, ~df["id"].isin(stats["truncated_ids"]),
                                  "truncated responses left out", f"{stats['truncated']} truncated (no answer within "
                                                                  "the budget)", "truncation")
    steps += [step] if step else []
    absent += [] if step else ["truncated responses"]
    step = None
    if split and ids.str.startswith(split).any() and not ids.str.startswith(split).all():
        step, keep = _subset_step(df, last, keep, ids.str.startswith(split), f"other splits left out ({split} only)",
                                  "the file mixes splits (e.g. dev+validation)", "split")
    steps += [step] if step else []
    absent += [] if step else ["items of other splits"]
    final = df[keep]
    k, n = int(final[last].sum()), len(final)
    lo, hi = proportion_interval(k, n)
    steps.append(_step("unexplained rest", 100 * k / n, reported, reported - 100 * hi, reported - 100 * lo,
                       "reported minus the last score; interval from that score's Wilson interval", "unexplained"))
    out = pd.DataFrame(steps)
    out.attrs["not_present"] = absent
    out.attrs["last"] = last
    return out


def read_gold(gold, benchmark: str, notes: list[str] | None = None) -> list[dict]:
    """The gold items of ``--gold``: a file of a format the audit reads, or the benchmark's own data copy in any
    layout the task declares (its ``probe``; e.g. ``data/demo/mmmu``, a hub id held in the local cache), every
    split it loads (the files' ids choose among them)."""
    task, rules = get_task(benchmark), audit_rules(benchmark)
    try:
        return read_items(gold, benchmark, notes=notes)[0]
    except DataError as e:
        if not hasattr(rules, "from_task_item"):
            raise
        try:
            task.probe(str(gold))
        except (DataError, ValueError, OSError, NotImplementedError):
            raise e from None
    out = []
    for split in (list(task.split_sizes) or [None]) if task.takes_split() else [None]:
        try:
            loaded = task.load_items(**{task.data_key: str(gold), **({"split": split} if split else {})})
        except (DataError, ValueError, OSError, KeyError):
            continue  # a split the copy does not hold
        out += [rules.from_task_item(it) for it in loaded]
    if not out:
        raise DataError(str(gold), f"no questions of {task.title} could be loaded from this copy")
    return out


def _is_plain(path, benchmark: str) -> bool:
    try:
        return Path(str(path)).is_file() and detect(path, benchmark) == "plain-jsonl"
    except DataError:
        return False


def cached_gold(benchmark: str, notes: list[str]) -> str | None:
    """The benchmark's data copy in the local hub cache, for a plain JSONL given without ``--gold``: the task's hub
    id, else lmms-eval's copy under ``lmms-lab/`` or ``lmms-lab-encoder/`` (lmms-eval #1416); None when none is held."""
    hub_id = get_task(benchmark).hub_id
    if not hub_id:
        return None
    name = hub_id.split("/")[-1]
    for ref in (hub_id, f"lmms-lab/{name}", f"lmms-lab-encoder/{name}"):
        if hub_snapshot(ref) is not None:
            notes.append(f"questions from the hub cache's {ref} (no --gold given)")
            return ref
    return None


def resolve_inputs(paths: Sequence, benchmark: str, notes: list[str]) -> list[Path]:
    """Each input as files the audit reads: a path as given, else a run id under ``outputs/`` (``MMBENCH_OUTPUTS``;
    ``core.paths.find_run``); a run's top folder (a folder of sub-runs) is each of its sub-runs, said in a note."""
    out = []
    for ref in paths:
        p = Path(str(ref))
        if not p.exists():
            found = find_run(ref)
            if found is None:
                raise DataError(str(ref), f"neither a file, a folder nor a run id under {outputs_root()}")
            p = found
        if p.is_dir():
            try:
                detect(p, benchmark)
            except DataError:
                subs = []
                for sub in sorted(x for x in p.iterdir() if x.is_dir()):
                    try:
                        detect(sub, benchmark)
                        subs.append(sub)
                    except DataError:
                        pass
                if not subs:
                    raise
                notes.append(f"{p}: a folder of {len(subs)} runs, each audited: {[x.name for x in subs][:6]}")
                out += subs
                continue
        out.append(p)
    return out


def audit(paths: Sequence, benchmark: str, reported: float | None = None, split: str | None = None,
          gold=None, judge: Callable[[dict], bool] | None = None, max_new_tokens: int | None = None,
          expected: int | None = None, can_infer: str | None = None) -> dict:
    """The whole audit of one or more files (module doc): ``{"files": [...per file...], "across": table,
    "notes": [...], "answer": text}``. Per file: format, scores (per item), table, pairs, disagreements, stats,
    waterfall (with ``reported``), the peer rule versions applied and why (``tasks/peer_rules.py``: the VLMEvalKit
    ``can_infer`` of the file's recorded date, or ``can_infer``: a version by name, commit or date)."""
    checks.check_options(reported, expected, max_new_tokens)
    if can_infer:
        peer_rules.can_infer_version(can_infer)  # a wrong name: one line before any work
    notes: list[str] = []
    if gold is None and any(_is_plain(p, benchmark) for p in paths):
        gold = cached_gold(benchmark, notes)
    gold_items = read_gold(gold, benchmark, notes) if gold is not None else None
    files, items_of = [], []
    for p in resolve_inputs(paths, benchmark, notes):
        items, fmt = read_items(p, benchmark, gold_items, notes)
        if expected is not None and expected < len(items):
            raise ValueError(f"--expected {expected}: fewer than the {len(items)} items {p} holds")
        version, why = peer_rules.pick(p, fmt, can_infer)
        with peer_rules.using(version):
            df = score(items, benchmark, judge)
        expected_ids = None
        if gold_items:
            splits = {it.get("split") for it in items}
            expected_ids = [g["id"] for g in gold_items if g.get("split") in splits or "split" not in g]
        stats = response_stats(items, expected_ids, max_new_tokens)
        rules = audit_rules(benchmark)
        if hasattr(rules, "aggregation_notes"):  # what a peer's reported number does beyond the verdicts (optional)
            notes += rules.aggregation_notes(p, items, df)
        own = {"lmms-eval": "lmms-eval", "vlmevalkit": "vlmevalkit", **getattr(rules, "OWN_RULES", {})}.get(fmt)
        own = own if own in df else _reference(df)[0]  # the rule set the harness of the file's format scores with
        own = "file's own" if "file's own" in df else own
        entry = {"path": str(p), "format": fmt, "scores": df, "table": rule_table(df), "pairs": paired_tests(df),
                 "disagreements": disagreements(df), "stats": stats, "own": own, "rule_versions": why}
        if reported is not None:
            entry["waterfall"] = waterfall(df, reported, stats, own, split, expected)
        files.append(entry)
        items_of.append(items)
    across = []
    for (a, ia), (b, ib) in combinations(zip(files, items_of), 2):
        why = checks.golds_differ(ia, ib)
        if why:
            notes.append(f"{a['path']} and {b['path']}: {why}")
            continue
        ref = _reference(a["scores"])[0]
        r = compare_runs(_rows(a["scores"], ref), _rows(b["scores"], ref))
        across.append({"a": a["path"], "b": b["path"], **r})
    result = {"benchmark": benchmark, "files": files, "across": pd.DataFrame(across), "notes": notes}
    result["answer"] = answer_text(result, reported)
    return result


# ------------------------------------------------------------------------------------------------ the answer

def _pts(v) -> str:
    return f"{v:+.2f}"


def _interval(lo, hi) -> str:
    return f"[{lo:+.2f}, {hi:+.2f}]"


def _verdict(lo, hi, n) -> str:
    return ("distinguishable from zero" if _distinct(lo, hi) else "not distinguishable from zero") + f" at n={n}"


def _score(table: pd.DataFrame, name: str) -> str:
    r = table.set_index("rule set").loc[name]
    return f"{r['accuracy']:.2f}% ({int(r['correct'])}/{int(r['n'])}, 95% [{r['low']:.2f}, {r['high']:.2f}])"


def file_answer(f: dict, reported: float | None = None) -> str:
    """A few sentences a researcher can paste: the reported number, the file's own score, the reference (official)
    score, each factor with evidence and its paired interval (distinguishable from zero or not), what remains
    unexplained, the factors not present, and the other rule sets against the reference."""
    df, table, n = f["scores"], f["table"], f["stats"]["items"]
    ref = _reference(df)[0]
    official = "official" if ref.startswith("official") else f"reference ({ref!r}, not the papers' protocol)"
    own = f.get("own", ref)
    out = [f"{Path(f['path']).name} ({f['format']}, {n} items):"]
    if reported is not None:
        out.append(f"Reported: {reported:.2f}%.")
    why = f.get("rule_versions") or ""
    if f["format"] == "vlmevalkit" or "asked for" in why or "lmms-eval" in why:
        out.append(f"Rules applied: {f['rule_versions']}.")
    out.append(f"The file's own score ({own!r}): {_score(table, own)}; the {official} rule set: {_score(table, ref)}.")
    w = f.get("waterfall")
    if w is not None:
        factors = w[~w["factor"].isin(["reported", "own", "unexplained"])]
        for _, r in factors.iterrows():
            out.append(f"{r['step']}: {_pts(r['change'])} points {_interval(r['low'], r['high'])}, "
                       f"{_verdict(r['low'], r['high'], n)} ({r['note']}).")
        rest = w.iloc[-1]
        inside = "within" if rest["low"] <= 0 <= rest["high"] else "outside"
        out.append(f"Unexplained: {reported:.2f} - {rest['from']:.2f} = {_pts(rest['change'])} points "
                   f"{_interval(rest['low'], rest['high'])}; zero is {inside} that interval, so the rest "
                   + ("is within sampling error of the last score." if inside == "within" else
                      "is more than sampling error: something not in the file (prompt, model version, data) differs."))
        absent = w.attrs.get("not_present") or []
        if absent:
            out.append("Not present in the data: " + "; ".join(absent) + ".")
    others = f["pairs"][f["pairs"]["a"] == ref] if len(f["pairs"]) else f["pairs"]
    parts = [f"{r['b']} {_pts(r['difference'])} {_interval(r['low'], r['high'])}"
             + (" (distinguishable from zero)" if r["distinguishable"] == "yes" else " (not distinguishable from zero)")
             for _, r in others.iterrows() if r["b"] != own and r["only_a_correct"] + r["only_b_correct"]]
    same = [r["b"] for _, r in others.iterrows() if r["b"] != own and not r["only_a_correct"] + r["only_b_correct"]]
    if parts:
        out.append(f"Other rule sets against {ref!r} (paired, points): " + "; ".join(parts) + ".")
    if same:
        out.append(f"Equal to {ref!r} on every item: {', '.join(same)}.")
    return " ".join(out)


def answer_text(result: dict, reported: float | None = None) -> str:
    """The audit's answer: one paragraph per file (:func:`file_answer`), then the files against each other."""
    paras = [file_answer(f, reported) for f in result["files"]]
    across, first = result["across"], result["files"][0]["path"] if result["files"] else None
    for _, r in across.iterrows() if len(across) else ():
        if r["a"] != first and not _distinct(r["low"], r["high"]):  # the first file against each, + significant pairs
            continue
        paras.append(f"{Path(r['a']).name} vs {Path(r['b']).name} (reference rule, {int(r['n'])} paired items): "
                     f"{_pts(r['difference'])} points {_interval(r['low'], r['high'])}, "
                     f"{_verdict(r['low'], r['high'], int(r['n']))}.")
    return "\n\n".join(paras)


# ------------------------------------------------------------------------------------------------ output

def _fmt(df: pd.DataFrame) -> str:
    """A table as text; an empty cell (a level has no change, the reported figure no interval) prints "-"."""
    if not len(df):
        return "(none)"
    return df.astype(object).where(df.notna(), "-").to_string(
        index=False, formatters={c: (lambda v: v if isinstance(v, str) else f"{v:.2f}")
                                 for c in df.columns if df[c].dtype.kind == "f"})


def shown(df: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """A table to show or save: numbers rounded, an empty cell (no change, no interval) as "-", never NaN."""
    out = df.round(digits).astype(object)
    return out.where(df.notna(), "-")


def summary_table(result: dict) -> pd.DataFrame:
    """One row per file, one column per rule set: "accuracy [low, high]" (%, 95% Wilson), "-" where a rule set does
    not apply to a file."""
    rows = []
    for f in result["files"]:
        row = {"file": Path(f["path"]).name, "format": f["format"], "n": f["stats"]["items"]}
        for _, r in f["table"].iterrows():
            row[r["rule set"]] = f"{r['accuracy']:.1f} [{r['low']:.1f}, {r['high']:.1f}]"
        rows.append(row)
    return pd.DataFrame(rows).fillna("-")


def report_text(result: dict) -> str:
    """The audit as text: per file the rule-set table, paired tests, statistics and the waterfall."""
    lines = []
    for f in result["files"]:
        s = f["stats"]
        lines += [f"== {f['path']} ({f['format']}, {s['items']} items)", _fmt(f["table"]), "", "paired tests:",
                  _fmt(f["pairs"][["a", "b", "difference", "low", "high", "only_a_correct", "only_b_correct",
                                   "mcnemar_exact_p", "distinguishable"]]) if len(f["pairs"]) else "(none)", "",
                  "responses: " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in s.items()
                                            if not isinstance(v, list)),
                  f"disagreeing items: {len(f['disagreements'])} (item, pair) rows"]
        if "waterfall" in f:
            lines += ["", "waterfall (points; interval 95%):", _fmt(f["waterfall"].drop(columns="factor"))]
        lines.append("")
    if len(result["across"]):
        ref = _rule_columns(result["files"][0]["scores"])[0]
        lines += [f"{ref} (the reference rule set) across files:",
                  _fmt(result["across"][["a", "b", "n", "difference", "low", "high", "mcnemar_exact_p"]]), ""]
    lines += [f"note: {n}" for n in result.get("notes", [])]
    if result.get("answer"):
        lines += ["", "answer:", result["answer"]]
    return "\n".join(lines)


def write_audit(result: dict, out) -> list[Path]:
    """``out/<n>_<table>.csv`` per file (rules, pairs, disagreements with response text, scores, waterfall) and
    ``out/audit.json`` (paths, formats, statistics, tables as records)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written, summary = [], {"benchmark": result["benchmark"], "files": []}
    for n, f in enumerate(result["files"], 1):
        entry = {"path": f["path"], "format": f["format"], "stats": f["stats"], "rule_versions": f.get("rule_versions")}
        for key in ("table", "pairs", "disagreements", "scores", "waterfall"):
            if key in f:
                p = out / f"{n}_{key}.csv"
                f[key].to_csv(p, index=False)
                written.append(p)
                if key in ("table", "pairs", "waterfall"):
                    entry[key] = json.loads(f[key].to_json(orient="records"))
        summary["files"].append(entry)
    summary["across"] = json.loads(result["across"].to_json(orient="records")) if len(result["across"]) else []
    summary["notes"], summary["answer"] = result.get("notes", []), result.get("answer", "")
    (out / "answer.txt").write_text(summary["answer"] + "\n", encoding="utf-8")
    written.append(out / "answer.txt")
    (out / "audit.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    return written + [out / "audit.json"]
