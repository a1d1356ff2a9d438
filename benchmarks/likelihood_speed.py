"""Answer-ranking speed: the reference loop (one forward per choice) against the shared-prefix engine.

Prints ONE JSON object on stdout (progress goes to stderr). Two workloads, both through the
adapters' public ``score_choices`` in batches of ``--batch-size`` questions (the runner's default
is 8), reference and engine in the same process, same thread count, each after a warm-up:

- ``text_smollm2``: SEED-style four-choice questions (``seed1-ppl`` recipe: ``Question: {q}\\nAnswer:``
  + `` {choice}``, choices of 1-8 tokens) on the real SmolLM2-135M-Instruct, CPU, fp32;
- ``vlm_tiny_llava_336``: a random-weight LLaVA (CLIP 336 px / patch 14, so 576 image tokens per
  image) with one image per question;
- ``vlm_smollm2_llava_336``: a LLaVA whose language model is the real SmolLM2-135M-Instruct, behind a
  small random-weight CLIP 336/14 tower (see ``smollm2_llava``), one image per question.

For each: questions/second of both, their ratio, prediction agreement (both reductions; must be
1.0), the largest difference of summed log-likelihoods, token counts, and the theoretical ratio
``k(P+C)/(P+kC)`` (k choices, ``4(P+C)/(P+4C)`` for SEED) from the measured average prefix
length P and choice length C: the work ratio when the only saving is reading the prefix once.

``--peer lm-eval`` also times lm-evaluation-harness's HF ``loglikelihood`` on the text workload
(same model object, same texts) when ``lm_eval`` is importable. ``--quick`` is a tiny run.

Memory: each scorer also runs once more in a fresh subprocess (``--probe``), which samples its
resident set size every 2 ms while scoring; the report gives the peak above the loaded model
(the allocator keeps freed memory, so measuring both scorers in one process would favour the
second) and the engine/reference ratio.

    .venv/bin/python benchmarks/likelihood_speed.py [--quick] [--threads 1] [--peer lm-eval]
        [--workloads vlm_smollm2_llava_336 ...]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MMBENCH_PROGRESS", "off")  # stdout is the one JSON object: no bars on it
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from mmbench_lib.core.requests import IMAGE, ScoreRequest  # noqa: E402
from mmbench_lib.tasks.recipes import RECIPES  # noqa: E402
from mmbench_lib.scoring import pick  # noqa: E402

#: SEED-Bench v1 style questions; the choices run from 1 to 8 tokens with the SmolLM2 tokenizer
TEMPLATES = [
    ("What colour is the {o} in the image?", ["Red", "Blue with white stripes", "Green", "It is black and yellow"]),
    ("How many {o}s can be seen in the image?", ["One", "Two", "Three", "More than five of them"]),
    ("Where is the {o} located in the scene?", ["On the table", "Next to the window on the left",
                                                 "Under the chair", "In the middle of the road"]),
    ("What is the person doing with the {o}?", ["Holding it", "Cleaning it carefully with a cloth",
                                                "Repairing it", "Nothing"]),
    ("Which statement about the {o} is true?", ["It is broken", "It is brand new and shiny",
                                                 "It belongs to the child", "It is partly hidden behind the door"]),
]
WORKLOADS = ("text_smollm2", "vlm_tiny_llava_336", "vlm_smollm2_llava_336")
OBJECTS = ["car", "dog", "umbrella", "cup", "bicycle", "lamp", "bench", "boat"]


def log(msg: str) -> None:
    print(f"[likelihood_speed] {msg}", file=sys.stderr, flush=True)


def seed_requests(n: int, images=None) -> list[ScoreRequest]:
    recipe = RECIPES["seed1-ppl"]
    out = []
    for i in range(n):
        template, choices = TEMPLATES[i % len(TEMPLATES)]
        question = template.format(o=OBJECTS[(i // len(TEMPLATES)) % len(OBJECTS)])
        rot = i % len(choices)  # the right answer is not always in the same place
        choices = choices[rot:] + choices[:rot]
        out.append(ScoreRequest(
            id=f"q{i}", prompt=recipe.prompt.format(question=question),
            continuations=[recipe.separator + c for c in choices],
            images=[images[i % len(images)]] if images else [], chat=recipe.chat,
        ))
    return out


def synthetic_images(n: int, seed: int = 0):
    from PIL import Image

    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        arr = (torch.rand(300, 400, 3, generator=g) * 255).to(torch.uint8).numpy()
        out.append(Image.fromarray(arr))
    return out


#: the vision tower of ``vlm_smollm2_llava_336``: CLIP-L/336 (24 layers x 1024, MLP 4096, 16 heads of 64)
#: scaled to a quarter in width and depth, so that its parameters (5.0 M) stand to SmolLM2's
#: non-embedding parameters (106 M) as CLIP-L/336's (304 M) to Vicuna-7B's (6.5 B): 4.7% both
SMOLLM2_LLAVA_VISION = {"hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 6, "num_attention_heads": 4}


def smollm2_llava(image_size: int = 336, patch_size: int = 14, seed: int = 0):
    """A LlavaForConditionalGeneration with the real SmolLM2-135M-Instruct as language model and a
    random-weight CLIP tower (``SMOLLM2_LLAVA_VISION``) and projector; (model, processor)."""
    from transformers import AutoModelForCausalLM, CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration

    from mmbench_lib.models.embedded import converted_dir
    from mmbench_lib.models.tiny import llava_processor, tiny_tokenizer

    tok = tiny_tokenizer()  # SmolLM2's tokenizer + <image>
    torch.manual_seed(seed)
    lm = AutoModelForCausalLM.from_pretrained(converted_dir(), dtype=torch.float32).eval()
    lm.resize_token_embeddings(len(tok))  # a row for <image> (never read: image features replace it)
    vision = CLIPVisionConfig(**SMOLLM2_LLAVA_VISION, image_size=image_size, patch_size=patch_size)
    config = LlavaConfig(
        vision_config=vision, text_config=lm.config, image_token_index=tok.convert_tokens_to_ids("<image>"),
        image_seq_length=(image_size // patch_size) ** 2, vision_feature_select_strategy="default",
        vision_feature_layer=-1, tie_word_embeddings=lm.config.tie_word_embeddings,
    )
    model = LlavaForConditionalGeneration(config).eval()
    model.model.language_model.load_state_dict(lm.model.state_dict())
    with torch.no_grad():
        model.lm_head.weight.copy_(lm.lm_head.weight)
    return model, llava_processor(tok, image_size, patch_size)


def token_counts(adapter, reqs) -> dict:
    prefix, choice, ref_tokens, eng_tokens, k = [], [], 0, 0, []
    for r in reqs:
        p = adapter.prepare(r)
        plen = int(p.inputs["input_ids"].shape[1])
        lens = [len(c) for c in p.continuations]
        prefix.append(plen)
        choice += lens
        k.append(len(lens))
        ref_tokens += sum(plen + n for n in lens)
        eng_tokens += plen + sum(max(n - 1, 0) for n in lens)
    P, C, K = sum(prefix) / len(prefix), sum(choice) / len(choice), sum(k) / len(k)
    return {
        "questions": len(reqs), "choices_per_question": K,
        "prefix_tokens_avg": round(P, 2), "choice_tokens_avg": round(C, 2),
        "choice_tokens_min": min(choice), "choice_tokens_max": max(choice),
        "reference_forward_tokens": ref_tokens, "engine_forward_tokens": eng_tokens,
        "theoretical_ratio": round(K * (P + C) / (P + K * C), 3),
    }


def timed(adapter, reqs, batch_size: int):
    """Scores, seconds and the number of top-level model forwards."""
    calls = [0]
    hook = adapter.model.register_forward_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
    try:
        t0 = time.perf_counter()
        out = []
        for i in range(0, len(reqs), batch_size):
            out += adapter.score_choices(reqs[i:i + batch_size])
        return out, time.perf_counter() - t0, calls[0]
    finally:
        hook.remove()


def compare(reference, engine, reqs, batch_size: int, repeats: int) -> dict:
    """Warm up both, then time them alternately; the best of ``repeats`` runs counts."""
    reference.score_choices(reqs[:2])
    engine.score_choices(reqs[:2])
    t_ref = t_eng = float("inf")
    for _ in range(repeats):
        ref, t, ref_calls = timed(reference, reqs, batch_size)
        t_ref = min(t_ref, t)
        log(f"  reference {t:.2f} s, {ref_calls} forwards")
        eng, t, eng_calls = timed(engine, reqs, batch_size)
        t_eng = min(t_eng, t)
        log(f"  engine    {t:.2f} s, {eng_calls} forwards")
    agree = [pick(a, red) == pick(b, red) for a, b in zip(ref, eng) for red in ("sum", "mean")]
    diff = max(abs(x.sum_logprob - y.sum_logprob) for a, b in zip(ref, eng) for x, y in zip(a, b))
    n = len(reqs)
    return {
        "reference_seconds": round(t_ref, 3), "engine_seconds": round(t_eng, 3),
        "reference_qps": round(n / t_ref, 3), "engine_qps": round(n / t_eng, 3),
        "ratio_engine_over_reference": round(t_ref / t_eng, 3),
        "reference_forward_calls": ref_calls, "engine_forward_calls": eng_calls,
        "prediction_agreement": sum(agree) / len(agree),
        "max_abs_diff_sum_logprob": float(f"{diff:.3g}"),
        "_reference_scores": ref,
    }


def lm_eval_peer(adapter, reqs, reference_scores, batch_size: int) -> dict:
    try:
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM
    except Exception as e:  # noqa: BLE001
        return {"status": "skipped", "reason": f"lm_eval not importable: {type(e).__name__}: {e}"}
    import lm_eval

    def instances(rs):
        out = []
        for r in rs:
            ctx = r.prompt.replace(IMAGE, "")  # what the text-only adapter feeds the model
            out += [Instance("loglikelihood", {}, (ctx, c), len(out)) for c in r.continuations]
        return out

    # lm-eval's batch size counts (context, choice) requests: try ours and 4x ours (the same number
    # of choices per forward as our batch of questions) and keep lm-eval's best
    timings = {}
    for bs in sorted({batch_size, 4 * batch_size}):
        lm = HFLM(pretrained=adapter.model, tokenizer=adapter.tokenizer, batch_size=bs,
                  device=str(adapter.device), dtype=next(adapter.model.parameters()).dtype)
        lm.loglikelihood(instances(reqs[:2]), disable_tqdm=True)  # warm-up
        t0 = time.perf_counter()
        out = lm.loglikelihood(instances(reqs), disable_tqdm=True)
        timings[bs] = (time.perf_counter() - t0, out)
        log(f"  lm-eval batch_size={bs}: {timings[bs][0]:.2f} s")
    batch_size = min(timings, key=lambda b: timings[b][0])
    t, res = timings[batch_size]
    preds, k = [], 0
    for r in reqs:
        vals = [res[k + j][0] for j in range(len(r.continuations))]
        k += len(r.continuations)
        preds.append(max(range(len(vals)), key=lambda j: (vals[j], -j)))
    agree = sum(p == pick(s, "sum") for p, s in zip(preds, reference_scores)) / len(reqs)
    return {
        "status": "ok", "lm_eval_version": getattr(lm_eval, "__version__", "?"), "batch_size": batch_size,
        "seconds": round(t, 3), "qps": round(len(reqs) / t, 3),
        "qps_by_batch_size": {str(b): round(len(reqs) / v[0], 3) for b, v in timings.items()},
        "prediction_agreement_with_reference_sum": agree,
    }


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _build(workload: str, scorer: str, n: int):
    """The adapter and requests of a workload (the same as ``main`` times)."""
    from mmbench_lib.models import load_adapter
    from mmbench_lib.models.hf import HFCausalLM, ImageTextToText
    from mmbench_lib.models.tiny import tiny_llava

    if workload == "text_smollm2":
        base = load_adapter("smollm2", device="cpu")
        adapter = base if scorer == "reference" else HFCausalLM(base.model, base.tokenizer, "smollm2", scorer=scorer)
        return adapter, seed_requests(n)
    if workload == "vlm_smollm2_llava_336":
        model, processor = smollm2_llava(image_size=336, patch_size=14)
        adapter = ImageTextToText(model, processor, "smollm2-llava-336", scorer=scorer)
        return adapter, seed_requests(n, images=synthetic_images(min(n, 12)))
    model, processor = tiny_llava(image_size=336, patch_size=14)
    adapter = ImageTextToText(model, processor, "tiny-llava-336", scorer=scorer)
    return adapter, seed_requests(n, images=synthetic_images(min(n, 12)))


def probe(workload: str, scorer: str, n: int, batch_size: int) -> dict:
    """Peak resident memory (MB) above the loaded model while ``scorer`` scores ``n`` questions."""
    import threading

    adapter, reqs = _build(workload, scorer, n)
    adapter.score_choices(reqs[:1])  # warm-up: lazy buffers and kernels are not the scorer's
    base = _rss_mb()
    peak, stop = [base], threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_mb())
            time.sleep(0.002)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    for i in range(0, len(reqs), batch_size):
        adapter.score_choices(reqs[i:i + batch_size])
    stop.set()
    t.join()
    return {"baseline_mb": round(base, 1), "peak_above_baseline_mb": round(max(peak[0] - base, 0.0), 1)}


def memory(workload: str, n: int, batch_size: int, threads: int) -> dict:
    import subprocess

    out = {}
    for scorer in ("reference", "shared-prefix"):
        cmd = [sys.executable, __file__, "--probe", workload, scorer, str(n), "--batch-size", str(batch_size),
               "--threads", str(threads)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if proc.returncode:
            return {"status": "failed", "stderr": proc.stderr[-2000:]}
        out[scorer] = json.loads(proc.stdout.strip().splitlines()[-1])
    ref, eng = out["reference"]["peak_above_baseline_mb"], out["shared-prefix"]["peak_above_baseline_mb"]
    return {"questions": n, "reference_peak_above_model_mb": ref, "engine_peak_above_model_mb": eng,
            "model_rss_mb": out["reference"]["baseline_mb"],
            "ratio_engine_over_reference": round(eng / ref, 3) if ref else None}


def text_workload(result: dict, args, n_text: int) -> None:
    from mmbench_lib.models import load_adapter
    from mmbench_lib.models.hf import HFCausalLM

    log(f"text workload: SmolLM2-135M-Instruct, {n_text} questions")
    ref = load_adapter("smollm2", device="cpu")
    eng = HFCausalLM(ref.model, ref.tokenizer, "smollm2", scorer="shared-prefix")
    reqs = seed_requests(n_text)
    w = {"model": "SmolLM2-135M-Instruct (real weights)", **token_counts(ref, reqs)}
    if args.peer == "lm-eval":
        w["lm_eval_forward_tokens"] = w["reference_forward_tokens"]  # one row per (context, choice), as the reference
    w.update(compare(ref, eng, reqs, args.batch_size, args.repeats))
    ref_scores = w.pop("_reference_scores")
    if args.peer == "lm-eval":
        log("  peer: lm-evaluation-harness HFLM.loglikelihood")
        w["peer_lm_eval"] = lm_eval_peer(ref, reqs, ref_scores, args.batch_size)
        if w["peer_lm_eval"].get("status") == "ok":
            w["ratio_engine_over_lm_eval"] = round(w["engine_qps"] / w["peer_lm_eval"]["qps"], 3)
    if not args.no_memory:
        log("  memory probes (fresh processes)")
        w["memory"] = memory("text_smollm2", min(n_text, 16), args.batch_size, args.threads)
    result["workloads"]["text_smollm2"] = w


def tiny_llava_workload(result: dict, args, n_image: int) -> None:
    from mmbench_lib.models.hf import ImageTextToText
    from mmbench_lib.models.tiny import tiny_llava

    log(f"image workload: tiny LLaVA 336/14 (576 image tokens), {n_image} questions")
    model, processor = tiny_llava(image_size=336, patch_size=14)
    ref = ImageTextToText(model, processor, "tiny-llava-336")
    eng = ImageTextToText(model, processor, "tiny-llava-336", scorer="shared-prefix")
    reqs = seed_requests(n_image, images=synthetic_images(min(n_image, 12)))
    w = {"model": "random-weight LlavaForConditionalGeneration, CLIP 336/14 + 2-layer Llama (hidden 64)",
         **token_counts(ref, reqs)}
    w.update(compare(ref, eng, reqs, args.batch_size, args.repeats))
    w.pop("_reference_scores")
    if not args.no_memory:
        log("  memory probes (fresh processes)")
        w["memory"] = memory("vlm_tiny_llava_336", n_image, args.batch_size, args.threads)
    result["workloads"]["vlm_tiny_llava_336"] = w


def smollm2_llava_workload(result: dict, args, n: int) -> None:
    from mmbench_lib.models.hf import ImageTextToText

    v = SMOLLM2_LLAVA_VISION
    log(f"image workload: SmolLM2-135M LLaVA 336/14 (576 image tokens), {n} questions")
    model, processor = smollm2_llava(image_size=336, patch_size=14)
    ref = ImageTextToText(model, processor, "smollm2-llava-336")
    eng = ImageTextToText(model, processor, "smollm2-llava-336", scorer="shared-prefix")
    reqs = seed_requests(n, images=synthetic_images(min(n, 12)))
    w = {"model": "LlavaForConditionalGeneration: real SmolLM2-135M-Instruct (30 layers x 576) behind a "
                  f"random-weight CLIP 336/14 ({v['num_hidden_layers']} layers x {v['hidden_size']}, "
                  f"MLP {v['intermediate_size']}; CLIP-L/336 is 24 x 1024, MLP 4096) and projector",
         "vision_tower_params": sum(p.numel() for p in model.model.vision_tower.parameters()),
         **token_counts(ref, reqs)}
    w.update(compare(ref, eng, reqs, args.batch_size, args.repeats))
    w.pop("_reference_scores")
    if not args.no_memory:
        log("  memory probes (fresh processes)")
        w["memory"] = memory("vlm_smollm2_llava_336", n, args.batch_size, args.threads)
    result["workloads"]["vlm_smollm2_llava_336"] = w


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe", nargs=3, metavar=("WORKLOAD", "SCORER", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--no-memory", action="store_true", help="skip the memory probes")
    ap.add_argument("--quick", action="store_true", help="a tiny run (6 text, 3 + 2 image questions)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for every run (default 1)")
    ap.add_argument("--batch-size", type=int, default=8, help="questions per score_choices call (runner default 8)")
    ap.add_argument("--text-questions", type=int, default=None)
    ap.add_argument("--image-questions", type=int, default=None)
    ap.add_argument("--vlm-questions", type=int, default=None, help="questions of vlm_smollm2_llava_336")
    ap.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS), help="default: all")
    ap.add_argument("--repeats", type=int, default=1, help="timed runs per scorer; the best counts")
    ap.add_argument("--peer", choices=["lm-eval"], default=None)
    args = ap.parse_args(argv)
    if args.probe:
        torch.set_num_threads(args.threads)
        workload, scorer, n = args.probe
        res = probe(workload, scorer, int(n), args.batch_size)
        print(json.dumps(res))
        return res
    n_text = args.text_questions or (6 if args.quick else 40)
    n_image = args.image_questions or (3 if args.quick else 12)
    n_vlm = args.vlm_questions or (2 if args.quick else 12)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    result = {
        "benchmark": "likelihood_speed", "quick": args.quick, "threads": torch.get_num_threads(),
        "batch_size": args.batch_size, "repeats": args.repeats, "device": "cpu", "dtype": "float32",
        "torch": torch.__version__, "transformers": __import__("transformers").__version__,
        "python": platform.python_version(), "cpu_count": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "workloads": {},
    }

    if "text_smollm2" in args.workloads:
        text_workload(result, args, n_text)
    if "vlm_tiny_llava_336" in args.workloads:
        tiny_llava_workload(result, args, n_image)
    if "vlm_smollm2_llava_336" in args.workloads:
        smollm2_llava_workload(result, args, n_vlm)

    result["notes"] = [
        "qps = questions/second through adapter.score_choices, prompt building and image processing included",
        "theoretical_ratio counts only the prefix read once; the engine also skips each choice's last "
        "input token and the vocabulary projection of all prefix positions but the last, so it can beat it "
        "(most on the tiny LLaVA, whose cost is dominated by its 49k-vocabulary output layer)",
        "text questions are packed (several questions per sequence, tree attention mask, logits only at "
        "scored positions: engine_forward_tokens, no padding); image questions use the prefix KV cache",
        "on the CPU a forward over a few tokens is bound by reading the weights (SmolLM2: 540 MB fp32), "
        "so the engine's few large batched forwards gain well beyond the token ratio",
        "vlm_smollm2_llava_336 is the representative VLM shape: a real 30-layer language model over a 576-token "
        "image prefix, its vision tower in LLaVA-1.5's proportion (random weights, so answers mean nothing)",
        "2-core shared machine: timings are noisy",
        "memory: peak resident set above the loaded model, one fresh process per scorer; the packed engine holds "
        "a whole row of questions at once (more than one forward per choice), while the reference materialises "
        "logits over the vocabulary for every prefix position of every choice (most of its peak on the VLM)",
    ]
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]  # 1, 5, 15 minutes
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
