"""The generation loop for MMMU and CMMMU: items -> official prompt -> model -> raw responses -> official parsers.

Two steps, as the official pipelines have them:

1. ``generate_items``: each item's official prompt (MMMU spec §3.3 via ``parsing.mmmu.prompt``;
   CMMMU §4.3 via ``parsing.cmmmu.prompt`` with its three Chinese instructions) goes to the adapter
   (greedy, ``max_new_tokens``). The raw response is appended to the run's ``RunStore`` and flushed
   per batch; a rerun skips stored ids. A response that stopped at ``max_new_tokens`` is stored
   with ``truncated: true`` (it is still parsed, and counted in ``metrics.counts.truncated``).
   Items whose images are missing or unreadable, and items the model fails on, get a ``failed``
   row with the error and are left out of the accuracy (counted in ``counts.failed``).
2. ``score_run``: ALL stored responses are written in the official formats
   (``official/<Subject>/output.json`` for MMMU; ``official/responses.jsonl`` + ``official/gold.jsonl``
   for CMMMU) and scored by ``mmbench_lib.pipeline.rescoring`` -- the same code that rescores files made
   elsewhere -- so one ``random.Random(42)`` is consumed in the official subject / category order,
   within it in data-file order. A resumed run therefore parses exactly as an uninterrupted one.
   The MMMU test split (no answers) writes ``submission.json`` (``{id: prediction}``: parsed letter
   for multiple choice, raw response for open questions) instead of accuracies; the CMMMU test
   split writes ``submission.jsonl`` response-mode rows ``{id, type, response}``.

Images (spec P-M4): a vision-language adapter gets ALL of an item's images in placeholder order
(first appearance in question, then options; unreferenced images last), put before the text as
LLaVA's ``<image>\\n{prompt}`` does, with the ``<image k>`` placeholders left verbatim. The official
LLaVA runner feeds only ``image_1``; this deviation is recorded in each run's manifest.
Text-only models see the text only.

Baselines (MMMU §4.1, CMMMU §4.1): ``RandomAnswer`` and ``FrequentAnswer`` answer without a model;
their answer is stored as the "response" and goes through the same official parsers; the text-only
LLM is any causal model generating; LLM + OCR adds ``mmbench_lib.pipeline.ocr`` text to the prompt.
"""
from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import traceback
import zlib
from collections import Counter, OrderedDict
from pathlib import Path

from tqdm.auto import tqdm

from mmbench_lib.core.items import Item
from mmbench_lib.core.media import MediaError, check_media, load_visual_inputs
from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.tasks import cmmmu_parser as cparse
from mmbench_lib.tasks import mmmu_parser as mparse
from mmbench_lib.core.store import RunStore, write_json_atomic
from mmbench_lib.pipeline.ocr import insert_ocr
from mmbench_lib.core.metrics import SCHEMA_VERSION, ci_fractions, entry
from mmbench_lib.pipeline import rescoring as responses
from mmbench_lib.tasks import cmmmu, mmmu
from mmbench_lib.core import manifest
from mmbench_lib.models import load_adapter
from mmbench_lib.pipeline.ocr import LANGS, OCR

log = logging.getLogger(__name__)

__all__ = [
    "BASELINES", "DEVIATIONS", "RandomAnswer", "FrequentAnswer", "frequent_table", "build_prompt", "generate_items",
    "score_run", "evaluate_generation", "breakdown_table", "summary_table", "label_for",
]

BASELINES = ("none", "random", "frequent", "ocr")
CMMMU_TYPES = {"multiple-choice": "选择", "true-false": "判断", "fill-in-the-blank": "填空"}
DEVIATIONS = {
    "mmmu": [
        "P-M4: a vision-language model gets all images in placeholder order (question, then options), before the "
        "text; the official LLaVA runner feeds only image_1",
        "generation is greedy (do_sample=False) with our max_new_tokens; the official LLaVA-1.5 run sampled with "
        "num_beams=5, max_new_tokens=128",
        "chat template of the model applied to the official prompt (the official runner used the vicuna_v1 conversation)",
    ],
    "cmmmu": [
        "prompts are lmms-eval's CMMMU task text (spec §4.3), assumed to be the authors'",
        "a vision-language model gets all images in tag order (question, then options), before the text",
        "generation is greedy (do_sample=False) with our max_new_tokens (lmms-eval uses 16)",
    ],
}


