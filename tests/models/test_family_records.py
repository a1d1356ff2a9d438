"""The family records (``mmbench_lib.models.family_records``) and the families added with them, each on a tiny
random-weight model of its real transformers classes: the shared-prefix engine equals the reference scorer within
the derived tolerance (same predictions), batched generation equals one ``generate`` call per request, and the
generation path recorded in ``describe()`` (the manifest's model record) is the one that ran."""
import pytest
import torch

from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.models import family_records as fr
from mmbench_lib.models.cpu import flat_prefill, kv_decode
from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy
from mmbench_lib.models.families import NATIVE_VIDEO_TYPES, Qwen2VL

from ..scores import tolerance
from .test_families import _assert_same, _requests, adapter

NEW_FAMILIES = ["tiny-qwen3-vl", "tiny-qwen3-vl-moe"]


def test_every_allow_list_is_read_from_the_records():
    assert kv_decode.TEXT_TYPES == {"llama", "mistral", "qwen2", "qwen3", "phi3", "olmo", "olmo2", "granite", "stablelm",
                                    "gemma"}
    assert kv_decode.VLM_TYPES == {"llava", "llava_next", "llava_onevision", "idefics3", "internvl", "smolvlm", "mistral3"}
    assert flat_prefill.FLAT_TYPES == kv_decode.TEXT_TYPES - {"stablelm"}
    assert NATIVE_VIDEO_TYPES == {"llava_onevision", "llava_next_video"}
    assert fr.record_for("qwen3_vl_moe").adapter == "qwen2-vl" and fr.record_for("unknown_vlm") is fr.GENERIC
    assert fr.record_for("blip-2", "encdec").adapter == "blip2-encdec"


def test_the_family_table_lists_every_record_with_its_paths():
    lines = fr.table()
    assert lines[0].split()[:6] == ["family", "model", "types", "positions", "scoring", "generation"]
    assert len(lines) == len(fr.RECORDS) + 1
    [qwen3] = [x for x in lines if x.startswith("Qwen3-VL")]
    assert "qwen3_vl, qwen3_vl_moe" in qwen3 and "shared-prefix" in qwen3 and "native" in qwen3
    [mllama] = [x for x in lines if x.startswith("Llama 3.2 Vision")]
    assert "cross-attention" in mllama and "reference" in mllama and "batched generate" in mllama
    [phi4] = [x for x in lines if x.startswith("Phi-4-multimodal")]
    assert "AutoModelForCausalLM" in phi4


def test_a_refused_family_stops_before_the_run_with_one_line():
    from transformers import AutoConfig

    from mmbench_lib.models.families import make_image_text_adapter

    class Loaded:  # what make_image_text_adapter reads of a loaded model: its config
        config = AutoConfig.for_model("phi4_multimodal")

    with pytest.raises(ValueError, match=r"^Phi-4-multimodal \(phi4_multimodal\) is not supported: transformers registers"):
        make_image_text_adapter(Loaded(), None, "vlm:x")
    with pytest.raises(ValueError, match=r"^Phi-4-multimodal \(phi4_multimodal\) is not supported"):
        fr.check_refused(AutoConfig.for_model("phi4_multimodal"))  # a hub model's config, before its weights are read
    fr.check_refused(AutoConfig.for_model("qwen3_vl"))


@pytest.mark.parametrize("spec", NEW_FAMILIES)
def test_new_family_engine_matches_reference_on_several_images(spec):
    """Plain prompts with two images (SEED-2 multi-image dimensions, frames sent as images) crashed in
    get_rope_index through the generic path; the Qwen2-VL adapter writes the vision start/end tokens."""
    a = adapter(spec)
    assert isinstance(a, Qwen2VL) and a.describe()["family_record"] == "Qwen3-VL"
    reqs = _requests("tiny-qwen2-vl")  # one image, chat, two images, images between text
    assert any(len(r.images) == 2 and not r.chat for r in reqs)
    ref = a.score_choices(reqs)
    engine = adapter(spec, "shared-prefix")
    assert engine.describe()["scorer"] == "shared-prefix"
    _assert_same(ref, engine.score_choices(reqs), engine.model)
    _assert_same(ref[2:3], engine.score_choices(reqs[2:3]), engine.model)


