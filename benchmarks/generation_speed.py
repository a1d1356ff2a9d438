"""Greedy generation speed: one ``generate`` call per request against the batched path.

Prints ONE JSON object on stdout (progress goes to stderr). Two workloads, both through the
adapters' ``generate_ids`` (one at a time: ``batched=False``), in the same process and thread
count, each after a warm-up, best of ``--repeats``:

- ``text_smollm2``: the MMMU demo validation questions, prompts by the official prompt function
  (``build_prompt``), chat template, ``max_new_tokens`` 16 as the MMMU notebook and
  ``params/20_generation/mmmu_demo_*.yaml``; the real SmolLM2-135M-Instruct, CPU, fp32;
- ``vlm_tiny_llava_336``: the same questions with their images on a random-weight LLaVA (CLIP
  336 px / patch 14: 576 image tokens per image).

- ``notebook_smollm2``: the path a run of ``notebooks/20_generation.ipynb`` takes with its DEFAULT parameters
  (``evaluate_generation`` of a ``RunConfig`` built as the notebook builds it: backend ``auto``, ``batch_policy``
  ``{}``, ``batch_size`` 8, ``max_new_tokens`` 16; the run loop, the store, the official parser), against the
  same loop with ``backend="hf"`` (one ``generate`` per request) and against the loop shape before the batch
  policy reached ``RunConfig`` (8 requests per call: ``batch_policy={"requests_per_call": 8}``). The model is
  loaded once, outside the timings; each run writes a fresh store.

For the first two: questions/second of both, their ratio, exact agreement of the token ids and agreement
of the answers the official MMMU parser extracts (both must be 1.0), batches and decode work; the
batched path's time for one new token (``prefill_only_seconds``: prompts, images and prefill, no decode
step) and ``ceiling_ratio`` = one at a time / that time, the most any batching of the decode steps can
reach on this machine (decode free); on
the kv-decode path (``mmbench_lib.models.cpu.kv_decode``) also the prompt tokens against the tokens the
prefill forwards ran (shared prefixes once, padding included) and the decode steps; whether the linear
layers ran on packed weights (``mmbench_lib.models.cpu.packed``; packing, once per loaded model, is timed apart as
``packing_seconds``) and the text prompts were prefilled end to end (``mmbench_lib.models.cpu.flat_prefill``).
``--peer lm-eval`` also times lm-evaluation-harness's ``HFLM.generate_until`` on the same model
object and prompts at several batch sizes when ``lm_eval`` is importable.

    .venv/bin/python benchmarks/generation_speed.py [--quick] [--threads 1] [--peer lm-eval] [--workloads notebook]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MMBENCH_PROGRESS", "off")  # stdout is the one JSON object: no bars on it
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from mmbench_lib.core.requests import GenerateRequest  # noqa: E402
from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy  # noqa: E402
from mmbench_lib.tasks import mmmu_parser as mparse  # noqa: E402

MAX_NEW_TOKENS = 16  # notebooks/20_generation.ipynb parameters and params/20_generation/mmmu_demo_*.yaml


def log(msg: str) -> None:
    print(f"[generation_speed] {msg}", file=sys.stderr, flush=True)


def demo_items(n: int | None):
    from mmbench_lib.demo import make_demo
    from mmbench_lib.tasks import mmmu

    d = make_demo(Path(tempfile.mkdtemp(prefix="genspeed_")))
    items = mmmu.load(d["mmmu"]["source"], split="validation")
    return items[:n] if n else items


def requests_for(items, images: bool, max_new_tokens: int) -> list[GenerateRequest]:
    from mmbench_lib.pipeline.generation import build_prompt, load_visual_inputs

    return [GenerateRequest(it.id, build_prompt(it)[0], load_visual_inputs(it) if images else [],
                            max_new_tokens=max_new_tokens) for it in items]


def parsed(item, text: str):
    """The answer the official MMMU parser takes from a response (seeded fallback)."""
    if item.question_type == "multiple-choice":
        index2ans, all_choices = mparse.mc_info(item.choices)
        return mparse.parse_multi_choice(text, all_choices, index2ans, random.Random(0)).pred
    return mparse.parse_open(text)


def generate_in_chunks(adapter, reqs, chunk: int):
    """The batched path as the run loop calls it: ``chunk`` requests per ``generate`` call (0: all at once)."""
    if not chunk:
        return adapter.generate_ids(reqs)
    return [t for i in range(0, len(reqs), chunk) for t in adapter.generate_ids(reqs[i:i + chunk])]


def pack_weights(adapter) -> dict:
    """Pack the model's linear weights once, as the first batched call would (``models.cpu.packed``; a cost per
    loaded model, like loading the weights, so outside the timed runs), and say what it took."""
    from mmbench_lib.models.cpu import packed

    t0 = time.perf_counter()
    with packed.packed_linears(adapter.model) as reason:
        pass
    return {"packing_seconds": round(time.perf_counter() - t0, 3), "packing_note": reason}


def compare(adapter, items, reqs, repeats: int, loop_batch: int = 0) -> dict:
    packing = pack_weights(adapter)
    adapter.generate_ids(reqs[:2], batched=False)  # warm-up
    adapter.generate_ids(reqs[:2])
    t_one = t_bat = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        one = adapter.generate_ids(reqs, batched=False)
        t_one = min(t_one, time.perf_counter() - t0)
        log(f"  one at a time {t_one:.2f} s")
        adapter.generator = gen = BatchedGenerator(BatchPolicy())
        t0 = time.perf_counter()
        bat = generate_in_chunks(adapter, reqs, loop_batch)
        t_bat = min(t_bat, time.perf_counter() - t0)
        log(f"  batched       {t_bat:.2f} s, batches {gen.batches}")
    # The ceiling of any batching: the batched path asked for one new token (prompt building, image
    # processing, vision tower and prefill, with shared prefixes once) and no decode step. Batching pays
    # only on the decode steps, so one-at-a-time / this time bounds the ratio from above on this machine.
    first = [dataclasses.replace(r, max_new_tokens=1) for r in reqs]
    t_pre = float("inf")
    for _ in range(repeats):
        adapter.generator = BatchedGenerator(BatchPolicy())
        t0 = time.perf_counter()
        generate_in_chunks(adapter, first, loop_batch)
        t_pre = min(t_pre, time.perf_counter() - t0)
    log(f"  batched, prefill only (1 new token) {t_pre:.2f} s")
    texts_one = [adapter.finish(r, t).text for r, t in zip(reqs, one)]
    texts_bat = [adapter.finish(r, t).text for r, t in zip(reqs, bat)]
    n = len(reqs)
    lengths = [len(t) for t in one]
    return {
        "questions": n, "max_new_tokens": reqs[0].max_new_tokens, "policy": gen.policy.describe(),
        "requests_per_generate_call": loop_batch or n,
        "new_tokens_avg": round(sum(lengths) / n, 2), "new_tokens_min": min(lengths), "new_tokens_max": max(lengths),
        "one_at_a_time_seconds": round(t_one, 3), "batched_seconds": round(t_bat, 3),
        "one_at_a_time_qps": round(n / t_one, 3), "batched_qps": round(n / t_bat, 3),
        "ratio_batched_over_one_at_a_time": round(t_one / t_bat, 3),
        "prefill_only_seconds": round(t_pre, 3), "ceiling_ratio": round(t_one / t_pre, 3),
        "prefill_share_of_batched": round(t_pre / t_bat, 3),
        "decoder": adapter.describe()["generation"].get("decoder"), **gen.paths(adapter), **packing,
        "batches": gen.batches, "decode_row_steps": gen.row_steps, "decode_steps": len(gen.decode_widths) or None,
        "prompt_tokens": gen.prompt_tokens or None, "prefill_tokens_run": gen.prefill_tokens or None,
        "decode_row_steps_without_dropping": sum(gen.batches) * reqs[0].max_new_tokens,
        "exact_token_agreement": sum(a == b for a, b in zip(one, bat)) / n,
        "parsed_answer_agreement": sum(parsed(it, a) == parsed(it, b)
                                       for it, a, b in zip(items, texts_one, texts_bat)) / n,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "_texts": texts_bat,
    }


def notebook_run(source: str, limit: int | None, repeats: int, max_new_tokens: int) -> dict:
    """Notebook 20's default run (the run loop and its store) against one request at a time (see the module doc)."""
    from mmbench_lib.models import load_adapter
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.generation import evaluate_generation

    adapter = load_adapter("smollm2", device="cpu")
    shapes = {"notebook_default": {}, "one_at_a_time": {"backend": "hf"},
              "eight_per_call": {"batch_policy": {"requests_per_call": 8}}}

    def run(kw: dict) -> tuple[float, dict, dict, float]:
        out = Path(tempfile.mkdtemp(prefix="genspeed_nb_"))
        config = RunConfig("mmmu", out, **{"source": source, "split": "validation", "model": "smollm2", "baseline": "none",
                           "max_new_tokens": max_new_tokens, "batch_size": 8, "limit": limit, "device": "cpu",
                           "progress": False, **kw})
        t0, c0 = time.perf_counter(), time.process_time()
        metrics = evaluate_generation(config, adapter)
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
        rows = {r["id"]: r for r in map(json.loads, (out / "scored.jsonl").read_text().splitlines())}
        manifest = json.loads((out / "manifest.json").read_text())
        return took, rows, {"metrics": metrics, "generation": manifest["model"]["generation"], "cpu": cpu}

    run({"limit": 2})  # warm-up
    best: dict = {}
    for _ in range(repeats):
        for name, kw in shapes.items():
            took, rows, info = run(kw)
            if name not in best or took < best[name][0]:
                best[name] = (took, rows, info)
            log(f"  notebook path {name}: {took:.2f} s wall, {info['cpu']:.2f} s CPU")
    n = len(best["notebook_default"][1])
    default, one, eight = (best[k] for k in ("notebook_default", "one_at_a_time", "eight_per_call"))
    ids = sorted(default[1])
    return {
        "questions": n, "max_new_tokens": max_new_tokens, "call": "pipeline.generation.evaluate_generation(RunConfig "
        "as notebooks/20_generation.ipynb builds it) with the model loaded once",
        "notebook_defaults": {"backend": "auto", "batch_policy": {}, "batch_size": 8},
        "generation_as_recorded": default[2]["generation"],
        "batched_seconds": round(default[0], 3), "one_at_a_time_seconds": round(one[0], 3),
        "eight_per_call_seconds": round(eight[0], 3),
        "batched_qps": round(n / default[0], 3), "one_at_a_time_qps": round(n / one[0], 3),
        "eight_per_call_qps": round(n / eight[0], 3),
        "ratio_batched_over_one_at_a_time": round(one[0] / default[0], 3),
        "ratio_eight_per_call_over_one_at_a_time": round(one[0] / eight[0], 3),
        # this process's CPU seconds (one torch thread): what the paths cost when other processes share the cores
        "cpu_seconds": {k: round(v[2]["cpu"], 3) for k, v in best.items()},
        "cpu_ratio_batched_over_one_at_a_time": round(one[2]["cpu"] / default[2]["cpu"], 3),
        "cpu_ratio_eight_per_call_over_one_at_a_time": round(one[2]["cpu"] / eight[2]["cpu"], 3),
        "exact_token_agreement": sum(default[1][i]["response"] == one[1][i]["response"] for i in ids) / n,
        "parsed_answer_agreement": sum(default[1][i]["parsed_pred"] == one[1][i]["parsed_pred"] for i in ids) / n,
        "accuracy_default": default[2]["metrics"]["overall"]["accuracy"],
        "accuracy_one_at_a_time": one[2]["metrics"]["overall"]["accuracy"],
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


def lm_eval_peer(adapter, items, reqs, texts, batch_sizes) -> dict:
    try:
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM
    except Exception as e:  # noqa: BLE001
        return {"status": "skipped", "reason": f"lm_eval not importable: {type(e).__name__}: {e}"}
    import lm_eval

    gen_kwargs = {"until": [], "max_gen_toks": reqs[0].max_new_tokens, "do_sample": False}
    contexts = [adapter.render(r)[0] for r in reqs]  # the chat-templated text our adapter feeds the model

    def instances(cs):
        return [Instance("generate_until", {}, (c, dict(gen_kwargs)), i) for i, c in enumerate(cs)]

    timings = {}
    for bs in batch_sizes:
        lm = HFLM(pretrained=adapter.model, tokenizer=adapter.tokenizer, batch_size=bs,
                  device=str(adapter.device), dtype=next(adapter.model.parameters()).dtype)
        lm.generate_until(instances(contexts[:2]), disable_tqdm=True)  # warm-up
        t0 = time.perf_counter()
        out = lm.generate_until(instances(contexts), disable_tqdm=True)
        timings[bs] = (time.perf_counter() - t0, out)
        log(f"  lm-eval batch_size={bs}: {timings[bs][0]:.2f} s")
    best = min(timings, key=lambda b: timings[b][0])
    t, out = timings[best]
    n = len(reqs)
    return {
        "status": "ok", "lm_eval_version": getattr(lm_eval, "__version__", "?"), "best_batch_size": best,
        "seconds": round(t, 3), "qps": round(n / t, 3),
        "qps_by_batch_size": {str(b): round(n / v[0], 3) for b, v in timings.items()},
        "exact_text_agreement_with_ours": sum(a.strip() == b for a, b in zip(out, texts)) / n,
        "parsed_answer_agreement_with_ours": sum(parsed(it, a.strip()) == parsed(it, b)
                                                 for it, a, b in zip(items, out, texts)) / n,
    }


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tiny run (6 text, 3 image questions)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--max-new-tokens", type=int, default=MAX_NEW_TOKENS)
    ap.add_argument("--text-questions", type=int, default=None, help="default: all MMMU demo questions")
    ap.add_argument("--image-questions", type=int, default=None, help="default: all MMMU demo questions")
    ap.add_argument("--repeats", type=int, default=1, help="timed runs of each path; the best counts")
    ap.add_argument("--peer", choices=["lm-eval"], default=None)
    ap.add_argument("--peer-batch-sizes", default="4,8,16,32")
    ap.add_argument("--workloads", default="text,image,notebook",
                    help="comma-separated: text (SmolLM2), image (tiny LLaVA), notebook (notebook 20's default run)")
    ap.add_argument("--loop-batch", type=int, default=0,
                    help="requests per generate call, as the run loop's batch_size (0: all at once)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    from mmbench_lib.models import load_adapter
    from mmbench_lib.models.hf import ImageTextToText
    from mmbench_lib.models.tiny import tiny_llava

    result = {
        "benchmark": "generation_speed", "quick": args.quick, "threads": torch.get_num_threads(),
        "repeats": args.repeats, "device": "cpu", "dtype": "float32",
        "torch": torch.__version__, "transformers": __import__("transformers").__version__,
        "python": platform.python_version(), "cpu_count": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "workloads": {},
    }
    wanted = set(args.workloads.split(","))
    if "notebook" in wanted:
        from mmbench_lib.demo import make_demo

        source = make_demo(Path(tempfile.mkdtemp(prefix="genspeed_")))["mmmu"]["source"]
        limit = args.text_questions or (6 if args.quick else None)
        log(f"notebook workload: notebook 20's default run vs one at a time, {limit or 'all'} MMMU demo questions")
        result["workloads"]["notebook_smollm2"] = notebook_run(str(source), limit, args.repeats, args.max_new_tokens)
    if "text" not in wanted and "image" not in wanted:
        result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(result, indent=1))
        return result
    items = demo_items(args.text_questions or (6 if args.quick else None))
    log(f"text workload: SmolLM2-135M-Instruct, {len(items)} MMMU demo questions")
    a = load_adapter("smollm2", device="cpu")
    reqs = requests_for(items, images=False, max_new_tokens=args.max_new_tokens)
    w = {"model": "SmolLM2-135M-Instruct (real weights)",
         "prompt_tokens_avg": round(sum(len(a.tokenizer(a.render(r)[0])["input_ids"]) for r in reqs) / len(reqs), 1)}
    w.update(compare(a, items, reqs, args.repeats, args.loop_batch))
    texts = w.pop("_texts")
    if args.peer == "lm-eval":
        log("  peer: lm-evaluation-harness HFLM.generate_until")
        sizes = [int(s) for s in args.peer_batch_sizes.split(",")]
        w["peer_lm_eval"] = lm_eval_peer(a, items, reqs, texts, sizes[:2] if args.quick else sizes)
        if w["peer_lm_eval"].get("status") == "ok":
            w["ratio_batched_over_lm_eval_best"] = round(w["batched_qps"] / w["peer_lm_eval"]["qps"], 3)
    result["workloads"]["text_smollm2"] = w
    del a

    items = demo_items(args.image_questions or (3 if args.quick else None))
    log(f"image workload: tiny LLaVA 336/14 (576 image tokens per image), {len(items)} MMMU demo questions")
    model, processor = tiny_llava(image_size=336, patch_size=14)
    a = ImageTextToText(model, processor, "tiny-llava-336")
    reqs = requests_for(items, images=True, max_new_tokens=args.max_new_tokens)
    w = {"model": "random-weight LlavaForConditionalGeneration, CLIP 336/14 + 2-layer Llama (hidden 64)",
         "images_per_question": [len(r.images) for r in reqs],
         "prompt_tokens_avg": round(sum(a.encode_batch([a.render(r)[0]], [r.images])["input_ids"].shape[1]
                                        for r in reqs) / len(reqs), 1)}
    w.update(compare(a, items, reqs, args.repeats, args.loop_batch))
    w.pop("_texts")
    result["workloads"]["vlm_tiny_llava_336"] = w
    result["notes"] = [
        "qps = questions/second through adapter.generate_ids, prompt building, tokenising and image processing included",
        "a shared CPU: timings are noisy; the agreement figures are exact",
    ]
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]  # 1, 5, 15 minutes
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
