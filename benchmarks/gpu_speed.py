"""Ranking and generation speed of 7B-shaped VLMs on one GPU (random weights, no download).

Prints ONE JSON object on stdout (progress on stderr). Each shape is built from its transformers config with
random weights directly on the device in bf16 (fp32 on the CPU): the LLaVA-1.5-7B shape (Vicuna-7B: 32 x 4096,
MLP 11008; CLIP ViT-L/14-336: 576 image tokens) and the Qwen2-VL-7B shape (28 x 3584, MLP 18944, 4 KV heads,
M-RoPE; a 32-layer 1280-wide vision tower; 448 x 448 images: 256 image tokens), both on the embedded SmolLM2
tokenizer (49,153 tokens instead of 32,064 / 152,064). ``--quick`` builds the same classes tiny (CI, CPU).

- **ranking**: SEED-like 4-choice questions (llava-chat recipe: chat template, one image each), the engine
  (``shared-prefix``) in calls of 8 / 32 / 64 questions as the run loop makes them against the reference loop (one forward per choice,
  time-capped): questions/s, argmax agreement (sum and mean), peak memory, tokens/s and MFU (the model's
  FLOPs, ``2 N t`` for the language model plus the vision tower's per image, over the chip's bf16 peak);
- **generation**: MMMU-like prompts (one image, ~150 text tokens), 16 and 64 new tokens, greedy: the
  suite's default batch policy (all prompts in one call), a plain left-padded ``model.generate`` in
  batches of 32, one request at a time (time-capped): tokens/s, identical-token fraction and first
  divergence against one at a time.

Every path runs once untimed at the shape it is timed at (CUDA warm-up). **Host ms per question**: wall
time minus the time the device was busy in model forwards (CUDA events around each top-level forward; on
the CPU the time inside them), per question: the host work (image processing, templates, tokenisation,
planning, synchronisation) the device did not hide.

    python benchmarks/gpu_speed.py [--device cuda] [--quick] [--shapes llava15_7b qwen2vl_7b]
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MMBENCH_PROGRESS", "off")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from mmbench_lib.core.requests import IMAGE, GenerateRequest, ScoreRequest  # noqa: E402

#: dense bf16 peak FLOP/s by device name (vendor data sheets, without sparsity); unknown: no MFU
PEAK_BF16 = {"H200": 989e12, "H100 PCIe": 756e12, "H100": 989e12, "A100": 312e12, "L40S": 362e12, "L4": 121e12,
             "A10G": 70e12, "A10": 125e12, "RTX 4090": 165e12}
SHAPES = ("llava15_7b", "qwen2vl_7b")
#: LLaVA-1.5's conversation format and Qwen2-VL's ChatML, for content lists (images and text in order)
LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}USER: {% elif message['role'] == 'assistant' %}ASSISTANT: {% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}{% if message['role'] == 'user' %} {% endif %}{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}")
QWEN2_VL_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def log(msg: str) -> None:
    print(f"[gpu_speed] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- device clock
class ForwardClock:
    """Time the device spends in the model's top-level forwards: CUDA events around each call (no sync
    added; read once at the end), or the wall time inside them on the CPU."""

    def __init__(self, model, device: str):
        self.cuda = device.startswith("cuda")
        self.spans: list = []
        self.calls = 0
        self._depth = 0
        self._open = None
        self._handles = [model.register_forward_pre_hook(self._pre), model.register_forward_hook(self._post)]

    def _now(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def _pre(self, *_):
        self._depth += 1
        if self._depth == 1:
            self._open = self._now()

    def _post(self, *_):
        self._depth -= 1
        if self._depth == 0:
            self.spans.append((self._open, self._now()))
            self.calls += 1

    def reset(self):
        self.spans, self.calls = [], 0

    def busy_s(self) -> float:
        if self.cuda:
            torch.cuda.synchronize()
            return sum(a.elapsed_time(b) for a, b in self.spans) / 1000
        return sum(b - a for a, b in self.spans)

    def close(self):
        for h in self._handles:
            h.remove()


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, clock: ForwardClock, device: str, n: int):
    """Run ``fn()``; returns (result, record with seconds, host ms per question, forward calls, peak memory)."""
    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    sync(device)
    clock.reset()
    t = time.perf_counter()
    out = fn()
    sync(device)
    wall = time.perf_counter() - t
    busy = clock.busy_s()
    rec = {"seconds": round(wall, 4), "device_busy_s": round(busy, 4),
           "host_ms_per_question": round(1000 * max(wall - busy, 0.0) / max(n, 1), 3), "forward_calls": clock.calls}
    if device.startswith("cuda"):
        rec["peak_memory_above_model_mib"] = round((torch.cuda.max_memory_allocated() - base) / 2**20, 1)
    return out, rec


# ---------------------------------------------------------------------------- models
def _tokenizer(extra):
    from mmbench_lib.models import embedded

    tok = embedded.load_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": list(extra)})
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def _build(model_cls, config, device: str, dtype):
    """Random weights made where the model runs, in its dtype (a 7B fp32 model on the CPU takes minutes)."""
    old = torch.get_default_dtype()
    torch.manual_seed(0)
    try:
        torch.set_default_dtype(dtype)
        with torch.device(device):
            model = model_cls(config).eval()
    finally:
        torch.set_default_dtype(old)
    if {p.dtype for p in model.parameters()} != {dtype}:
        model = model.to(dtype)
    return model


def llava_shape(device: str, dtype, quick: bool):
    """LLaVA-1.5-7B: Vicuna-7B + CLIP ViT-L/14 at 336 px (576 image tokens); tiny widths with ``quick``."""
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, LlamaConfig, LlavaConfig,
                              LlavaForConditionalGeneration, LlavaProcessor)

    tok = _tokenizer(("<image>",))
    ids = {"bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id}
    if quick:
        text = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096, **ids)
        vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                                  image_size=336, patch_size=14, projection_dim=32)
    else:
        text = LlamaConfig(vocab_size=len(tok), hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                           num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=4096,
                           rms_norm_eps=1e-5, **ids)
        vision = CLIPVisionConfig(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16,
                                  image_size=336, patch_size=14, projection_dim=768, hidden_act="quick_gelu")
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_index=tok.convert_tokens_to_ids("<image>"),
                         image_seq_length=576, vision_feature_select_strategy="default", vision_feature_layer=-2,
                         projector_hidden_act="gelu", tie_word_embeddings=False)
    model = _build(LlavaForConditionalGeneration, config, device, dtype)
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 336}, crop_size={"height": 336, "width": 336}),
        tokenizer=tok, patch_size=14, vision_feature_select_strategy="default", chat_template=LLAVA_CHAT_TEMPLATE,
        image_token="<image>", num_additional_image_tokens=1)
    return model, processor, model.model.language_model, model.lm_head, model.model.vision_tower, 577


def qwen2vl_shape(device: str, dtype, quick: bool):
    """Qwen2-VL-7B: 28 x 3584 decoder with 4 KV heads and M-RoPE, 32-layer 1280-wide vision tower, 448 px images."""
    from transformers import (Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor,
                              Qwen2VLProcessor, Qwen2VLVideoProcessor)

    tok = _tokenizer(("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>", "<|im_start|>", "<|im_end|>"))
    if quick:
        hidden, inter, layers, heads, kv, vis = 64, 128, 2, 4, 2, {"depth": 1, "embed_dim": 32, "num_heads": 4}
    else:
        hidden, inter, layers, heads, kv, vis = 3584, 18944, 28, 28, 4, {"depth": 32, "embed_dim": 1280, "num_heads": 16}
    head_dim = hidden // heads
    text = {"vocab_size": len(tok), "hidden_size": hidden, "intermediate_size": inter, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": kv, "max_position_embeddings": 32768,
            "rms_norm_eps": 1e-6, "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id,
            "pad_token_id": tok.pad_token_id,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0,
                                "mrope_section": [head_dim // 8, 3 * head_dim // 16, 3 * head_dim // 16]}}
    vision = {**vis, "hidden_size": hidden, "mlp_ratio": 4, "patch_size": 14, "spatial_merge_size": 2,
              "temporal_patch_size": 2, "in_channels": 3}
    ids = {name: tok.convert_tokens_to_ids(t) for name, t in (
        ("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>"))}
    config = Qwen2VLConfig(vision_config=vision, text_config=text, tie_word_embeddings=False, **ids)
    model = _build(Qwen2VLForConditionalGeneration, config, device, dtype)
    px = 448 * 448
    kw = {"patch_size": 14, "merge_size": 2, "temporal_patch_size": 2, "min_pixels": px, "max_pixels": px,
          "size": {"shortest_edge": px, "longest_edge": px}}
    processor = Qwen2VLProcessor(image_processor=Qwen2VLImageProcessor(**kw), tokenizer=tok,
                                 video_processor=Qwen2VLVideoProcessor(**kw), chat_template=QWEN2_VL_CHAT_TEMPLATE)
    patches = (448 // 14) ** 2
    return model, processor, model.model.language_model, model.lm_head, model.model.visual, patches


BUILDERS = {"llava15_7b": llava_shape, "qwen2vl_7b": qwen2vl_shape}


# ---------------------------------------------------------------------------- workloads
OBJECTS = ["car", "dog", "umbrella", "cup", "bicycle", "lamp", "bench", "boat", "kite", "clock", "vase", "train"]
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
LEADS = ["Look at the picture carefully and think about the scene as a whole.",
         "The photograph below was taken outdoors on a bright afternoon in a busy town.",
         "Study the image, paying attention to small details in the background and foreground.",
         "This picture comes from a collection of everyday scenes recorded by volunteers."]
TAILS = ["Consider the objects, their colours, their number and where they are placed before you choose.",
         "Choose the option that best matches what is visible, not what might be outside the frame.",
         "Only one of the candidate answers is correct for this particular image."]
WORDS = ("the a of in on with for at by from sample value force energy market price cell protein circuit voltage "
         "current model graph table figure shown below above left right increase decrease total average rate time "
         "distance mass temperature pressure company revenue cost profit theorem proof angle triangle circle area "
         "volume function derivative integral painting artist century style history empire war treaty").split()


def images(n: int, seed: int, size=(400, 300)):
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    return [Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)) for _ in range(n)]


def seed_requests(n: int, ims) -> list[ScoreRequest]:
    """SEED-like questions (~50 text tokens), 4 choices of 1-8 tokens, llava-chat recipe (chat, ' ' + choice)."""
    out = []
    for i in range(n):
        template, choices = TEMPLATES[i % len(TEMPLATES)]
        q = f"{LEADS[i % len(LEADS)]} {template.format(o=OBJECTS[(i // len(TEMPLATES)) % len(OBJECTS)])} {TAILS[i % len(TAILS)]}"
        rot = i % len(choices)
        out.append(ScoreRequest(id=f"q{i}", prompt=q, continuations=[" " + c for c in choices[rot:] + choices[:rot]],
                                images=[ims[i % len(ims)]], chat=True))
    return out


def mmmu_requests(n: int, ims, new: int) -> list[GenerateRequest]:
    """MMMU-like prompts: one image, 55-95 words of question, four options, chat template."""
    rng = random.Random(1)
    out = []
    for i in range(n):
        q = " ".join(rng.choice(WORDS) for _ in range(rng.randint(55, 95)))
        opts = "\n".join(f"({chr(65 + j)}) " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
                         for j in range(4))
        prompt = (f"{IMAGE}\nQuestion: {q.capitalize()}?\nOptions:\n{opts}\n"
                  "Answer with the option's letter from the given choices directly.")
        out.append(GenerateRequest(f"g{i}", prompt, [ims[i % len(ims)]], max_new_tokens=new))
    return out


# ---------------------------------------------------------------------------- comparisons
def compare_scores(a, b) -> dict:
    from mmbench_lib.scoring import pick

    n = min(len(a), len(b))
    pairs = list(zip(a[:n], b[:n]))
    return {"questions": n,
            "argmax_agreement_sum": round(sum(pick(x, "sum") == pick(y, "sum") for x, y in pairs) / max(n, 1), 4),
            "argmax_agreement_mean": round(sum(pick(x, "mean") == pick(y, "mean") for x, y in pairs) / max(n, 1), 4),
            "max_abs_diff_sum_logprob": float(f"{max((abs(s.sum_logprob - t.sum_logprob) for x, y in pairs for s, t in zip(x, y)), default=0.0):.4g}")}


def compare_tokens(got, ref) -> dict:
    n = min(len(got), len(ref))
    firsts = [next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
              for x, y in zip(got[:n], ref[:n]) if x != y]
    return {"of": n, "fraction_identical": round(sum(x == y for x, y in zip(got[:n], ref[:n])) / max(n, 1), 4),
            "first_token_agreement": round(sum(bool(x) and bool(y) and x[0] == y[0]
                                               for x, y in zip(got[:n], ref[:n])) / max(n, 1), 4),
            "first_divergence_min": min(firsts) if firsts else None,
            "first_divergence_mean": round(sum(firsts) / len(firsts), 2) if firsts else None}


# ---------------------------------------------------------------------------- the measurements
def peak_flops(device: str) -> tuple[str, float | None]:
    if not device.startswith("cuda"):
        return platform.processor() or "cpu", None
    name = torch.cuda.get_device_name(torch.device(device))
    return name, next((v for k, v in PEAK_BF16.items() if k in name), None)


def score_calls(adapter, reqs, bs: int) -> list:
    """``score_choices`` in calls of ``bs`` questions as the run loop makes them: the next call's inputs
    prepared in a worker thread while the model scores the current one, where the suite does that
    (``pipeline.loop.look_ahead`` + ``adapter.prefetch``; an older checkout: one call after the other)."""
    calls = [reqs[i:i + bs] for i in range(0, len(reqs), bs)]
    try:
        from mmbench_lib.pipeline.loop import look_ahead
    except ImportError:
        look_ahead = None
    if look_ahead is None or not hasattr(adapter, "prefetch"):
        return [x for c in calls for x in adapter.score_choices(c)]
    return [x for c, _ in look_ahead(calls, adapter.prefetch) for x in adapter.score_choices(c)]


def ranking(adapter_for, reqs, batches, ref_cap_s, device, clock, flops_per_question, tokens_per_question, peak):
    from mmbench_lib.models.hf import ImageTextToText  # noqa: F401 - the adapters are the public path

    out, scores = {}, {}
    for bs in batches:
        eng = adapter_for("shared-prefix")
        eng.score_choices(reqs[:bs])  # warm-up at this batch shape (and the engine's one-time self-checks)
        s, rec = timed(lambda: score_calls(eng, reqs, bs), clock, device, len(reqs))
        qps = len(reqs) / rec["seconds"]
        rec.update(batch_size=bs, questions=len(reqs), questions_per_s=round(qps, 3),
                   tokens_per_s=round(qps * tokens_per_question, 1),
                   mfu=round(qps * flops_per_question / peak, 4) if peak else None,
                   token_budget=getattr(eng.scorer, "token_budget", None) or eng.scorer._default_budget(eng.model),
                   describe=eng.describe().get("ranking"))
        out[f"engine_bs{bs}"], scores[bs] = rec, s
        log(f"  engine batch {bs}: {qps:.2f} q/s, host {rec['host_ms_per_question']} ms/question")
        del eng
    ref = adapter_for("reference")
    ref.score_choices(reqs[:2])

    def capped():
        got, t = [], time.perf_counter()
        for i in range(0, len(reqs), 8):
            got += ref.score_choices(reqs[i:i + 8])
            if time.perf_counter() - t > ref_cap_s:
                break
        return got

    s_ref, rec = timed(capped, clock, device, len(reqs))
    rec["questions"] = len(s_ref)
    rec["host_ms_per_question"] = round(rec["host_ms_per_question"] * len(reqs) / len(s_ref), 3)
    rec.update(batch_size=8, questions_per_s=round(len(s_ref) / rec["seconds"], 3), time_cap_s=ref_cap_s)
    out["reference_bs8"] = rec
    log(f"  reference: {rec['questions_per_s']:.2f} q/s over {len(s_ref)} questions")
    for bs, s in scores.items():
        out[f"engine_bs{bs}"]["vs_reference"] = compare_scores(s, s_ref)
        out[f"engine_bs{bs}"]["ratio_over_reference"] = round(out[f"engine_bs{bs}"]["questions_per_s"]
                                                              / rec["questions_per_s"], 3)
    return out


def plain_generate(adapter, reqs, rows: int):
    """Plain transformers: the processor on left-padded batches of ``rows`` (the suite's rendered text), then
    ``model.generate``, tokens cut at the first stop token as the suite does."""
    from mmbench_lib.models.batching import cut_at_stop

    model, dtype = adapter.model, next(adapter.model.parameters()).dtype
    stops, out = adapter.stops(), []
    with torch.inference_mode():
        for i in range(0, len(reqs), rows):
            part = reqs[i:i + rows]
            enc = adapter.processor(text=[adapter.render(r)[0] for r in part], images=[im for r in part for im in r.images],
                                    return_tensors="pt", padding=True, padding_side="left")
            enc = {k: (v.to(adapter.device).to(dtype) if v.is_floating_point() else v.to(adapter.device))
                   for k, v in enc.items() if isinstance(v, torch.Tensor)}
            g = model.generate(**enc, max_new_tokens=part[0].max_new_tokens, do_sample=False, pad_token_id=adapter.pad_id())
            w = enc["input_ids"].shape[1]
            out += [cut_at_stop(row[w:].tolist(), stops)[0] for row in g]
    return out


def generation(adapter, reqs, rows, one_cap_s, device, clock):
    from mmbench_lib.models.batching import BatchedGenerator

    out, toks = {}, {}
    adapter.generator = BatchedGenerator()
    adapter.generate_ids(reqs[:rows])  # warm-up at the batch shape
    toks["default"], rec = timed(lambda: adapter.generate_ids(reqs), clock, device, len(reqs))
    g = adapter.describe()["generation"]
    rec.update(decoder=g.get("decoder"), kv_decode=g.get("kv_decode"), chunk=g.get("chunk"), max_rows=g.get("max_rows"))
    out["suite_default_policy"] = rec
    plain_generate(adapter, reqs[:rows], rows)
    toks["plain"], out["plain_padded_generate"] = timed(lambda: plain_generate(adapter, reqs, rows), clock, device, len(reqs))
    out["plain_padded_generate"]["rows_per_batch"] = rows
    adapter.generate_ids(reqs[:1], batched=False)

    def one():
        got, t = [], time.perf_counter()
        for r in reqs:
            got += adapter.generate_ids([r], batched=False)
            if time.perf_counter() - t > one_cap_s:
                break
        return got

    toks["one"], rec = timed(one, clock, device, len(reqs))
    rec["requests"] = len(toks["one"])
    rec["host_ms_per_question"] = round(rec["host_ms_per_question"] * len(reqs) / len(toks["one"]), 3)
    rec["time_cap_s"] = one_cap_s
    out["one_at_a_time"] = rec
    for key, name in (("default", "suite_default_policy"), ("plain", "plain_padded_generate"), ("one", "one_at_a_time")):
        n = len(toks["one"]) if key == "one" else len(reqs)
        new = sum(len(t) for t in toks[key])
        out[name].update(requests=n, new_tokens=new, tokens_per_s=round(new / out[name]["seconds"], 2),
                         requests_per_s=round(n / out[name]["seconds"], 3))
    k = len(toks["one"])
    out["suite_default_policy"]["vs_one_at_a_time"] = compare_tokens(toks["default"][:k], toks["one"])
    out["plain_padded_generate"]["vs_one_at_a_time"] = compare_tokens(toks["plain"][:k], toks["one"])
    out["suite_default_vs_plain"] = compare_tokens(toks["default"], toks["plain"])
    out["default_over_plain"] = round(out["suite_default_policy"]["tokens_per_s"]
                                      / out["plain_padded_generate"]["tokens_per_s"], 3)
    return out


def run_shape(name: str, args, device: str, dtype, peak) -> dict:
    from mmbench_lib.models.adapters import image_text_adapter

    t = time.perf_counter()
    model, processor, lm, head, vision, patches = BUILDERS[name](device, dtype, args.quick)
    sync(device)
    n_lm = sum(p.numel() for p in lm.parameters()) + head.weight.numel()
    n_vis = sum(p.numel() for p in vision.parameters())
    rec = {"build_s": round(time.perf_counter() - t, 2), "params_language_model_with_head": n_lm,
           "params_vision_tower": n_vis, "dtype": str(dtype).replace("torch.", ""),
           "attn_implementation": getattr(model.config, "_attn_implementation", None)}
    log(f"{name}: built in {rec['build_s']} s ({(n_lm + n_vis) / 1e9:.2f} B parameters)")

    def adapter_for(scorer):
        return image_text_adapter(model, processor, f"{name}-random", scorer=scorer)

    clock = ForwardClock(model, device)
    try:
        reqs = seed_requests(args.questions, images(16, 7))
        probe = adapter_for("shared-prefix")
        pre = [probe.prepare(r) for r in reqs[:min(20, len(reqs))]]
        prefix = sum(int(p.inputs["input_ids"].shape[1]) for p in pre) / len(pre)
        choice = sum(len(c) for p in pre for c in p.continuations) / sum(len(p.continuations) for p in pre)
        tokens = prefix + sum(max(len(c) - 1, 0) for p in pre for c in p.continuations) / len(pre)
        flops = 2 * n_lm * tokens + 2 * n_vis * patches
        rec["ranking_workload"] = {"questions": len(reqs), "prefix_tokens_avg": round(prefix, 1),
                                   "choice_tokens_avg": round(choice, 2), "choices": 4,
                                   "engine_tokens_per_question": round(tokens, 1),
                                   "flops_per_question": float(f"{flops:.4g}"),
                                   "recipe": "llava-chat (chat template, ' ' + choice), one 400x300 image"}
        del pre, probe
        rec["ranking"] = ranking(adapter_for, reqs, args.batch_sizes, args.ref_cap_s, device, clock, flops, tokens, peak)
        rec["generation"] = {}
        for new in args.new_tokens:
            log(f"  generation, {new} new tokens")
            gen_reqs = mmmu_requests(args.prompts, images(16, 11), new)
            rec["generation"][f"new_tokens_{new}"] = generation(adapter_for("shared-prefix"), gen_reqs, args.rows,
                                                                args.one_cap_s, device, clock)
    finally:
        clock.close()
        del model
        gc.collect()
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    return rec


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--quick", action="store_true", help="tiny widths, few questions (CI on a CPU)")
    ap.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    ap.add_argument("--questions", type=int, default=None, help="ranking questions (default 200; quick 8)")
    ap.add_argument("--prompts", type=int, default=None, help="generation prompts (default 64; quick 6)")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=None, help="engine call sizes (default 8 32 64)")
    ap.add_argument("--new-tokens", type=int, nargs="+", default=None, help="default 16 64; quick 4 8")
    ap.add_argument("--rows", type=int, default=None, help="plain generate rows per batch (default 32; quick 3)")
    ap.add_argument("--ref-cap-s", type=float, default=30.0, help="time cap of the reference ranking loop")
    ap.add_argument("--one-cap-s", type=float, default=20.0, help="time cap of one-at-a-time generation")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (CPU)")
    args = ap.parse_args(argv)
    q = args.quick
    args.questions = args.questions or (8 if q else 200)
    args.prompts = args.prompts or (6 if q else 64)
    args.batch_sizes = args.batch_sizes or ([2, 4] if q else [8, 32, 64])
    args.new_tokens = args.new_tokens or ([4, 8] if q else [16, 64])
    args.rows = args.rows or (3 if q else 32)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    chip, peak = peak_flops(device)
    result = {"benchmark": "gpu_speed", "quick": q, "device": device, "chip": chip, "peak_bf16_flops": peak,
              "dtype": str(dtype).replace("torch.", ""), "threads": torch.get_num_threads(),
              "torch": torch.__version__, "transformers": __import__("transformers").__version__,
              "python": platform.python_version(), "cpu_count": os.cpu_count(),
              "date": time.strftime("%Y-%m-%d", time.gmtime()),
              "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "shapes": {}}
    for name in args.shapes:
        result["shapes"][name] = run_shape(name, args, device, dtype, peak)
    result["notes"] = [
        "random weights: answers mean nothing; bf16 batched vs one-at-a-time tokens may differ on near-ties",
        "host_ms_per_question = (wall time - device time in top-level model forwards) / questions: the host work "
        "the device did not hide (CUDA events; on the CPU the wall time inside the forwards)",
        "mfu = questions/s x (2 N_lm x engine tokens + 2 N_vision x patches) / the chip's dense bf16 peak",
        "the SmolLM2 tokenizer stands in for each model's own (vocabulary 49,153)",
    ]
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