# --------------------------------------------------------------------------------------------- prompts

def cmmmu_type(item: Item) -> str:
    return item.meta.get("type") or CMMMU_TYPES[item.question_type]


def _placeholders(item: Item) -> list[tuple[int, str, str]]:
    """``(k, placeholder in the final prompt, image path)`` for each image the prompt refers to."""
    tags = item.meta.get("image_tags") or []
    out = []
    if item.benchmark == "mmmu":
        for tag, path in zip(tags, item.images):
            m = re.fullmatch(r"<image (\d+)>", tag)
            if m:
                out.append((int(m.group(1)), tag, path))
    else:
        for i, (tag, path) in enumerate(zip(tags, item.images), start=1):
            out.append((i, f"<图片 {i}>", path))
    return out


def build_prompt(item: Item, ocr=None) -> tuple[str, dict]:
    """The official prompt of ``item``; with ``ocr`` (an ``mmbench_lib.pipeline.ocr.OCR``), each image
    placeholder replaced by ``[Image k OCR text: ...]``. Returns ``(prompt, {k: ocr text})``."""
    if item.benchmark == "mmmu":
        text = mparse.prompt(item.question, item.choices, item.question_type)
    elif item.benchmark == "cmmmu":
        names = [re.fullmatch(r'<img="([^"]+)">', t).group(1) for t in item.meta.get("image_tags") or []]
        text = cparse.prompt(item.question, item.choices, cmmmu_type(item), image_filenames=names)
    else:
        raise ValueError(f"generation supports mmmu and cmmmu, not {item.benchmark!r}")
    if ocr is None:
        return text, {}

    phs = [(k, ph, p) for k, ph, p in _placeholders(item) if ph in text]
    texts = {k: ocr.read(p) for k, _ph, p in phs}
    return insert_ocr(text, {k: ph for k, ph, _ in phs}, texts), texts


# --------------------------------------------------------------------------------------------- baselines

def _all_choices(item: Item) -> list[str]:
    if item.benchmark == "cmmmu":
        return {"选择": list(cparse.MC_CHOICES), "判断": list(cparse.TF_CHOICES)}.get(cmmmu_type(item), [])
    return item.letters if item.question_type == "multiple-choice" else []


class RandomAnswer:
    """Random Choice: a uniformly random option per multiple-choice (and CMMMU true/false) question,
    seeded by (seed, item id) so a resumed run answers the same. Open / fill-in questions get an
    empty answer (scored wrong): there is no option to pick. CMMMU MC picks one letter of A-D."""

    name = "random"
    sees_images = False

    def __init__(self, seed: int = 0):
        self.seed = seed

    def answer(self, item: Item) -> str:
        choices = _all_choices(item)
        if not choices:
            return ""
        return random.Random(zlib.crc32(f"{self.seed}:{item.id}".encode())).choice(choices)

    def describe(self) -> dict:
        return {"adapter": "RandomAnswer", "baseline": "random", "seed": self.seed,
                "open_questions": "empty answer (scored wrong)"}


def _gold_key(item: Item) -> str | None:
    a = item.answer
    if a is None:
        return None
    return json.dumps(a, ensure_ascii=False) if isinstance(a, list) else str(a)


