"""Error analysis as MMMU §5 and CMMMU §4.3 did it: sample wrong answers, tag each with a cause.

MMMU sampled 150 GPT-4V errors at random and sorted them by hand into perceptual errors, lack of
knowledge, reasoning errors, textual understanding, rejection to answer, annotation error and answer
extraction error (Fig. 6); CMMMU did the same for 141 GPT-4V errors (Fig. 4).

More: docs/modules.md, ``mmbench_lib/error_analysis/errors.py``.
"""
from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import os
import random
import re
import tempfile
from collections import Counter, OrderedDict
from pathlib import Path

import pandas as pd

from mmbench_lib.analysis import plots, reader
from mmbench_lib.analysis.reader import Run
from mmbench_lib.analysis.results import write_results
from mmbench_lib.core import manifest
from mmbench_lib.core.store import write_json_atomic
from mmbench_lib import published
from mmbench_lib.error_analysis import charts
from mmbench_lib.tasks.base import all_tasks, get_task, is_task
from mmbench_lib.tasks.protocols import protocol_for

__all__ = [
    "CATEGORIES", "AUTO_TAGS", "PUBLISHED", "SAMPLE_FILE", "load_cases", "wrong_cases", "sample_errors",
    "save_sample", "load_sample", "sample_for_run", "auto_tags", "suggested_category", "is_refusal",
    "Annotations", "annotations_path", "run_id_of", "counts", "distribution", "category_table", "compare_published", "breakdown",
    "figure", "run_title", "summary_html", "resolve_placeholders", "end_report",
]

#: the papers' categories (MMMU Fig. 6 names; CMMMU Fig. 4 uses the same seven), plus "other"
CATEGORIES = (
    "perceptual error", "lack of knowledge", "reasoning error", "textual understanding",
    "rejection to answer", "annotation error", "answer extraction error", "other",
)
#: automatic tags and the category each suggests
AUTO_TAGS = OrderedDict([
    ("empty response", "answer extraction error"),
    ("answer extraction failure", "answer extraction error"),
    ("rejection", "rejection to answer"),
    ("truncated response", "answer extraction error"),
])
#: published tables (``mmbench_lib.published``) and how their category names map to ours
PUBLISHED = OrderedDict(t.error_table for t in all_tasks() if t.error_table)
_PUBLISHED_NAMES = {
    "perceptual errors": "perceptual error", "lack of knowledge": "lack of knowledge",
    "reasoning errors": "reasoning error", "textual understanding error": "textual understanding",
    "text comprehension errors": "textual understanding", "rejection to answer": "rejection to answer",
    "rejection": "rejection to answer", "annotation error": "annotation error", "annotation errors": "annotation error",
    "answer extraction error": "answer extraction error", "answer extraction errors": "answer extraction error",
}
SAMPLE_FILE = "error_sample.json"

REFUSALS_EN = (
    r"\bI cannot\b", r"\bI can ?not\b", r"\bI can't\b", r"\bI can’t\b", r"\bI'm sorry\b", r"\bI’m sorry\b",
    r"\bI am sorry\b", r"\bsorry\b", r"\bI am unable\b", r"\bI'm unable\b", r"\bunable to (?:determine|answer|provide)",
    r"\bI do not have enough\b", r"\bI don't have enough\b", r"\bnot possible to (?:determine|tell|answer)",
    r"\bcannot be determined\b", r"\bI apologi[sz]e\b", r"\bAs an AI\b", r"\bI won't\b", r"\bI will not\b",
)
REFUSALS_ZH = ("无法", "不能确定", "抱歉", "对不起", "不确定", "无法确定", "不能回答", "无法回答", "作为一个人工智能", "很遗憾")
_REFUSAL_RE = re.compile("|".join(REFUSALS_EN), re.I)


# --------------------------------------------------------------------------------------------- cases

def _load_items(run: Run) -> dict:
    """The run's items by id, loaded by the task loader its manifest records
    (:func:`mmbench_lib.analysis.reader.load_items`); ``{}`` when that fails (data moved or not here)."""
    try:
        items = reader.load_items(run.manifest, where=str(run.folder / "manifest.json"))
    except Exception:  # noqa: BLE001 - data moved or not installed here: show the rows without items
        return {}
    return {it.id: it for it in items}