@pytest.mark.parametrize("spec", NEW_FAMILIES + ["tiny-gemma3", "tiny-mllama"])
def test_new_family_batched_generation_equals_one_at_a_time(spec, demo):
    from .test_batched_generation import _items
    from .test_batched_generation import _requests as gen_requests

    a = adapter(spec)
    reqs = gen_requests(_items(demo, 5, 3), max_new_tokens=8, images=True)
    assert any(len(r.images) > 1 for r in reqs)
    first = a.generate_ids(reqs, batched=False)
    eos = a.tokenizer.eos_token_id
    a.model.generation_config.eos_token_id = [eos, *sorted({first[0][2], first[2][5]} - {eos})]  # rows end apart
    ref = a.generate_ids(reqs, batched=False)
    a.generator = BatchedGenerator(BatchPolicy())
    assert a.generate_ids(reqs) == ref and any(len(t) < 8 for t in ref)
    assert max(a.generator.batches) > 1
    gen = a.describe()["generation"]
    assert gen["mode"] == "batched" and gen["decoder"] == "generate in chunks"


def test_gemma3_scores_on_the_reference_scorer_with_the_reason():
    """Its sliding window (16 tokens in the tiny model) is shorter than the prompts: the engine's stacked choice
    pass fails on the model's sliding cache, so the adapter takes the reference scorer and says why."""
    from mmbench_lib.scoring.engine import SharedPrefixScorer

    a = adapter("tiny-gemma3", "shared-prefix")
    d = a.describe()
    assert d["scorer"] == "reference" and "sliding-window" in d["scorer_note"] and d["family_record"] == "Gemma 3"
    reqs = _requests("tiny-qwen2-vl")
    assert all(a.prepare(r).inputs["input_ids"].shape[1] > 16 for r in reqs)
    with pytest.raises(RuntimeError):  # the reason is real
        SharedPrefixScorer().score_many(a.model, [a.prepare(r) for r in reqs])
    assert [len(r) for r in a.score_choices(reqs)] == [len(r.continuations) for r in reqs]


def test_gemma3_batches_images_nested_per_row_and_a_failed_batch_is_recorded():
    from PIL import Image

    a = adapter("tiny-gemma3")
    assert a.nested_images and a.record.images == "nested"
    ims = [Image.new("RGB", (32, 32), c) for c in ((200, 0, 0), (0, 200, 0), (0, 0, 200))]
    reqs = [GenerateRequest(f"q{i}", "Describe the image." * (i + 1), [ims[i]], max_new_tokens=3) for i in range(3)]
    ref = a.generate_ids(reqs, batched=False)
    a.generator = BatchedGenerator(BatchPolicy())
    assert a.generate_ids(reqs) == ref and a.generator.batches == [3]
    assert a.describe()["generation"]["mode"] == "batched"
    a.nested_images = False  # as the generic path did: the processor rejects a flat list for several rows
    try:
        assert a.generate_ids(reqs) == ref
        gen = a.describe()["generation"]
        assert gen["mode"] == "one request at a time (fallback)" and "rejected a prompt" in gen["reason"]
    finally:
        a.nested_images, a.batch_fallback = True, None


def test_mllama_reference_scores_equal_decoding_the_choice_over_the_kept_cache():
    """The reference scorer extends ``cross_attention_mask`` over the choice tokens (each sees what the prompt's
    last token sees, as ``generate`` does); its scores equal feeding the choice token by token over the prompt's
    cache. Before, every request crashed (the 4-D mask was not extended). The engine is refused with its reason."""
    a = adapter("tiny-mllama", "shared-prefix")
    d = a.describe()
    assert d["scorer"] == "reference" and "cross-attention" in d["scorer_note"] and d["family_record"] == "Llama 3.2 Vision"
    reqs = _requests("tiny-qwen2-vl")
    scores = a.score_choices(reqs)
    for r, got in zip(reqs, scores):
        p = a.prepare(r)
        for cont, s in zip(p.continuations, got):
            with torch.inference_mode():
                out = a.model(**p.inputs, use_cache=True)
                n = p.inputs["input_ids"].shape[1]
                total = torch.log_softmax(out.logits[0, -1].float(), -1)[cont[0]]
                mask, cache = p.inputs["attention_mask"], out.past_key_values
                for i, (tok, nxt) in enumerate(zip(cont, cont[1:])):
                    mask = torch.cat([mask, torch.ones(1, 1, dtype=mask.dtype)], 1)
                    out = a.model(input_ids=torch.tensor([[tok]]), attention_mask=mask, past_key_values=cache,
                                  cross_attention_mask=p.inputs["cross_attention_mask"][:, -1:], use_cache=True,
                                  cache_position=torch.tensor([n + i]))
                    cache = out.past_key_values
                    total = total + torch.log_softmax(out.logits[0, -1].float(), -1)[nxt]
            assert s.sum_logprob == pytest.approx(float(total), abs=tolerance(a.model, s))