def frequent_table(validation_items: list[Item]) -> dict:
    """Most frequent gold answer per (subject, answer kind) over validation items (MMMU §4.1, CMMMU §4.1).

    Kinds: MMMU "multiple-choice" / "short-answer"; CMMMU 选择 / 判断 / 填空. Ties go to the answer
    seen first in data order (letters therefore not alphabetically). ``"*"`` holds the split-wide
    most frequent answer per kind, used for a subject with no validation item of that kind.
    """
    counts: dict[tuple[str, str], Counter] = {}
    for it in validation_items:
        key = _gold_key(it)
        if key is None:
            continue
        kind = cmmmu_type(it) if it.benchmark == "cmmmu" else it.question_type
        for subject in (it.dimension, "*"):
            counts.setdefault((subject, kind), Counter())[key] += 1
    table: dict[str, dict[str, str]] = {}
    for (subject, kind), c in counts.items():
        best = max(c.values())
        table.setdefault(subject, {})[kind] = next(k for k, v in c.items() if v == best)  # first seen among ties
    return table


class FrequentAnswer:
    """Frequent Choice: per subject, the most frequent gold answer of the validation split for the
    question's kind (``frequent_table``); for MMMU open questions the most frequent answer string
    (a list gold counts as one answer, stored as its JSON; its first element is answered)."""

    name = "frequent"
    sees_images = False

    def __init__(self, table: dict, source: str = "validation split"):
        self.table, self.source = table, source

    def answer(self, item: Item) -> str:
        kind = cmmmu_type(item) if item.benchmark == "cmmmu" else item.question_type
        value = self.table.get(item.dimension, {}).get(kind) or self.table.get("*", {}).get(kind) or ""
        if value.startswith("["):
            try:
                value = str(json.loads(value)[0])
            except (ValueError, IndexError):
                pass
        if item.benchmark == "mmmu" and item.question_type == "multiple-choice" and value not in item.letters:
            return ""  # more frequent letter than this question has options: official random fallback decides
        return value

    def describe(self) -> dict:
        return {"adapter": "FrequentAnswer", "baseline": "frequent", "source": self.source, "table": self.table}


# --------------------------------------------------------------------------------------------- rows

def base_row(item: Item) -> dict:
    row = {
        "id": item.id, "benchmark": item.benchmark, "split": item.split, "subject": item.dimension,
        "discipline": item.group, "question_type": item.question_type, "difficulty": item.difficulty,
        "image_type": list(item.image_type), "answer": item.answer, "num_images": len(item.images),
    }
    if item.benchmark == "cmmmu":
        row["type"] = cmmmu_type(item)
    return row


def failed_row(item: Item, error: str) -> dict:
    return {**base_row(item), "status": "failed", "response": None, "truncated": False, "error": error}


def _prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode()).hexdigest()[:12]


def generate_items(items: list[Item], adapter, store: RunStore, max_new_tokens: int = 32, batch_size: int = 8,
                   ocr=None, retry_failed: bool = False, progress: bool = True, chat: bool = True) -> RunStore:
    """Generate a response for every item not yet in ``store`` and append its row (flushed per batch).

    ``adapter``: a model adapter with ``generate`` or a baseline with ``answer(item)``.
    ``ocr``: an ``mmbench_lib.pipeline.ocr.OCR`` for the LLM + OCR baseline.
    """
    if retry_failed:
        store.drop({r["id"] for r in store.rows() if r.get("status") == "failed"})
    done = store.done_ids()
    todo = [it for it in items if it.id not in done]
    bar = tqdm(total=len(items), initial=len(items) - len(todo), desc=f"generating ({adapter.name})", disable=not progress)
    for start in range(0, len(todo), batch_size):
        batch = todo[start:start + batch_size]
        rows, reqs = {}, []
        for it in batch:
            try:
                if getattr(adapter, "sees_images", False):
                    images = load_visual_inputs(it)
                else:
                    check_media(it)  # a blind model still answers only the items a VLM could
                    images = []
                if hasattr(adapter, "answer"):
                    rows[it.id] = {**base_row(it), "status": "ok", "response": adapter.answer(it), "num_tokens": 0,
                                   "truncated": False, "source": adapter.name}
                    continue
                prompt, ocr_texts = build_prompt(it, ocr)
            except MediaError as e:
                rows[it.id] = failed_row(it, str(e))
                continue
            except Exception as e:  # noqa: BLE001 - e.g. an unreadable image for OCR: mark this item only
                rows[it.id] = failed_row(it, f"{type(e).__name__}: {e}")
                continue
            extra = {"prompt_sha": _prompt_hash(prompt)}
            if ocr is not None:
                extra["ocr"] = {str(k): v for k, v in ocr_texts.items()}
            reqs.append((it, GenerateRequest(it.id, prompt, images, chat=chat, max_new_tokens=max_new_tokens), extra))
        rows.update(_generate(reqs, adapter))
        store.append([rows[it.id] for it in batch])
        bar.update(len(batch))
    bar.close()
    return store