def _none(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA else v


def load_cases(run_dir, with_items: bool = True) -> list[dict]:
    """One record per stored item of a run, in file order, from :func:`mmbench_lib.analysis.reader.samples_df`.

    Generation runs give the raw ``response``, ``parsed_pred`` (as ``prediction``), ``fallback``, ``mode``,
    ``truncated``; ranking runs ``prediction`` and per-choice ``scores``. Fields missing from a row are
    ``None``. With ``with_items`` each record carries its :class:`~mmbench_lib.core.items.Item` as
    ``item`` (``None`` when the data is not found).
    """
    run_dir = reader.resolve_run(run_dir)  # a folder or a run id, as every command takes them
    protocol, files = reader.item_files(run_dir)
    run = Run(folder=run_dir, key=str(run_dir), manifest=reader.read_manifest(run_dir), metrics={},
              protocol=protocol, files=files)
    items = _load_items(run) if with_items else {}
    cases = []
    for r in run.samples.to_dict("records"):
        r = {k: (v if isinstance(v, (list, dict)) else _none(v)) for k, v in r.items()}
        it = items.get(r["id"])
        image_type = r["image_type"] or (list(it.image_type) if it is not None else [])
        cases.append({
            "id": r["id"],
            "benchmark": r["benchmark"] or "",
            "model": r["model"] or "",
            "subject": r["dimension"] if r["dimension"] is not None else (getattr(it, "dimension", "") or ""),
            "group": r["group"] if r["group"] is not None else (getattr(it, "group", "") or ""),
            "difficulty": r["difficulty"] if r["difficulty"] is not None else getattr(it, "difficulty", None),
            "image_type": list(image_type or []),
            "question_type": r["question_type"] if r["question_type"] is not None else getattr(it, "question_type", None),
            "answer": r["answer"] if r["answer"] is not None else getattr(it, "answer", None),
            "prediction": r["prediction"],
            "response": r["response"],
            "fallback": r["fallback"],
            "mode": r["mode"],
            "truncated": r["truncated"],
            "scores": r["scores"],
            "status": r["status"],
            "error": r["error"],
            "correct": r["correct"],
            "item": it,
        })
    return cases


def wrong_cases(cases: list[dict]) -> list[dict]:
    """Items answered and scored wrong (failed and unscored items are not errors of the model)."""
    return [c for c in cases if c.get("status", "ok") == "ok" and c.get("correct") is False]


def _key(case: dict, by: str | None) -> str:
    if not by:
        return ""
    v = case.get({"dimension": "subject", "discipline": "group"}.get(by, by))
    if isinstance(v, list):
        v = ", ".join(map(str, v))
    return "" if v is None else str(v)


def sample_errors(cases: list[dict], n: int, stratify_by: str | None = None, seed: int = 0) -> list[str]:
    """Ids of a seeded random sample of ``n`` wrong items (all of them when fewer).

    ``stratify_by`` (``"subject"``/``"dimension"``, ``"group"``, ``"difficulty"``, ...) allocates the
    sample to strata in proportion to their number of errors (largest remainder, ties to the larger
    stratum, then by name), then draws within each stratum. The same cases, ``n`` and ``seed``
    always give the same ids, in a stable order (strata sorted, sample order within).
    """
    wrong = [c for c in wrong_cases(cases)] if any("correct" in c for c in cases) else list(cases)
    n = min(int(n), len(wrong))
    rng = random.Random(seed)
    if not stratify_by:
        return [c["id"] for c in rng.sample(wrong, n)]
    strata: dict[str, list[dict]] = {}
    for c in wrong:
        strata.setdefault(_key(c, stratify_by), []).append(c)
    total = len(wrong)
    quota = {k: n * len(v) / total for k, v in strata.items()}
    alloc = {k: math.floor(q) for k, q in quota.items()}
    left = n - sum(alloc.values())
    for k in sorted(strata, key=lambda k: (-(quota[k] - alloc[k]), -len(strata[k]), k))[:left]:
        alloc[k] += 1
    ids = []
    for k in sorted(strata):
        ids += [c["id"] for c in rng.sample(strata[k], alloc[k])]
    return ids


def save_sample(run_dir, ids: list[str], n: int, stratify_by: str | None, seed: int, population: int) -> Path:
    path = Path(run_dir) / SAMPLE_FILE
    write_json_atomic(path, {"created": manifest.now(), "n": n, "stratify_by": stratify_by or None, "seed": seed,
                             "population_wrong": population, "ids": ids})
    return path


def load_sample(run_dir) -> dict | None:
    path = Path(run_dir) / SAMPLE_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def sample_for_run(run_dir, cases: list[dict], n: int, stratify_by: str | None = None, seed: int = 0) -> list[str]:
    """The run's saved sample when it was drawn with the same ``n``, ``stratify_by`` and ``seed``;
    otherwise a fresh one, saved as ``<run>/error_sample.json``."""
    saved = load_sample(run_dir)
    if saved and (saved.get("n"), saved.get("stratify_by") or None, saved.get("seed")) == (n, stratify_by or None, seed):
        known = {c["id"] for c in cases}
        if all(i in known for i in saved["ids"]):
            return list(saved["ids"])
    ids = sample_errors(cases, n, stratify_by, seed)
    save_sample(run_dir, ids, n, stratify_by, seed, len(wrong_cases(cases)))
    return ids


# --------------------------------------------------------------------------------------------- automatic tags

def is_refusal(text) -> bool:
    """A refusal or a "cannot tell" answer, in English or Chinese."""
    if not isinstance(text, str) or not text.strip():
        return False
    return bool(_REFUSAL_RE.search(text)) or any(p in text for p in REFUSALS_ZH)


def auto_tags(case: dict) -> list[str]:
    """Automatic tags of one case (generation rows; ranking rows have no response and get none).

    * ``empty response``: the response is empty or blank;
    * ``answer extraction failure``: the parser fell back (``fallback``), or found no answer
      (``parsed_pred`` empty, or parse mode ``none``/``random``/``empty``);
    * ``rejection``: refusal phrases ("I cannot", "I'm sorry", "无法", "不能确定", "抱歉", ...);
    * ``truncated response``: generation stopped at ``max_new_tokens`` *before an answer could be
      extracted* (no answer parsed, or one drawn by the fallback). A response cut after a cleanly parsed
      answer ("Answer: B. The curve ...") gets no tag: its answer was read, the cut cost nothing.
    """
    tags = []
    response = case.get("response")
    bench = case.get("benchmark")
    ranked = case.get("scores") is not None or (is_task(bench) and not protocol_for(bench).generates)
    if "response" not in case or ranked:  # a ranking row: nothing was generated (a generated letter: cut before it)
        return ["truncated response"] if case.get("truncated") and _none(case.get("prediction")) is None else []
    text = response if isinstance(response, str) else ("" if response is None else str(response))
    if not text.strip():
        tags.append("empty response")
    pred = case["parsed_pred"] if "parsed_pred" in case else case.get("prediction")
    if isinstance(pred, (list, tuple)):
        pred = [p for p in pred if str(p).strip()]
    no_pred = pred is None or (isinstance(pred, (str, list)) and len(pred) == 0)
    parsed = not (case.get("fallback") or str(case.get("mode") or "") in ("none", "random", "empty") or no_pred)
    if not parsed:
        tags.append("answer extraction failure")
    if is_refusal(text):
        tags.append("rejection")
    if case.get("truncated") and not parsed:
        tags.append("truncated response")
    return tags


def suggested_category(tags: list[str]) -> str:
    """The category the automatic tags point to (rejection first), ``""`` without tags."""
    if "rejection" in tags:
        return "rejection to answer"
    for t in tags:
        return AUTO_TAGS.get(t, "")
    return ""


# --------------------------------------------------------------------------------------------- annotations

FIELDS = ["benchmark", "sample_id", "model", "run_id", "subject", "difficulty", "image_type", "category", "note",
          "annotator", "timestamp", "auto_tags", "auto_category"]
KEY = ("benchmark", "sample_id", "model", "run_id")


def run_id_of(run_dir) -> str:
    return Path(run_dir).resolve().name


def annotations_path(run_id: str, annotations_dir="annotations") -> Path:
    """``<annotations_dir>/<run-id>.csv``; a relative folder is taken from the repository root."""
    return manifest.resolve(annotations_dir) / f"{run_id}.csv"


class Annotations:
    """Human tags (``category``, ``note``) and automatic ones (``auto_tags``, ``auto_category``) of one run,
    keyed by (benchmark, sample_id, model, run_id). Every :meth:`upsert` rewrites the CSV atomically."""

    def __init__(self, path):
        self.path = Path(path)
        self.rows: dict[tuple, dict] = OrderedDict()
        if self.path.is_file():
            with open(self.path, newline="", encoding="utf-8") as f:
                for r in csv.DictReader(f):
                    row = {k: r.get(k) or "" for k in FIELDS}
                    self.rows[tuple(row[k] for k in KEY)] = row

    def get(self, key: tuple) -> dict | None:
        return self.rows.get(tuple(str(k) for k in key))

    def upsert(self, row: dict, write: bool = True) -> dict:
        key = tuple(str(row.get(k, "")) for k in KEY)
        old = self.rows.get(key, {})
        new = {k: "" for k in FIELDS}
        new.update(old)
        new.update({k: ("" if v is None else str(v)) for k, v in row.items() if k in FIELDS})
        self.rows[key] = new
        if write:
            self.write()
        return new

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=FIELDS)
                w.writeheader()
                w.writerows(self.rows.values())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return self.path

    def frame(self):
        import pandas as pd

        return pd.DataFrame(list(self.rows.values()), columns=FIELDS)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------- display helpers

