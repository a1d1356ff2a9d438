"""The generation loop for MMMU and CMMMU: items -> official prompt -> model -> raw responses -> official parsers.

More: docs/modules.md, ``mmbench_lib/pipeline/generation.py``.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter, OrderedDict

from mmbench_lib.core import manifest
from mmbench_lib.core.record import from_manifest
from mmbench_lib.core.items import Item
from mmbench_lib.core.paths import safe_name
from mmbench_lib.core.datasource import data_revision, describe as describe_data
from mmbench_lib.core.metrics import SCHEMA_VERSION, ci_fractions, entry
from mmbench_lib.core.media import check_media, load_visual_inputs
from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.core.rows import base_row, failed_row, ok_row
from mmbench_lib.core.store import RunStore
from mmbench_lib.models import load_adapter
from mmbench_lib.pipeline import rescoring as responses
from mmbench_lib.pipeline.backend import call_size, with_backend
from mmbench_lib.pipeline.baselines import BASELINES, FrequentAnswer, RandomAnswer, frequent_table, refusal  # noqa: F401
from mmbench_lib.pipeline.selection import check_same_selection
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.pipeline.loop import run_loop
from mmbench_lib.pipeline.ocr import OCR, insert_ocr
from mmbench_lib.pipeline.resume import check_same_run, identity
from mmbench_lib.tasks.base import get_task
from mmbench_lib.tasks.thinking import STEP, split_trace
from mmbench_lib.tasks.protocols import protocol_for
from mmbench_lib.tasks.base import load_items as task_items
from mmbench_lib.pipeline.shards import select

__all__ = [
    "BASELINES", "RandomAnswer", "FrequentAnswer", "frequent_table", "build_prompt", "generate_items",
    "score_run", "evaluate_generation", "label_for", "load_items", "GenerationProtocol",
]


# --------------------------------------------------------------------------------------------- prompts

def build_prompt(item: Item, ocr=None, mode: str = "official") -> tuple[str, dict]:
    """The prompt of ``item`` under prompt ``mode`` (its task's ``prompt``; ``official`` by default); with ``ocr`` (an
    ``mmbench_lib.pipeline.ocr.OCR``), each image placeholder replaced by ``[Image k OCR text: ...]``.
    Returns ``(prompt, {k: ocr text})``."""
    task = get_task(item.benchmark)
    if not protocol_for(task).generates:
        raise ValueError(f"item {item.id!r}: {item.benchmark!r} is a {task.protocol} benchmark, not a generation one")
    text = task.prompt(item, mode)
    if ocr is None:
        return text, {}
    phs = [(k, ph, p) for k, ph, p in task.image_placeholders(item) if ph in text]
    texts = {k: ocr.read(p) for k, _ph, p in phs}
    return insert_ocr(text, {k: ph for k, ph, _ in phs}, texts), texts


# --------------------------------------------------------------------------------------------- the loop

def _prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode()).hexdigest()[:12]


class GenerationProtocol:
    """Generation for the shared loop (``mmbench_lib.pipeline.loop``). ``adapter``: a model adapter
    with ``generate``, or a baseline with ``answer(item)`` (answered while preparing, no model call)."""

    item_errors = (Exception,)  # e.g. an unreadable image for OCR marks that item only

    def __init__(self, adapter, max_new_tokens: int = 32, ocr=None, chat: bool = True, mode: str = "official"):
        self.adapter, self.max_new_tokens, self.ocr, self.chat, self.mode = adapter, max_new_tokens, ocr, chat, mode
        self.desc = adapter.name

    def prepare(self, item: Item):
        if getattr(self.adapter, "sees_images", False):
            images = load_visual_inputs(item)
        else:
            check_media(item)  # a blind model still answers only the items a VLM could
            images = []
        if hasattr(self.adapter, "answer"):
            return ok_row(item, response=self.adapter.answer(item), num_tokens=0, truncated=False, source=self.adapter.name)
        prompt, ocr_texts = build_prompt(item, self.ocr, self.mode)
        extra = {"prompt_sha": _prompt_hash(prompt)}
        if self.ocr is not None:
            extra["ocr"] = {str(k): v for k, v in ocr_texts.items()}
        return GenerateRequest(item.id, prompt, images, chat=self.chat, max_new_tokens=self.max_new_tokens), extra

    def call(self, pairs) -> list:
        return self.adapter.generate([req for _it, (req, _extra) in pairs])

    def finish(self, item: Item, request, g) -> dict:
        req, extra = request
        cut = split_trace(g.text)  # tasks/thinking.py: a named step; the trace and the raw text stay in the row
        if cut.how != "none":
            extra = {**extra, "thinking": cut.trace, "raw_response": g.text, "thinking_step": f"{STEP} ({cut.how})"}
        answer = cut.answer if cut.how != "none" else g.text
        return ok_row(item, response=answer, num_tokens=g.num_tokens, truncated=bool(g.hit_limit),
                      max_new_tokens=req.max_new_tokens, **extra)

    def failed(self, item: Item, error: str) -> dict:
        return failed_row(item, error, response=None, truncated=False)


def generate_items(items: list[Item], adapter, store: RunStore, max_new_tokens: int = 32, batch_size: int = 8,
                   ocr=None, retry_failed: bool = False, progress: bool = True, chat: bool = True,
                   label: str | None = None, mode: str = "official") -> RunStore:
    """Generate a response for every item not yet in ``store`` and append its row (flushed per batch).

    ``adapter``: a model adapter with ``generate`` or a baseline with ``answer(item)``.
    ``ocr``: an ``mmbench_lib.pipeline.ocr.OCR`` for the LLM + OCR baseline. ``label``: the progress label.
    ``mode``: the prompt mode (``tasks.modes``; the task's ``prompt(item, mode)``).
    """
    return run_loop(items, GenerationProtocol(adapter, max_new_tokens, ocr, chat, mode), store, batch_size=batch_size,
                    retry_failed=retry_failed, progress=progress, label=label)


# --------------------------------------------------------------------------------------------- scoring

def _tally(rows: list[dict], key, intervals: bool = True) -> dict:
    """``{key: entry}`` (``core.metrics`` schema: n, correct, accuracy as a fraction, 95% Wilson
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


def score_run(items: list[Item], store: RunStore, use_random: bool = True, write: bool = True,
              mode: str = "official") -> tuple[list[dict], dict]:
    """Parse and score every stored response of ``items`` with the official parsers (via ``responses``).

    Writes ``scored.jsonl`` (one row per item: response, truncated, parsed_pred, fallback, mode,
    correct; failed items with their error) and ``metrics.json``; on a test split without answers
    writes the submission file instead of accuracies. Returns ``(rows, metrics)``. Under an answer-line
    prompt ``mode`` the official files hold, per response, the text of its last ``Answer:`` line where it has
    one (``Task.parser_input``; the row keeps the whole response and the line as ``answer_line``).
    """
    import warnings


    if not items:
        raise ValueError("no items to score")
    benchmark = items[0].benchmark
    task = get_task(benchmark)
    stored = {r["id"]: r for r in store.rows()}
    lines, reads_line = {}, task.prompt_mode(mode).answer_line
    parsed = dict(stored)  # what the official files hold: the answer lines under an answer-line mode
    if reads_line:
        for i, r in stored.items():
            if r.get("status") == "ok":
                text, lines[i] = task.parser_input(r.get("response"), mode)
                parsed[i] = {**r, "response": text}
    ok_items = [it for it in items if stored.get(it.id, {}).get("status") == "ok"]
    has_gold = any(it.answer is not None for it in ok_items)
    official = store.dir / "official"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # subsets of subjects are expected here; the counts say what was scored
        files = task.write_official(items, parsed, official)
        srows, summary = responses.score_responses(benchmark, *files, use_random=use_random) if files else ([], {})
    by_id = {str(r["id"]): r for r in srows}
    rows = []
    for it in items:
        r = stored.get(it.id)
        if r is None:
            continue
        row = {**base_row(it), "status": r["status"], "response": r.get("response"), "truncated": r.get("truncated", False)}
        if it.id in lines:
            row["answer_line"] = lines[it.id]
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
              "empty_responses": sum(not (r["response"] or "").strip() for r in ok),
              "thinking_removed": sum(bool(stored[r["id"]].get("thinking_step")) for r in ok)}
    if reads_line:
        counts["answer_lines"] = sum(lines.get(r["id"]) is not None for r in ok)
    metrics = {"schema_version": SCHEMA_VERSION, "benchmark": benchmark, "split": items[0].split,
               "parser": "official (mmbench_lib.pipeline.rescoring)" + (", reading the last 'Answer:' line" if reads_line else ""),
               "prompt_mode": task.prompt_mode(mode).key,
               "random_fallback": "random.Random(42), official order" if use_random else "none (scored wrong)",
               "counts": counts, "scored": has_gold,
               "truncation_rate": counts["truncated"] / len(ok) if ok else None,
               "steps": [STEP] if counts["thinking_removed"] else []}
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
            read = [{**r, "response": lines.get(r["id"]) or r["response"]} for r in rows]  # what the parser read
            metrics["submission"] = str(task.write_submission(items, parsed, read, store.dir))
        store.write_metrics(metrics)
    return rows, metrics


# --------------------------------------------------------------------------------------------- runs

def label_for(model: str, baseline: str) -> str:
    """Short run label: ``random``, ``frequent``, the model name, or ``<model>+ocr``; also the sub-run's folder
    name, so it is one safe file name (``core.paths.safe_name``): a spec such as ``openai:..`` never becomes a path."""
    name = model.split(":", 1)[-1].rstrip("/").split("/")[-1] if isinstance(model, str) else getattr(model, "name", "model")
    name = safe_name(name)
    return {"random": "random", "frequent": "frequent", "ocr": f"{name}+ocr"}.get(baseline, name)


def load_items(benchmark: str, data, split: str | None = None) -> list[Item]:
    """Items of a generation benchmark's split (``tasks.load_items``): ``data`` is the task's data mapping with its
    split (``TaskSpec.load_args()``); a source path or hub id with ``split`` stands for ``{source, split}``."""
    task = get_task(benchmark)
    if not protocol_for(task).generates:
        raise ValueError(f"{benchmark!r} is a {task.protocol} benchmark, not a generation one")
    return task_items(benchmark, dict(data) if isinstance(data, dict) else {"source": data, "split": split})


def run_fields(config: RunSpec, model, items: list[Item], sharded: bool = False) -> dict:
    """What a generation run's metrics say about the run (one process or a merge of shards): the model as it
    described itself, the baseline, the label, the cap of new tokens, the display name and the data source."""
    gen, n = config.generation, len({it.id for it in items})
    return {"model": model, "baseline": gen.baseline, "label": label_for(config.model.spec, gen.baseline),
            "max_new_tokens": gen.max_new_tokens, "model_name": config.model.name or None,
            "data": describe_data(config.params(), n, sharded, get_task(config.benchmark).declared_size(config.task.split))}


def _answerer(config: RunSpec, items: list[Item], adapter):
    """The baseline or model that answers, and the OCR reader of the LLM + OCR baseline."""
    task, baseline, sel, data = get_task(config.benchmark), config.generation.baseline, config.selection, config.task.data
    if baseline == "random":
        return RandomAnswer(sel.seed), None
    if refusal(config.benchmark, baseline):
        raise ValueError(refusal(config.benchmark, baseline))
    if baseline == "frequent":
        val_split = task.validation_split
        whole = not sel.limit and not sel.option_settings() and sel.num_shards == 1
        val = items if items and items[0].split == val_split and whole else \
            load_items(config.benchmark, {**data, "split": val_split})
        return FrequentAnswer(frequent_table(val), source=f"{val_split} split of {data['source']}"), None
    ocr, judges = None, config.judges
    if baseline == "ocr":  # raises OCRUnavailable with the install command
        ocr = OCR(judges.ocr_lang or task.ocr_lang, **({"psm": judges.ocr_psm} if judges.ocr_psm is not None else {}))
    adapter = adapter or load_adapter(config.model.spec, **config.adapter_options())
    if baseline == "ocr" and getattr(adapter, "sees_images", False):
        raise ValueError("the OCR baseline is for text-only models; this model sees the images")
    return adapter, ocr


def evaluate_generation(config: RunSpec, adapter=None) -> dict:
    """Load items, generate (or answer by a baseline), store responses, score them; returns the metrics.

    ``config.baseline``: ``"none"`` (the model generates), ``"random"``, ``"frequent"`` (validation-split
    answers of the same ``source`` and subjects), or ``"ocr"`` (the model generates from the prompt
    with tesseract text of each image). ``adapter``: an already loaded model for ``none``/``ocr``.
    Rerunning with the same ``out_dir`` resumes. ``config.backend`` / ``batch_policy`` choose how the model
    generates (``mmbench_lib.pipeline.backend``). With ``num_shards > 1`` only this shard's items are generated,
    into the shard's own files; the metrics it writes are a preview of its items (the official random fallback
    is drawn over the whole run), the run's come from ``merge_sub_runs`` after every shard finished.
    """
    import torch

    t, gen, sel = config.task, config.generation, config.selection
    torch.manual_seed(sel.seed)
    benchmark, baseline, task = t.benchmark, gen.baseline, get_task(t.benchmark)
    items = config.select(load_items(benchmark, t.load_args()))
    items = select(items, sel.shard_index, sel.num_shards)
    adapter, ocr = _answerer(config, items, adapter)
    adapter = with_backend(adapter, config)
    sharded = sel.num_shards > 1
    store = RunStore(config.out_dir, shard=(sel.shard_index, sel.num_shards) if sharded else None)
    described = adapter.describe()
    name = described.get("name", described.get("adapter"))
    generation = {"baseline": baseline, "max_new_tokens": gen.max_new_tokens, "do_sample": False,
                  "chat_template": True, "model": name, "backend": config.backend_name, "prompt_mode": t.prompt_mode}
    check_same_run(store, identity({"benchmark": benchmark, "model": described, "generation": generation,
                                    "options": config.option_settings()}), config.identity())
    if store.rows():
        check_same_selection(config.out_dir, from_manifest(store.manifest()).params, config.params())
    store.update_manifest(
        **manifest.base_manifest(config.parameters, sel.seed), benchmark=benchmark, split=t.split,
        source=str(t.data["source"]), subjects=t.data["subjects"], n_items=len(items), model=described,
        generation=generation,
        shard={"index": sel.shard_index, "count": sel.num_shards, "item_ids": [it.id for it in items]}
        if sharded else None,
        ocr=ocr.describe() if ocr else None, deviations=task.deviations, options=config.option_settings(),
        spec=config.to_dict(), identity=config.identity(), prompt_mode=config.mode().describe(),
        data_revision=data_revision(config.task.data["source"]),  # datasets change in place (MMMU-Benchmark/MMMU#83)
    )
    label = label_for(config.model.spec, baseline)
    generate_items(items, adapter, store, max_new_tokens=gen.max_new_tokens, batch_size=call_size(adapter, config), ocr=ocr,
                   retry_failed=config.retry_failed, progress=config.progress,
                   label=f"{benchmark} {label}", mode=t.prompt_mode)
    _rows, metrics = score_run(items, store, use_random=gen.use_random, mode=t.prompt_mode)
    metrics.update(run_fields(config, name, items, sharded))
    if sharded:
        metrics["shard"] = {"index": sel.shard_index, "count": sel.num_shards,
                            "note": "this shard's items only; the run's metrics come from the merge"}
    if ocr is not None:
        metrics["ocr"] = {**ocr.describe(), "tesseract_calls_this_run": ocr.calls}
    store.write_metrics(metrics)
    store.update_manifest(finished=manifest.now(), peak_memory=manifest.peak_memory(),
                          model=adapter.describe())  # the generation paths as they ran
    return metrics