def _generate(reqs, adapter) -> dict:
    if not reqs:
        return {}
    try:
        gens = adapter.generate([r for _, r, _ in reqs])
        return {it.id: {**base_row(it), "status": "ok", "response": g.text, "num_tokens": g.num_tokens,
                        "truncated": bool(g.hit_limit), "max_new_tokens": r.max_new_tokens, **extra}
                for (it, r, extra), g in zip(reqs, gens)}
    except Exception:  # noqa: BLE001
        if len(reqs) == 1:
            it = reqs[0][0]
            log.warning("item %s failed:\n%s", it.id, traceback.format_exc())
            return {it.id: failed_row(it, f"model call failed: {traceback.format_exc(limit=2).strip().splitlines()[-1]}")}
        out = {}
        for triple in reqs:  # isolate the failing item
            out.update(_generate([triple], adapter))
        return out


# --------------------------------------------------------------------------------------------- scoring

def _write_mmmu_official(items: list[Item], stored: dict, root: Path) -> None:
    by_subject: dict[str, list[dict]] = OrderedDict()
    for it in items:
        r = stored.get(it.id)
        if r is None or r.get("status") != "ok":
            continue
        rec = {"id": it.id, "question_type": mparse.normalize_question_type(it.question_type),
               "answer": it.meta.get("answer_raw", it.answer), "response": r["response"]}
        if it.question_type == "multiple-choice":
            index2ans, all_choices = mparse.mc_info(it.choices)
            rec.update(all_choices=all_choices, index2ans=index2ans)
        by_subject.setdefault(it.dimension, []).append(rec)
    if root.exists():
        for old in root.glob("*/output.json"):
            old.unlink()
    for subject, recs in by_subject.items():
        (root / subject).mkdir(parents=True, exist_ok=True)
        write_json_atomic(root / subject / "output.json", recs)


def _write_cmmmu_official(items: list[Item], stored: dict, root: Path) -> tuple[Path, Path]:
    root.mkdir(parents=True, exist_ok=True)
    resp, gold = root / "responses.jsonl", root / "gold.jsonl"
    with open(resp, "w", encoding="utf-8") as fr, open(gold, "w", encoding="utf-8") as fg:
        for it in items:
            r = stored.get(it.id)
            if r is None or r.get("status") != "ok":
                continue
            ctype = cmmmu_type(it)
            fr.write(json.dumps({"id": it.id, "type": ctype, "response": r["response"]}, ensure_ascii=False) + "\n")
            g = {"id": it.id, "type": ctype, "answer": it.answer, "category": it.meta["category_zh"],
                 "subcategory": it.meta["subject_zh"]}
            if ctype == "选择":
                g.update({f"option{i}": (it.choices[i - 1] if i <= len(it.choices) else "") for i in range(1, 5)})
            fg.write(json.dumps(g, ensure_ascii=False) + "\n")
    return resp, gold