_PLACEHOLDER = re.compile(r'<image (\d+)>|<img="[^"]*">|<图片 ?(\d+)>')


def resolve_placeholders(question: str, item=None, html: bool = True) -> str:
    """The question with its image placeholders replaced by ``[image k]`` labels matching the
    thumbnails (MMMU ``<image k>``, CMMMU ``<img="...">``, SEED-2's ``image_marker`` such as ``<img>``)."""
    import html as _html

    q = question or ""
    counter = {"k": 0}
    tags = list((getattr(item, "meta", None) or {}).get("image_tags") or [])

    def label(k) -> str:
        return f"\x00[image {k}]\x01"

    def repl(m):
        if m.group(1):
            return label(m.group(1))
        if m.group(2):
            return label(m.group(2))
        tag = m.group(0)
        k = tags.index(tag) + 1 if tag in tags else None
        if k is None:
            counter["k"] += 1
            k = counter["k"]
        return label(k)

    q = _PLACEHOLDER.sub(repl, q)
    marker = getattr(item, "image_marker", "") if item is not None else ""
    if marker and marker in q:
        parts = q.split(marker)
        q = parts[0] + "".join(label(i) + p for i, p in enumerate(parts[1:], start=1))
    if not html:
        return q.replace("\x00", "").replace("\x01", "")
    return _html.escape(q).replace("\x00", "<b>").replace("\x01", "</b>").replace("\n", "<br>")


