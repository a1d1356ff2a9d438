"""The paths a notebook run can take, in one run: SEED demo ranking and MMMU demo generation, HF against vLLM.

Prints ONE JSON object on stdout (progress on stderr). SmolLM2-135M-Instruct in fp32 on every path; vLLM is the
``vllm serve`` of ``vllm:smollm2`` (``.venv-vllm``, eager mode, 1 GiB KV cache), started once (its start-up is
reported apart and not in any rate). Every path goes through the suite's run functions (``runs.evaluate``,
``evaluate_generation``) with the ``RunConfig`` a notebook builds, into fresh run folders, the model loaded once:

- ``seed_ranking``: the SEED demo with the ``seed1-ppl`` recipe (sum) by the HF engine (``shared-prefix`` scorer)
  and by vLLM (``prompt_logprobs``): questions/second, prediction agreement under both reductions, the largest
  difference of summed and of mean log-likelihoods;
- ``mmmu_generation``: the MMMU demo (validation, ``max_new_tokens`` 16, ``batch_size`` 8 as notebook 20) with
  notebook 20's defaults (``backend`` auto, the default batch policy), one request at a time (``backend`` hf) and
  through vLLM (32 requests in flight): questions/second, parsed-answer agreement with the default path, identical
  token sequences (``generate_ids``) and the share of new tokens before the first difference.

The HF side runs in this process with ``--threads`` torch threads; the vLLM server is a separate process with its
own threads, so on a shared or small machine the rates compare deployments, not kernels (the load average at start
and end is recorded). ``benchmarks/report.py`` writes the README rows from ``benchmarks/results/vllm_speed.json``.

    .venv/bin/python benchmarks/vllm_speed.py [--quick] [--threads 1] [--base-url http://127.0.0.1:8000/v1]
        [--device cuda]

``--device cuda`` (after ``make vllm VLLM_PKG=vllm VLLM_DROP=`` on a GPU machine): the HF side on the GPU and
vLLM with its GPU defaults (CUDA graphs, ``gpu_memory_utilization`` 0.5 so both fit one card), both still fp32,
so that predictions compare as on the CPU; the JSON names the card.
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
os.environ.setdefault("MMBENCH_PROGRESS", "off")  # stdout is the one JSON object: no bars on it
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

VLLM_OPTIONS = {"dtype": "float32", "max_model_len": 2048, "kv_cache_memory_bytes": 1 << 30, "enforce_eager": True,
                "start_timeout": 900}
#: on a GPU: vLLM's own defaults (CUDA graphs, paged KV cache) in half the card, the HF side in the other half
VLLM_GPU_OPTIONS = {"dtype": "float32", "max_model_len": 2048, "gpu_memory_utilization": 0.5, "start_timeout": 900}
DEVICE = "cpu"


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


GENERATION_PATHS = {"notebook_default": {}, "one_at_a_time": {"backend": "hf"}, "vllm": {}}


def mmmu_generation(hf, vl, demo, tmp: Path, limit) -> dict:
    from mmbench_lib.core.requests import GenerateRequest
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.generation import build_prompt, evaluate_generation, load_items

    src = demo["mmmu"]["source"]
    rows, rates, recorded = {}, {}, {}
    for name, kw in GENERATION_PATHS.items():
        adapter = vl if name == "vllm" else hf
        cfg = RunConfig("mmmu", tmp / f"mmmu_{name}", source=src, split="validation", model="smollm2", baseline="none",
                        max_new_tokens=16, progress=False, batch_size=8, limit=limit, device=DEVICE, **kw)
        t = time.perf_counter()
        evaluate_generation(cfg, adapter)
        dt = time.perf_counter() - t
        rows[name] = {json.loads(x)["id"]: json.loads(x) for x in open(cfg.out_dir / "scored.jsonl")}
        rates[name] = len(rows[name]) / dt
        recorded[name] = json.loads((cfg.out_dir / "manifest.json").read_text())["model"].get("generation")
        log(f"mmmu {name}: {len(rows[name])} questions in {dt:.1f} s")
    base = rows["notebook_default"]
    n = len(base)
    agree = {k: sum(base[i]["parsed_pred"] == rows[k][i]["parsed_pred"] for i in base) / n for k in rows if k != "notebook_default"}
    items = load_items("mmmu", src, "validation")[: limit or None]
    reqs = [GenerateRequest(it.id, build_prompt(it)[0], max_new_tokens=16) for it in items]
    ref, got = hf.generate_ids(reqs), vl.generate_ids(reqs)
    prefix = sum(next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))) for a, b in zip(ref, got))
    return {"questions": n, "max_new_tokens": 16, "batch_size": 8,
            "questions_per_s": {k: round(v, 3) for k, v in rates.items()},
            "generation_as_recorded": recorded,
            "default_over_one_at_a_time": round(rates["notebook_default"] / rates["one_at_a_time"], 2),
            "vllm_over_default": round(rates["vllm"] / rates["notebook_default"], 2),
            "vllm_over_one_at_a_time": round(rates["vllm"] / rates["one_at_a_time"], 2),
            "parsed_answer_agreement_with_default": agree,
            "vllm_identical_token_sequences": sum(a == b for a, b in zip(ref, got)) / len(reqs),
            "vllm_new_tokens_before_first_difference": prefix / max(1, sum(len(a) for a in ref))}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="8 questions of each")
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the HF side (default 1)")
    ap.add_argument("--base-url", help="a running `vllm:smollm2` server (fp32) instead of starting one")
    ap.add_argument("--device", default="cpu", help="the HF side's device and the vLLM build's (cpu or cuda)")
    a = ap.parse_args(argv)
    global DEVICE
    DEVICE = a.device
    import torch

    torch.set_num_threads(a.threads)
    from mmbench_lib.demo import make_demo
    from mmbench_lib.models import load_adapter, vllm_server

    why = vllm_server.missing_reason()
    if why:
        raise SystemExit(why)
    limit = 8 if a.quick else None
    tmp = Path(tempfile.mkdtemp(prefix="vllm-speed-"))
    demo = make_demo(tmp / "demo")
    gpu = a.device.startswith("cuda")
    hf = load_adapter("smollm2", device=a.device, dtype="float32", scorer="shared-prefix")
    t = time.perf_counter()
    vl = load_adapter("vllm:smollm2", **({"dtype": "float32", "base_url": a.base_url} if a.base_url else
                                         VLLM_GPU_OPTIONS if gpu else VLLM_OPTIONS))
    start = time.perf_counter() - t
    log(f"vllm serve ready in {start:.0f} s" if not a.base_url else f"vllm serve at {a.base_url}")
    try:
        result = {"benchmark": "vllm_speed", "quick": a.quick, "threads": a.threads, "cpu_count": os.cpu_count(),
                  "device": a.device, "chip": torch.cuda.get_device_name() if gpu else platform.processor(),
                  "torch": torch.__version__, "transformers": __import__("transformers").__version__,
                  "platform": platform.platform(), "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
                  "vllm": {**{k: v for k, v in vl.describe().items() if k in (
                      "server_version", "dtype", "kv_cache_memory_bytes", "enforce_eager", "concurrency")},
                      "start_seconds": None if a.base_url else round(start, 1), "started_here": not a.base_url},
                  "seed_ranking": seed_ranking(hf, vl, demo, tmp, limit),
                  "mmmu_generation": mmmu_generation(hf, vl, demo, tmp, limit)}
    finally:
        vllm_server.stop_all()
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
