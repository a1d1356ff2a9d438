"""GPU time on paper: LLaVA-1.5-7B in bf16 on one H100, from FLOP and byte counts (no GPU needed).

Prints ONE JSON object; ``docs/performance.md`` explains every line. The model of the hardware:

    compute time = FLOPs / (peak bf16 FLOP/s x MFU)            (prefill, choice passes)
    decode step  = bytes read per step / (HBM bandwidth x BWU)  (one token for every row of a batch)
    static batch: every row waits for the longest; continuous batching: each row pays its own length
    a forward takes max(compute time, weight-read time)

FLOPs of a forward over t tokens of a dense decoder with N parameters: 2 N t (matmuls) plus
attention 4 L d t c (scores and values, c = context length); the CLIP vision tower likewise with its
own N, L, d over 577 tokens per image.

    .venv/bin/python benchmarks/gpu_estimate.py [--mfu 0.5] [--bwu 0.7]
"""
from __future__ import annotations

import argparse
import json

H100 = {"name": "H100 SXM 80GB", "bf16_flops": 989e12, "hbm_bytes_per_s": 3.35e12}
#: Vicuna-7B (LLaVA-1.5's language model) and CLIP ViT-L/14 at 336 px (its vision tower)
LM = {"params": 6.74e9, "layers": 32, "width": 4096, "bytes_per_param": 2}
VISION = {"params": 0.304e9, "layers": 24, "width": 1024, "tokens": 577}
IMAGE_TOKENS = 576  # LLaVA-1.5: (336 / 14)^2 patch features after the projector

#: workload assumptions (averages; state them, change them on the command line)
SEED2 = {"questions": 24371, "text_tokens": 50, "choices": 4, "choice_tokens": 8, "images": 1, "group": 8}
MMMU_VAL = {"questions": 900, "text_tokens": 150, "images": 1, "answer_tokens": 10, "longest_in_batch": 30}


def lm_flops(tokens: float, context: float) -> float:
    return 2 * LM["params"] * tokens + 4 * LM["layers"] * LM["width"] * tokens * context


def vision_flops(images: float) -> float:
    t = VISION["tokens"]
    return images * (2 * VISION["params"] * t + 4 * VISION["layers"] * VISION["width"] * t * t)


def forward_seconds(flops: float, mfu: float, rows: int = 1) -> float:
    """One forward: compute-bound unless it is cheaper than reading the weights once."""
    weights = LM["params"] * LM["bytes_per_param"] / H100["hbm_bytes_per_s"]
    return max(flops / (H100["bf16_flops"] * mfu), weights)


def decode_step_seconds(bwu: float, rows: int, context: float) -> float:
    """One greedy step for ``rows`` sequences: read every weight once plus each row's KV cache."""
    kv = rows * 2 * LM["layers"] * LM["width"] * context * LM["bytes_per_param"]
    return (LM["params"] * LM["bytes_per_param"] + kv) / (H100["hbm_bytes_per_s"] * bwu)


def seed2(mfu: float) -> dict:
    w = SEED2
    prefix = IMAGE_TOKENS * w["images"] + w["text_tokens"]
    k, c = w["choices"], w["choice_tokens"]
    # reference: one forward per choice over prefix + choice, the image encoded again each time
    ref = k * (forward_seconds(lm_flops(prefix + c, prefix + c), mfu) + forward_seconds(vision_flops(w["images"]), mfu))
    # engine: the prefix (and image) once, then all choices of a group of questions in one forward
    # (one tree row per question; the group shares the weight read, as the runner's batch of 8 does)
    g = w["group"]
    eng = forward_seconds(lm_flops(prefix, prefix) + vision_flops(w["images"]), mfu) + \
        forward_seconds(g * lm_flops(k * c, prefix + c), mfu) / g
    return {"prefix_tokens": prefix, "per_question_s": {"reference": ref, "engine": eng},
            "total_minutes": {"reference": ref * w["questions"] / 60, "engine": eng * w["questions"] / 60},
            "ratio": ref / eng, "token_count_limit": k * (prefix + c) / (prefix + k * c)}


def mmmu(mfu: float, bwu: float, batch: int) -> dict:
    w = MMMU_VAL
    prompt = IMAGE_TOKENS * w["images"] + w["text_tokens"]
    prefill = forward_seconds(lm_flops(prompt, prompt) + vision_flops(w["images"]), mfu)
    one = prefill + w["answer_tokens"] * decode_step_seconds(bwu, 1, prompt)
    # batched: prefill is compute-bound either way; a length-sorted batch decodes until its longest row
    batched = prefill + w["longest_in_batch"] * decode_step_seconds(bwu, batch, prompt) / batch
    # continuous batching (kv-decode): a row leaves the step it stops and a waiting prompt takes its place,
    # so each question pays its own answer length at the full batch width
    continuous = prefill + w["answer_tokens"] * decode_step_seconds(bwu, batch, prompt) / batch
    per = {"one_at_a_time": one, "batched": batched, "continuous": continuous}
    return {"prompt_tokens": prompt, "batch": batch, "per_question_s": per,
            "total_seconds": {k: v * w["questions"] for k, v in per.items()},
            "ratio": one / batched, "ratio_continuous": one / continuous}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mfu", type=float, default=0.5, help="model FLOP utilisation of prefill/choice passes")
    ap.add_argument("--bwu", type=float, default=0.7, help="share of HBM bandwidth a decode step reaches")
    ap.add_argument("--batch", type=int, default=32, help="generation batch size")
    a = ap.parse_args(argv)
    print(json.dumps({"gpu": H100, "language_model": LM, "vision_tower": VISION, "mfu": a.mfu, "bwu": a.bwu,
                      "workloads": {"seed2": SEED2, "mmmu_validation": MMMU_VAL},
                      "seed2_ranking": seed2(a.mfu), "mmmu_generation": mmmu(a.mfu, a.bwu, a.batch)}, indent=1))


if __name__ == "__main__":
    main()