# --------------------------------------------------------------------------------------------- distributions

def _columns(tags):
    df = tags.copy()
    for c in ("category", "auto_category"):
        if c not in df:
            df[c] = ""
        df[c] = df[c].fillna("").astype(str)
    return df


def counts(tags) -> dict:
    """How the sampled cases stand: ``sampled``, ``by_hand`` (a human category), ``automatic`` (no human
    category, an automatic suggestion) and ``untagged`` (neither). A suggestion is never a tag."""
    df = _columns(tags)
    hand = df["category"] != ""
    auto = ~hand & (df["auto_category"] != "")
    return {"sampled": len(df), "by_hand": int(hand.sum()), "automatic": int(auto.sum()),
            "untagged": int((~hand & ~auto).sum())}


def distribution(tags):
    """Per category (``CATEGORIES`` order), from an annotations frame (``category``, ``auto_category``):
    ``n`` / ``percent`` -- the cases tagged by hand (percent of the hand-tagged cases, as MMMU Fig. 6
    counts its 150 hand-sorted errors); ``auto_n`` / ``auto_percent`` -- the automatic suggestions of the
    cases *not* tagged by hand, counted apart (a suggestion never counts as a tag)."""
    import pandas as pd

    df = _columns(tags)
    hand = Counter(df.loc[df["category"] != "", "category"])
    auto = Counter(df.loc[(df["category"] == "") & (df["auto_category"] != ""), "auto_category"])
    nh, na = sum(hand.values()), sum(auto.values())
    return pd.DataFrame({"category": list(CATEGORIES), "n": [hand.get(c, 0) for c in CATEGORIES],
                         "percent": [100 * hand.get(c, 0) / nh if nh else 0.0 for c in CATEGORIES],
                         "auto_n": [auto.get(c, 0) for c in CATEGORIES],
                         "auto_percent": [100 * auto.get(c, 0) / na if na else 0.0 for c in CATEGORIES]})


