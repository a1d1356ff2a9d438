"""GPU time on paper through vLLM, beside the HF engine's: the FLOP and byte model of ``gpu_estimate.py``.

Prints ONE JSON object (docs/performance.md explains it). Same model (LLaVA-1.5-7B, bf16), same hardware
(H100 SXM), same workloads and the same formulas (``gpu_estimate.forward_seconds``, ``decode_step_seconds``,
``lm_flops``, ``vision_flops``); what vLLM changes:

- SEED-2 ranking through ``prompt_logprobs``: every choice is its own prompt of P + C tokens. vLLM 0.32 does not
  READ its prefix cache for a request that asks for prompt log-probabilities (``SamplingParams``:
  ``skip_reading_prefix_cache`` defaults to True then, because cached positions have no logits), so the
  language model pays ``k (P + C)`` tokens as the HF reference scorer does; the image is encoded once (vLLM's
  encoder cache is keyed by the image's hash). ``--prefix-cache-read`` prices the case where the cache is read
  (the HF engine's work: P once, then k C).
- MMMU generation: continuous batching as the HF kv-decode path, at the width the client keeps in flight
  (``concurrency``, default 32) or more (``--vllm-batch``), capped by the KV cache that fits in the GPU's memory
  next to the weights (``--memory-fraction`` 0.9, paged, no padding).
- Eight H100: one vLLM server with data_parallel_size=8 (a 7B model fits one GPU; tensor parallelism would only
  add all-reduces) or eight shards of the HF engine: both divide the time by 8 at best (no cross-GPU traffic).

    .venv/bin/python benchmarks/vllm_gpu_estimate.py [--mfu 0.5] [--bwu 0.7] [--concurrency 32] [--vllm-batch 128]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_estimate as g  # noqa: E402


def kv_bytes_per_row(context: float) -> float:
    return 2 * g.LM["layers"] * g.LM["width"] * context * g.LM["bytes_per_param"]


def max_rows(context: float, memory_fraction: float, gpu_bytes: float = 80e9) -> int:
    """Rows whose KV cache fits next to the weights (vLLM pages it, so no padding is reserved)."""
    free = gpu_bytes * memory_fraction - g.LM["params"] * g.LM["bytes_per_param"]
    return max(1, int(free // kv_bytes_per_row(context)))


def seed2_vllm(mfu: float, prefix_cache_read: bool) -> dict:
    w = g.SEED2
    prefix = g.IMAGE_TOKENS * w["images"] + w["text_tokens"]
    k, c = w["choices"], w["choice_tokens"]
    image = g.forward_seconds(g.vision_flops(w["images"]), mfu)
    if prefix_cache_read:
        lm = g.forward_seconds(g.lm_flops(prefix, prefix), mfu) + g.forward_seconds(w["group"] * g.lm_flops(k * c, prefix + c), mfu) / w["group"]
    else:  # the server batches many prompts into one forward: compute-bound, k prompts of P + C tokens
        lm = g.forward_seconds(w["group"] * k * g.lm_flops(prefix + c, prefix + c), mfu) / w["group"]
    per = lm + image
    return {"per_question_s": per, "total_minutes": per * w["questions"] / 60}


def mmmu_vllm(mfu: float, bwu: float, rows: int) -> dict:
    w = g.MMMU_VAL
    prompt = g.IMAGE_TOKENS * w["images"] + w["text_tokens"]
    prefill = g.forward_seconds(g.lm_flops(prompt, prompt) + g.vision_flops(w["images"]), mfu)
    step = g.decode_step_seconds(bwu, rows, prompt + w["answer_tokens"])
    per = prefill + w["answer_tokens"] * step / rows
    return {"rows": rows, "per_question_s": per, "total_seconds": per * w["questions"]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mfu", type=float, default=0.5)
    ap.add_argument("--bwu", type=float, default=0.7)
    ap.add_argument("--batch", type=int, default=32, help="the HF engine's generation batch")
    ap.add_argument("--concurrency", type=int, default=32, help="requests the client keeps in flight")
    ap.add_argument("--vllm-batch", type=int, default=128, help="a larger concurrency, capped by the KV cache")
    ap.add_argument("--memory-fraction", type=float, default=0.9)
    ap.add_argument("--gpus", type=int, default=8)
    a = ap.parse_args(argv)
    hf_seed, hf_mmmu = g.seed2(a.mfu), g.mmmu(a.mfu, a.bwu, a.batch)
    prompt = g.IMAGE_TOKENS + g.MMMU_VAL["text_tokens"] + g.MMMU_VAL["answer_tokens"]
    cap = max_rows(prompt, a.memory_fraction)
    seed = {"hf_reference": hf_seed["per_question_s"]["reference"], "hf_engine": hf_seed["per_question_s"]["engine"],
            "vllm_prompt_logprobs": seed2_vllm(a.mfu, False)["per_question_s"],
            "vllm_if_prefix_cache_were_read": seed2_vllm(a.mfu, True)["per_question_s"]}
    mmmu = {"hf_one_at_a_time": hf_mmmu["per_question_s"]["one_at_a_time"],
            "hf_continuous": hf_mmmu["per_question_s"]["continuous"],
            f"vllm_concurrency_{a.concurrency}": mmmu_vllm(a.mfu, a.bwu, min(a.concurrency, cap))["per_question_s"],
            f"vllm_batch_{min(a.vllm_batch, cap)}": mmmu_vllm(a.mfu, a.bwu, min(a.vllm_batch, cap))["per_question_s"]}
    out = {"gpu": g.H100, "mfu": a.mfu, "bwu": a.bwu, "kv_rows_that_fit": cap, "gpus": a.gpus,
           "seed2_ranking": {"per_question_ms": {k: round(v * 1e3, 1) for k, v in seed.items()},
                             "minutes_one_gpu": {k: round(v * g.SEED2["questions"] / 60, 1) for k, v in seed.items()},
                             f"minutes_{a.gpus}_gpus": {k: round(v * g.SEED2["questions"] / 60 / a.gpus, 2) for k, v in seed.items()}},
           "mmmu_generation": {"per_question_ms": {k: round(v * 1e3, 1) for k, v in mmmu.items()},
                               "seconds_one_gpu": {k: round(v * g.MMMU_VAL["questions"], 1) for k, v in mmmu.items()},
                               f"seconds_{a.gpus}_gpus": {k: round(v * g.MMMU_VAL["questions"] / a.gpus, 1) for k, v in mmmu.items()}}}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
