"""HF path against vLLM on this CPU: SEED demo ranking and MMMU demo generation, one model load of each.

Prints ONE JSON object on stdout (progress on stderr). SmolLM2-135M-Instruct in fp32 on both sides; vLLM is the
``vllm serve`` of ``vllm:smollm2`` (``.venv-vllm``, eager mode, 1 GiB KV cache), started once (its start-up is
reported apart and not in any rate). Both sides go through the suite's run functions (``runs.evaluate``,
``evaluate_generation``) as a notebook does, into fresh run folders:

- ``seed_ranking``: the SEED demo with the ``seed1-ppl`` recipe (sum) by the HF engine (``shared-prefix`` scorer)
  and by vLLM (``prompt_logprobs``): questions/second, prediction agreement under both reductions, the largest
  difference of summed and of mean log-likelihoods;
- ``mmmu_generation``: the MMMU demo (validation, ``max_new_tokens`` 16, batch_size 8 as notebook 20) through the
  HF batched path and through vLLM (32 requests in flight): questions/second, parsed-answer agreement, identical
  token sequences (``generate_ids``) and the share of new tokens before the first difference.

    .venv/bin/python benchmarks/vllm_speed.py [--quick] [--base-url http://127.0.0.1:8000/v1]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

VLLM_OPTIONS = {"dtype": "float32", "max_model_len": 2048, "kv_cache_memory_bytes": 1 << 30, "enforce_eager": True,
                "start_timeout": 900}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def seed_ranking(hf, vl, demo, tmp: Path, limit) -> dict:
    from mmbench_lib.core.requests import ChoiceScore
    from mmbench_lib.pipeline import runs
    from mmbench_lib.scoring.reference import pick

    out, rates = {}, {}
    for name, adapter in (("hf_engine", hf), ("vllm", vl)):
        config = runs.RunConfig("seed", tmp / f"seed_{name}", data=runs.demo_args("seed", demo), model="smollm2",
                                recipe="seed1-ppl", progress=False, limit=limit)
        t = time.perf_counter()
        runs.evaluate(config, adapter)
        dt = time.perf_counter() - t
        rows = {r["id"]: r for r in runs.RunStore(config.out_dir, readonly=True).rows() if r.get("scores")}
        out[name], rates[name] = rows, len(rows) / dt
        log(f"seed {name}: {len(rows)} questions in {dt:.1f} s")
    agree = {"sum": 0, "mean": 0}
    dsum = dmean = 0.0
    for i, a in out["hf_engine"].items():
        b = out["vllm"][i]
        dsum = max(dsum, *(abs(x - y) for x, y in zip(a["scores"]["sum"], b["scores"]["sum"])))
        dmean = max(dmean, *(abs(x - y) for x, y in zip(a["scores"]["mean"], b["scores"]["mean"])))
        for red in agree:
            sa = [ChoiceScore(s, m, n) for s, m, n in zip(a["scores"]["sum"], a["scores"]["mean"], a["num_tokens"])]
            sb = [ChoiceScore(s, m, n) for s, m, n in zip(b["scores"]["sum"], b["scores"]["mean"], b["num_tokens"])]
            agree[red] += pick(sa, red) == pick(sb, red)
    n = len(out["hf_engine"])
    return {"questions": n, "questions_per_s": {k: round(v, 2) for k, v in rates.items()},
            "vllm_over_hf": round(rates["vllm"] / rates["hf_engine"], 2),
            "agreement": {k: v / n for k, v in agree.items()}, "max_abs_diff_sum_logprob": dsum,
            "max_abs_diff_mean_logprob": dmean}


def mmmu_generation(hf, vl, demo, tmp: Path, limit) -> dict:
    from mmbench_lib.core.requests import GenerateRequest
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.generation import build_prompt, evaluate_generation, load_items

    src = demo["mmmu"]["source"]
    rows, rates = {}, {}
    for name, adapter, batch in (("hf_batched", hf, 8), ("vllm", vl, 32)):
        cfg = RunConfig("mmmu", tmp / f"mmmu_{name}", source=src, max_new_tokens=16, progress=False, batch_size=batch,
                        limit=limit)
        t = time.perf_counter()
        evaluate_generation(cfg, adapter)
        dt = time.perf_counter() - t
        rows[name] = {json.loads(x)["id"]: json.loads(x) for x in open(cfg.out_dir / "scored.jsonl")}
        rates[name] = len(rows[name]) / dt
        log(f"mmmu {name}: {len(rows[name])} questions in {dt:.1f} s")
    n = len(rows["hf_batched"])
    same = sum(rows["hf_batched"][i]["parsed_pred"] == rows["vllm"][i]["parsed_pred"] for i in rows["hf_batched"])
    items = load_items("mmmu", src, "validation")[: limit or None]
    reqs = [GenerateRequest(it.id, build_prompt(it)[0], max_new_tokens=16) for it in items]
    ref, got = hf.generate_ids(reqs), vl.generate_ids(reqs)
    prefix = sum(next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))) for a, b in zip(ref, got))
    return {"questions": n, "questions_per_s": {k: round(v, 2) for k, v in rates.items()},
            "vllm_over_hf": round(rates["vllm"] / rates["hf_batched"], 2), "parsed_answer_agreement": same / n,
            "identical_token_sequences": sum(a == b for a, b in zip(ref, got)) / len(reqs),
            "new_tokens_before_first_difference": prefix / max(1, sum(len(a) for a in ref))}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="8 questions of each")
    ap.add_argument("--base-url", help="a running `vllm:smollm2` server (fp32) instead of starting one")
    a = ap.parse_args(argv)
    from mmbench_lib.demo import make_demo
    from mmbench_lib.models import load_adapter, vllm_server

    why = vllm_server.missing_reason()
    if why:
        raise SystemExit(why)
    limit = 8 if a.quick else None
    tmp = Path(tempfile.mkdtemp(prefix="vllm-speed-"))
    demo = make_demo(tmp / "demo")
    hf = load_adapter("smollm2", device="cpu", scorer="shared-prefix")
    t = time.perf_counter()
    vl = load_adapter("vllm:smollm2", **({"dtype": "float32", "base_url": a.base_url} if a.base_url else VLLM_OPTIONS))
    start = time.perf_counter() - t
    log(f"vllm serve ready in {start:.0f} s" if not a.base_url else f"vllm serve at {a.base_url}")
    try:
        result = {"machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                              "load_average": os.getloadavg()[0]},
                  "vllm": {**{k: v for k, v in vl.describe().items() if k in (
                      "server_version", "dtype", "kv_cache_memory_bytes", "enforce_eager", "concurrency")},
                      "start_seconds": None if a.base_url else round(start, 1), "started_here": not a.base_url},
                  "seed_ranking": seed_ranking(hf, vl, demo, tmp, limit),
                  "mmmu_generation": mmmu_generation(hf, vl, demo, tmp, limit)}
    finally:
        vllm_server.stop_all()
    result["machine"]["load_average_end"] = os.getloadavg()[0]
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