def compare_published(ours=None, label: str = "this run", auto_label: str | None = None):
    """Category percentages: ours (a :func:`distribution` frame; its hand tags under ``label`` and, with
    ``auto_label``, the automatic suggestions of the untagged cases in a column of their own) beside MMMU
    Fig. 6 and CMMMU Fig. 4. ``attrs["n"]``: cases per column; ``attrs["automatic"]``: the suggestion column."""
    import pandas as pd

    table = pd.DataFrame({"category": list(CATEGORIES)})
    ns = {}
    if ours is not None:
        ours_i = ours.set_index("category").reindex(CATEGORIES)
        table[label] = list(ours_i["percent"].fillna(0.0))
        ns[label] = int(ours["n"].sum())
        if auto_label and "auto_n" in ours:
            table[auto_label] = list(ours_i["auto_percent"].fillna(0.0))
            ns[auto_label] = int(ours["auto_n"].sum())
            table.attrs["automatic"] = auto_label
    for name, key in PUBLISHED.items():
        pub = published.load(key)
        mapped = {_PUBLISHED_NAMES[str(c).strip().lower()]: float(p) for c, p in zip(pub["category"], pub["percent"])}
        table[name] = [mapped.get(c, float("nan")) for c in CATEGORIES]  # a category the paper lacks: n/a, not 0
        ns[name] = published.ERROR_SAMPLE_SIZES.get(key)
    table.attrs["n"] = ns  # errors per source, for the intervals of the figure
    return table


def category_table(tags):
    """The end-of-run table of the error analysis: per category the cases tagged by hand (n, % of the
    hand-tagged), the automatic suggestions of the untagged cases (n, %), counted apart, and the
    published shares (MMMU Fig. 6, CMMMU Fig. 4; NaN where the paper has no such category)."""
    ours = distribution(tags)
    pub = compare_published(None)
    table = ours.rename(columns={"n": "by hand", "percent": "by hand %", "auto_n": "automatic",
                                 "auto_percent": "automatic %"})
    for name in PUBLISHED:
        table[f"{name.split(' (')[0]} %"] = list(pub[name])
    return table


def end_report(out_dir, tags, analysed_run, n_items: int, n_wrong: int, tag_file) -> dict:
    """The notebook's headline: the ``report`` section of ``<out_dir>/results.json``
    (``mmbench_lib.analysis.results.write_results``, printed by ``format_report`` and by ``mmbench run``): the
    per-category table of :func:`category_table` (hand tags and automatic suggestions apart, the papers'
    shares beside; ``None``, printed ``-``, where a paper has no such category) and the counts. Returns it."""
    table = category_table(tags)
    k = counts(tags)
    pct = lambda v: None if v != v else round(float(v), 1)  # noqa: E731 - NaN: the paper has no such category
    pubs = [c for c in table.columns if c.endswith(" %") and c not in ("by hand %", "automatic %")]
    hand = pct if k["by_hand"] else (lambda v: None)  # 0 of 0: no share, not 0%
    auto = pct if k["automatic"] else (lambda v: None)
    rows = [[r["category"], int(r["by hand"]), hand(r["by hand %"]), int(r["automatic"]), auto(r["automatic %"]),
             *(pct(r[c]) for c in pubs)] for _, r in table.iterrows()]
    rows.append(["all", k["by_hand"], 100.0 if k["by_hand"] else None, k["automatic"],
                 100.0 if k["automatic"] else None, *(None for _ in pubs)])
    name = (f"Error analysis of {run_id_of(analysed_run)}: {k['sampled']} sampled of {n_wrong} wrong answers "
            f"({n_items} items); {k['by_hand']} tagged by hand, {k['automatic']} untagged with an automatic "
            f"suggestion (counted apart, not tags), {k['untagged']} untagged")
    body = {"name": name, "columns": ["category", "by hand (n)", "by hand %", "automatic (n)", "automatic %", *pubs],
            "rows": rows, "notes": "% of the column's cases; - : none tagged, or the paper has no such category",
            "analysed_run": str(analysed_run), "tag_file": str(tag_file),
            "counts": {**k, "items": n_items, "wrong": n_wrong}}
    write_results(out_dir, report=body)
    return body