def _tally(rows: list[dict], key, intervals: bool = True) -> dict:
    """``{key: entry}`` (``core.metrics`` schema: n, correct, accuracy as a fraction, 95% bootstrap
    ``ci_low`` / ``ci_high``, each question its own cluster; failed, n/a) over the judged rows;
    failed and unjudged rows of a key are counted, not scored."""

    groups: dict = OrderedDict()
    for r in rows:
        if r.get("correct") is None:
            continue
        for k in key(r):
            groups.setdefault(k, []).append(r)
    left_out: dict = {}
    for r in rows:
        if r.get("correct") is None:
            for k in key(r):
                left_out.setdefault(k, Counter())["failed" if r.get("status") == "failed" else "n/a"] += 1
    out = {}
    for k, rs in groups.items():
        c, n = sum(bool(r["correct"]) for r in rs), len(rs)
        lo, hi = ci_fractions([{"id": r["id"], "correct": bool(r["correct"])} for r in rs]) if intervals else (None, None)
        out[k] = entry(c, n, failed=left_out.get(k, {}).get("failed", 0), na=left_out.get(k, {}).get("n/a", 0),
                       ci_low=lo, ci_high=hi)
    return out


def score_run(items: list[Item], store: RunStore, use_random: bool = True, write: bool = True) -> tuple[list[dict], dict]:
    """Parse and score every stored response of ``items`` with the official parsers (via ``responses``).

    Writes ``scored.jsonl`` (one row per item: response, truncated, parsed_pred, fallback, mode,
    correct; failed items with their error) and ``metrics.json``; on a test split without answers
    writes the submission file instead of accuracies. Returns ``(rows, metrics)``.
    """
    import warnings


    if not items:
        raise ValueError("no items to score")
    benchmark = items[0].benchmark
    stored = {r["id"]: r for r in store.rows()}
    ok_items = [it for it in items if stored.get(it.id, {}).get("status") == "ok"]
    has_gold = any(it.answer is not None for it in ok_items)
    official = store.dir / "official"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # subsets of subjects are expected here; the counts say what was scored
        if benchmark == "mmmu":
            _write_mmmu_official(items, stored, official)
            srows, summary = responses.score_mmmu_outputs(official, use_random=use_random) if ok_items else ([], {})
        elif has_gold:
            resp, gold = _write_cmmmu_official(items, stored, official)
            srows, summary = responses.score_cmmmu_outputs(resp, gold, use_random=use_random)
        else:
            _write_cmmmu_official(items, stored, official)
            srows, summary = [], {}
    by_id = {str(r["id"]): r for r in srows}
    rows = []
    for it in items:
        r = stored.get(it.id)
        if r is None:
            continue
        row = {**base_row(it), "status": r["status"], "response": r.get("response"), "truncated": r.get("truncated", False)}
        if r["status"] != "ok":
            row.update(parsed_pred=None, fallback=None, mode=None, correct=None, error=r.get("error"))
        else:
            s = by_id.get(it.id, {})
            row.update(parsed_pred=s.get("parsed_pred"), fallback=s.get("fallback", False),
                       mode=s.get("parse_mode", s.get("mode")), correct=s.get("correct") if has_gold else None)
        rows.append(row)

    ok = [r for r in rows if r["status"] == "ok"]
    counts = {"items": len(items), "stored": len(rows), "ok": len(ok), "failed": sum(r["status"] == "failed" for r in rows),
              "missing": len(items) - len(rows), "truncated": sum(bool(r["truncated"]) for r in ok),
              "fallbacks": sum(bool(r["fallback"]) for r in ok),
              "empty_responses": sum(not (r["response"] or "").strip() for r in ok)}
    metrics = {"schema_version": SCHEMA_VERSION, "benchmark": benchmark, "split": items[0].split, "parser": "official (mmbench_lib.pipeline.rescoring)",
               "random_fallback": "random.Random(42), official order" if use_random else "none (scored wrong)",
               "counts": counts, "scored": has_gold}
    if has_gold:
        metrics.update(
            overall={**summary["overall"], **{k: v for k, v in _tally(rows, lambda r: ["all"]).get("all", {}).items()
                                              if k in ("ci_low", "ci_high", "failed", "n/a")}},
            per_subject=_tally(rows, lambda r: [r["subject"]]),
            per_discipline=_tally(rows, lambda r: [r["discipline"]]),
            per_difficulty=_tally(rows, lambda r: [r["difficulty"] or "(none)"]),
            per_image_type=_tally(rows, lambda r: r["image_type"] or ["(none)"]),
            per_question_type=_tally(rows, lambda r: [r["question_type"]]),
            official=summary.get("official"),
        )
        metrics["overall_excluding_truncated"] = _tally([r for r in rows if not r["truncated"]], lambda r: ["all"]).get("all")
    if write:
        with open(store.dir / "scored.jsonl", "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
        if not has_gold:
            metrics["submission"] = str(_write_submission(benchmark, items, stored, rows, store.dir))
        store.write_metrics(metrics)
    return rows, metrics


def _write_submission(benchmark: str, items, stored, rows, out: Path) -> Path:
    """MMMU: ``{id: prediction}`` (MC: the parsed letter; open: the raw response, re-parsed by the
    scorer; spec §3.9). CMMMU: response-mode rows ``{id, type, response}`` (spec §4.6)."""
    by_id = {r["id"]: r for r in rows}
    if benchmark == "mmmu":
        sub = {}
        for it in items:
            r = by_id.get(it.id)
            if r is None or r["status"] != "ok":
                continue
            sub[it.id] = r["parsed_pred"] if it.question_type == "multiple-choice" else r["response"]
        path = out / "submission.json"
        write_json_atomic(path, sub)
        return path
    path = out / "submission.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for it in items:
            r = stored.get(it.id)
            if r is not None and r["status"] == "ok":
                f.write(json.dumps({"id": it.id, "type": cmmmu_type(it), "response": r["response"]}, ensure_ascii=False) + "\n")
    return path


# --------------------------------------------------------------------------------------------- runs

def label_for(model: str, baseline: str) -> str:
    """Short run label: ``random``, ``frequent``, the model name, or ``<model>+ocr``."""
    name = model.split(":", 1)[-1].rstrip("/").split("/")[-1] if isinstance(model, str) else getattr(model, "name", "model")
    return {"random": "random", "frequent": "frequent", "ocr": f"{name}+ocr"}.get(baseline, name)


def load_items(benchmark: str, source, split: str, subjects=None, cache_dir=None) -> list[Item]:

    if benchmark == "mmmu":
        return mmmu.load(source, split=split, subjects=subjects, cache_dir=cache_dir)
    if benchmark == "cmmmu":
        return cmmmu.load(source, split=split, categories=subjects, cache_dir=cache_dir)
    raise ValueError(f"generation supports mmmu and cmmmu, not {benchmark!r}")


def evaluate_generation(benchmark: str, source, out_dir, model="smollm2", baseline: str = "none",
                        split: str = "validation", subjects=None, max_new_tokens: int = 32, batch_size: int = 8,
                        device: str = "auto", limit: int | None = None, seed: int = 0, parameters: dict | None = None,
                        use_random: bool = True, adapter=None, progress: bool = True, cache_dir=None) -> dict:
    """Load items, generate (or answer by a baseline), store responses, score them; returns the metrics.

    ``baseline``: ``"none"`` (the model generates), ``"random"``, ``"frequent"`` (validation-split
    answers of the same ``source`` and subjects), or ``"ocr"`` (the model generates from the prompt
    with tesseract text of each image). Rerunning with the same ``out_dir`` resumes.
    """

    if baseline not in BASELINES:
        raise ValueError(f"unknown baseline {baseline!r}; use one of {BASELINES}")
    if isinstance(model, str) and model.startswith("random") and baseline == "none":
        baseline = "random"
    import torch

    torch.manual_seed(seed)
    items = load_items(benchmark, source, split, subjects, cache_dir)
    if limit:
        items = items[:limit]
    ocr = None
    if baseline == "random":
        adapter = RandomAnswer(seed)
    elif baseline == "frequent":
        val_split = "validation" if benchmark == "mmmu" else "val"
        val = items if items and items[0].split == val_split and not limit else load_items(benchmark, source, val_split, subjects, cache_dir)
        adapter = FrequentAnswer(frequent_table(val), source=f"{val_split} split of {source}")
    else:
        if baseline == "ocr":

            ocr = OCR(LANGS[benchmark])  # raises OCRUnavailable with the install command
        adapter = adapter or load_adapter(model, device=device)
        if baseline == "ocr" and getattr(adapter, "sees_images", False):
            raise ValueError("the OCR baseline is for text-only models; this model sees the images")
    store = RunStore(out_dir)
    described = adapter.describe()
    previous = store.manifest()
    if previous.get("generation") and store.rows():
        old = previous["generation"]
        new = {"baseline": baseline, "max_new_tokens": max_new_tokens, "model": described.get("name", described.get("adapter"))}
        diff = {k: (old.get(k), v) for k, v in new.items() if old.get(k) != v}
        if diff:
            raise ValueError(f"{out_dir} holds responses made with other settings {diff}; use a new run id")
    store.update_manifest(
        **manifest.base_manifest(parameters, seed), benchmark=benchmark, split=split, source=str(source),
        subjects=subjects, n_items=len(items), model=described,
        generation={"baseline": baseline, "max_new_tokens": max_new_tokens, "do_sample": False, "chat_template": True,
                    "model": described.get("name", described.get("adapter"))},
        ocr=ocr.describe() if ocr else None, deviations=DEVIATIONS[benchmark],
    )
    generate_items(items, adapter, store, max_new_tokens=max_new_tokens, batch_size=batch_size, ocr=ocr, progress=progress)
    _rows, metrics = score_run(items, store, use_random=use_random)
    metrics.update(model=described.get("name", described.get("adapter")), baseline=baseline, label=label_for(model, baseline),
                   max_new_tokens=max_new_tokens)
    if ocr is not None:
        metrics["ocr"] = {**ocr.describe(), "tesseract_calls_this_run": ocr.calls}
    store.write_metrics(metrics)
    store.update_manifest(finished=manifest.now(), peak_memory=manifest.peak_memory())
    return metrics


# --------------------------------------------------------------------------------------------- tables

def breakdown_table(runs: dict[str, dict], key: str):
    """Accuracy (%) of several runs side by side for one breakdown (``per_subject``, ``per_discipline``,
    ``per_difficulty``, ``per_image_type``, ``per_question_type``), with the item count ``n``."""
    import pandas as pd

    names = list(dict.fromkeys(k for m in runs.values() for k in (m.get(key) or {})))
    table = pd.DataFrame({key.removeprefix("per_"): names})
    first = next(iter(runs.values()))
    for label, m in runs.items():
        table[label] = [100 * m[key][k]["accuracy"] if k in (m.get(key) or {}) else None for k in names]
    table["n"] = [((first.get(key) or {}).get(k) or {}).get("n") for k in names]
    return table


def summary_table(runs: dict[str, dict]):
    """One row per run: overall accuracy (%) with its 95% bootstrap interval, items, failed,
    truncated, parser fallbacks."""
    import pandas as pd

    def pct(m, k):
        v = (m.get("overall") or {}).get(k)
        return None if v is None else 100 * v

    return pd.DataFrame([
        {"run": label, "accuracy": pct(m, "accuracy"), "ci_low": pct(m, "ci_low"), "ci_high": pct(m, "ci_high"),
         "n": (m.get("overall") or {}).get("n"), "failed": m["counts"]["failed"], "truncated": m["counts"]["truncated"],
         "fallbacks": m["counts"]["fallbacks"]}
        for label, m in runs.items()
    ])


RESPONSE_COLUMNS = ("run", "id", "question_type", "response", "truncated", "parsed_pred", "mode", "fallback",
                    "answer", "correct", "status")


def responses_table(out_dir, labels) -> "pd.DataFrame":
    """Every scored response of the runs ``out_dir/<label>/scored.jsonl``, one row each, labelled by run."""
    import pandas as pd

    frames = []
    for label in labels:
        df = pd.read_json(Path(out_dir) / label / "scored.jsonl", lines=True)
        df.insert(0, "run", label)
        frames.append(df)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return df[[c for c in RESPONSE_COLUMNS if c in df]]
