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
from itertools import combinations
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from mmbench_lib.core.items import DataError, read_utf8
from mmbench_lib.core.uncertainty import compare_runs, proportion_interval
from mmbench_lib.pipeline.rescoring import _read_output_json
from mmbench_lib.tasks.audits import audit_rules
from mmbench_lib.tasks.thinking import split_trace

FORMATS = ("official-folders", "lmms-eval", "vlmevalkit", "plain-jsonl")
#: response tokens counted as word pieces (runs of letters/digits, or single other characters): the model's
#: tokenizer is not known from a file
_TOKEN = re.compile(r"\w+|[^\w\s]")
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ANSWER_IS = re.compile(r"(?i)(?:answer\s+is|答案[是为])[:：\s]*[(（]?([A-Za-z0-9.\-]+)")  # CMMMU: 答案是 / 答案为


def _jsonl(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(io.StringIO(read_utf8(path), newline=None), 1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(str(path), f"line {n} is not valid JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise DataError(str(path), f"line {n} is not an object")
            rows.append(row)
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
        df = pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""], lineterminator="\n",  # a lone \r is text
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
    elif path.is_dir() and (any(path.glob("*/output.json")) or any(path.glob("official/*/output.json"))):
        return "official-folders"  # a run of this suite too
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


def read_items(path, benchmark: str, gold: Sequence[dict] | None = None) -> tuple[list[dict], str]:
    """The items of one file and its format. ``gold``: items with the questions, for a plain JSONL."""
    rules, path = audit_rules(benchmark), Path(path)
    fmt = detect(path, benchmark)
    if fmt == "official-folders" and hasattr(rules, "read_official"):  # a reader may take the gold items (optional)
        takes_gold = "gold" in inspect.signature(rules.read_official).parameters
        items = rules.read_official(path, gold=gold) if takes_gold else rules.read_official(path)
    elif fmt == "official-folders":
        path = path / "official" if not any(path.glob("*/output.json")) else path
        items = []
        for sub in sorted(p for p in path.iterdir() if (p / "output.json").is_file()):
            for rec in _read_output_json(sub / "output.json"):
                items.append(rules.from_official(rec))
    elif fmt == "lmms-eval":
        items = [_row(path, n, row, rules.from_lmms_eval, ("doc", "resps")) for n, row in enumerate(_jsonl(path), 1)]
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
            raise DataError(str(path), "a JSONL of {id, response} needs the questions: pass --gold (a file of another format)")
        by_id = {g["id"]: g for g in gold}
        items = []
        for n, row in enumerate(_jsonl(path), 1):
            if str(row["id"]) not in by_id:
                raise DataError(str(path), f"line {n}: id not among the gold items", str(row["id"]), "id")
            items.append(rules.with_gold({**row, "id": str(row["id"])}, by_id[str(row["id"])]))
    if hasattr(rules, "annotate"):  # what the file's name tells (e.g. a setting or prompt method), optional
        items = rules.annotate(path, fmt, items)
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


def paired_tests(df: pd.DataFrame) -> pd.DataFrame:
    """Every pair of rule sets: difference (b - a, points), Newcombe's paired interval, McNemar's exact p."""
    out = []
    for a, b in combinations(_rule_columns(df), 2):
        r = compare_runs(_rows(df, a), _rows(df, b))
        out.append({"a": a, "b": b, **{k: r[k] for k in ("n", "accuracy_a", "accuracy_b", "difference", "low", "high",
                                                         "only_a_correct", "only_b_correct", "mcnemar_exact_p")}})
    return pd.DataFrame(out)


def disagreements(df: pd.DataFrame) -> pd.DataFrame:
    """The items each pair of rule sets scores differently, with the response text."""
    out = []
    for a, b in combinations(_rule_columns(df), 2):
        diff = df[df[a] != df[b]]
        for _, r in diff.iterrows():
            out.append({"a": a, "b": b, "id": r["id"], "a_correct": bool(r[a]), "b_correct": bool(r[b]),
                        "question_type": r["question_type"], "response": r["response"]})
    return pd.DataFrame(out, columns=["a", "b", "id", "a_correct", "b_correct", "question_type", "response"])


def _step(label, before, after, lo, hi, note="") -> dict:
    return {"step": label, "from": before, "to": after, "change": None if before is None or after is None else after - before,
            "low": lo, "high": hi, "note": note}


def _paired_step(df, a, b, label, note="") -> dict:
    r = compare_runs(_rows(df, a), _rows(df, b))
    return _step(label, r["accuracy_a"], r["accuracy_b"], r["low"], r["high"], note)


def _subset_step(df, col, keep, narrower, label, note) -> tuple[dict, "pd.Series"]:
    """Accuracy on the ``keep`` items -> on ``keep & narrower`` (a subset of the same items, so the interval is
    the hybrid score interval of two proportions, Newcombe 1998 method 10 with phi = 0)."""
    a, b = df[keep], df[keep & narrower]
    n, k, m, j = len(a), int(a[col].sum()), len(b), int(b[col].sum())
    if m == n or not m:
        return _step(label, 100 * k / n, 100 * k / n, 0.0, 0.0, note + " (nothing to drop)"), keep
    lo, hi = _unpaired(k, n, j, m)
    return _step(label, 100 * k / n, 100 * j / m, 100 * lo, 100 * hi, note), keep & narrower


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
    to the last score, each step with its 95% interval (points), and the unexplained rest: ``reported`` minus the
    last score, with the interval that score's Wilson interval gives. Steps chain: each starts where the last
    ended. Factors: thinking trace removed (paired), truncated responses left out, items of other splits left out
    (``split``: the ids' prefix), missing items (``expected`` items, those absent counted wrong -> left out)."""
    ref, traced = _reference(df)
    own = own or ref
    ids = df["id"].astype(str)
    keep = pd.Series(True, index=df.index)
    n, k = len(df), int(df[own].sum())
    steps = [_step("reported", None, reported, None, None, "the figure to explain")]
    if expected and expected > n:
        lo, hi = proportion_interval(k, expected)
        steps.append(_step("file's own score (missing items counted wrong)", None, 100 * k / expected, 100 * lo,
                           100 * hi, f"{expected - n} of {expected} items missing from the file"))
        lo, hi = _unpaired(k, expected, k, n)
        steps.append(_step("missing items left out", 100 * k / expected, 100 * k / n, 100 * lo, 100 * hi,
                           "accuracy over the items the file holds"))
    else:
        lo, hi = proportion_interval(k, n)
        steps.append(_step("file's own score", None, 100 * k / n, 100 * lo, 100 * hi, f"rule set {own!r}"))
    last = own
    if own != ref:
        steps.append(_paired_step(df, own, ref, f"{own} rule -> " + ("official parser" if ref == "official" else f"{ref} rule"),
                                  "same responses"))
        last = ref
    if stats.get("with_trace") and traced in df:
        steps.append(_paired_step(df, ref, traced, "thinking trace removed",
                                  f"{stats['with_trace']} responses carry a trace"))
        last = traced
    if stats.get("truncated"):
        step, keep = _subset_step(df, last, keep, ~df["id"].isin(stats["truncated_ids"]),
                                  "truncated responses left out", f"{stats['truncated']} truncated (no answer within "
                                                                  "the budget)")
        steps.append(step)
    if split and ids.str.startswith(split).any() and not ids.str.startswith(split).all():
        step, keep = _subset_step(df, last, keep, ids.str.startswith(split), f"other splits left out ({split} only)",
                                  "the file mixes splits (e.g. dev+validation)")
        steps.append(step)
    final = df[keep]
    k, n = int(final[last].sum()), len(final)
    lo, hi = proportion_interval(k, n)
    steps.append(_step("unexplained rest", 100 * k / n, reported, reported - 100 * hi, reported - 100 * lo,
                       "reported minus the last score; interval from that score's Wilson interval"))
    return pd.DataFrame(steps)


def audit(paths: Sequence, benchmark: str, reported: float | None = None, split: str | None = None,
          gold=None, judge: Callable[[dict], bool] | None = None, max_new_tokens: int | None = None,
          expected: int | None = None) -> dict:
    """The whole audit of one or more files (module doc): ``{"files": [...per file...], "across": table}``.
    Per file: format, scores (per item), table, pairs, disagreements, stats, waterfall (with ``reported``)."""
    gold_items = read_items(gold, benchmark)[0] if gold is not None else None
    files = []
    for p in paths:
        items, fmt = read_items(p, benchmark, gold_items)
        df = score(items, benchmark, judge)
        stats = response_stats(items, [g["id"] for g in gold_items] if gold_items else None, max_new_tokens)
        own = {"lmms-eval": "lmms-eval", "vlmevalkit": "vlmevalkit"}.get(fmt, _reference(df)[0])
        own = "file's own" if "file's own" in df else own
        entry = {"path": str(p), "format": fmt, "scores": df, "table": rule_table(df), "pairs": paired_tests(df),
                 "disagreements": disagreements(df), "stats": stats}
        if reported is not None:
            entry["waterfall"] = waterfall(df, reported, stats, own, split, expected)
        files.append(entry)
    across = []
    for a, b in combinations(files, 2):
        ref = _reference(a["scores"])[0]
        r = compare_runs(_rows(a["scores"], ref), _rows(b["scores"], ref))
        across.append({"a": a["path"], "b": b["path"], **r})
    return {"benchmark": benchmark, "files": files, "across": pd.DataFrame(across)}


# ------------------------------------------------------------------------------------------------ output

def _fmt(df: pd.DataFrame) -> str:
    return df.to_string(index=False, float_format=lambda v: f"{v:.2f}") if len(df) else "(none)"


def report_text(result: dict) -> str:
    """The audit as text: per file the rule-set table, paired tests, statistics and the waterfall."""
    lines = []
    for f in result["files"]:
        s = f["stats"]
        lines += [f"== {f['path']} ({f['format']}, {s['items']} items)", _fmt(f["table"]), "", "paired tests:",
                  _fmt(f["pairs"][["a", "b", "difference", "low", "high", "only_a_correct", "only_b_correct",
                                   "mcnemar_exact_p"]]) if len(f["pairs"]) else "(none)", "",
                  "responses: " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in s.items()
                                            if not isinstance(v, list)),
                  f"disagreeing items: {len(f['disagreements'])} (item, pair) rows"]
        if "waterfall" in f:
            lines += ["", "waterfall (points; interval 95%):", _fmt(f["waterfall"])]
        lines.append("")
    if len(result["across"]):
        lines += [f"{_rule_columns(result['files'][0]['scores'])[0]} (the reference rule set) across files:", _fmt(result["across"][["a", "b", "n", "difference", "low", "high",
                                                                        "mcnemar_exact_p"]])]
    return "\n".join(lines)


def write_audit(result: dict, out) -> list[Path]:
    """``out/<n>_<table>.csv`` per file (rules, pairs, disagreements with response text, scores, waterfall) and
    ``out/audit.json`` (paths, formats, statistics, tables as records)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written, summary = [], {"benchmark": result["benchmark"], "files": []}
    for n, f in enumerate(result["files"], 1):
        entry = {"path": f["path"], "format": f["format"], "stats": f["stats"]}
        for key in ("table", "pairs", "disagreements", "scores", "waterfall"):
            if key in f:
                p = out / f"{n}_{key}.csv"
                f[key].to_csv(p, index=False)
                written.append(p)
                if key in ("table", "pairs", "waterfall"):
                    entry[key] = json.loads(f[key].to_json(orient="records"))
        summary["files"].append(entry)
    summary["across"] = json.loads(result["across"].to_json(orient="records")) if len(result["across"]) else []
    (out / "audit.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    return written + [out / "audit.json"]