def breakdown(cases: list[dict], by: str):
    """Errors per value of ``by`` (``subject``, ``difficulty``, ``image_type``, ...) over all scored
    items of the run: ``n`` items, ``wrong``, ``error_rate`` (%). Image types count once per type."""
    import pandas as pd

    tally: dict[str, list[int]] = OrderedDict()
    for c in cases:
        if c.get("correct") is None:
            continue
        vals = c.get(by)
        vals = vals if isinstance(vals, list) else [vals]
        for v in vals or ["(none)"]:
            k = "(none)" if v in (None, "") else str(v)
            t = tally.setdefault(k, [0, 0])
            t[0] += 1
            t[1] += not c["correct"]
    df = pd.DataFrame([{by: k, "n": n, "wrong": w, "error_rate": 100 * w / n} for k, (n, w) in tally.items()])
    return df.sort_values(["wrong", by], ascending=[False, True]).reset_index(drop=True) if len(df) else df


def figure(comparison, breakdowns: dict | None = None, title: str = ""):
    """Left: the category distribution (one bar per source, 95% Wilson intervals over each source's
    n; the automatic suggestions hatched, apart from the hand tags); right: one panel per breakdown
    (wrong / all items per value). See :mod:`.charts`."""
    attrs = getattr(comparison, "attrs", {})
    return charts.figure(comparison, breakdowns, title, attrs.get("n", {}), attrs.get("automatic"))


def run_title(run_dir) -> str:
    """``Error analysis: <model> on <benchmark> <split> (run <id>)`` with display names."""
    try:
        m = reader.load_run(run_dir).metrics
    except Exception:  # noqa: BLE001 - a folder without metrics still gets a title
        return f"Error analysis of {run_id_of(run_dir)}"
    return (f"Error analysis: {plots.run_label(m)} on {plots.display_name(m.get('benchmark'))} "
            f"{m.get('split') or ''} (run {run_id_of(run_dir)})").replace("  ", " ")


def summary_html(cases: list[dict], tags=None, limit: int = 12) -> str:
    """Static fallback of the browser: category counts (human and automatic) and a grid of the first
    ``limit`` sampled errors with question, gold, prediction and tags."""
    import html as _html

    by_id = {}
    if tags is not None and len(tags):
        for r in tags.to_dict("records"):
            by_id[str(r["sample_id"])] = r
    human = Counter(r.get("category") for r in by_id.values() if r.get("category"))
    auto = Counter()  # suggestions of the cases not tagged by hand, counted apart
    for c in cases:
        if by_id.get(c["id"], {}).get("category"):
            continue
        cat = suggested_category(auto_tags(c))
        if cat:
            auto[cat] += 1
    rows = "".join(f"<tr><td>{_html.escape(c)}</td><td>{human.get(c, 0)}</td><td>{auto.get(c, 0)}</td></tr>" for c in CATEGORIES)
    out = [f"<p><b>{len(cases)}</b> sampled errors: <b>{sum(human.values())}</b> tagged by hand, "
           f"<b>{sum(auto.values())}</b> untagged with an automatic suggestion (not a tag).</p>",
           "<table><tr><th>category</th><th>tagged by hand</th><th>automatic suggestion (untagged cases)</th></tr>",
           rows, "</table>",
           "<div style='display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:8px;margin-top:8px'>"]
    for c in cases[:limit]:
        it = c.get("item")
        q = resolve_placeholders(getattr(it, "question", "") or "", it)
        t = by_id.get(c["id"], {})
        tag = t.get("category") or ""
        sug = ", ".join(auto_tags(c))
        resp = c.get("response")
        out.append(
            "<div style='border:1px solid #ccc;padding:6px;font-size:12px'>"
            f"<div><b>{_html.escape(c['id'])}</b> · {_html.escape(str(c.get('subject') or ''))}</div>"
            f"<div style='max-height:6em;overflow:hidden'>{q}</div>"
            f"<div>gold <b>{_html.escape(str(c.get('answer')))}</b> · predicted <b>{_html.escape(str(c.get('prediction')))}</b></div>"
            + (f"<div>response: <code>{_html.escape(str(resp)[:120])}</code></div>" if resp is not None else "")
            + (f"<div>tag: <b>{_html.escape(tag)}</b></div>" if tag else "")
            + (f"<div><i>automatic suggestion (not a tag): {_html.escape(sug)}</i></div>" if sug else "")
            + "</div>")
    out.append("</div>")
    return "".join(out)
