"""InternVL, SmolVLM2, Mistral3 / Pixtral and GLM-4.1V (issue 25), each on a tiny random-weight model of its real
transformers classes: the shared-prefix engine equals the reference scorer within the derived tolerance (same
predictions) on one image, chat, two images and images between text; batched generation equals one ``generate``
call per request on the demo MMMU / CMMMU prompts with their images; ``describe()`` (the manifest's model record)
names the scorer and generation path that ran."""
import pytest

from mmbench_lib.core.requests import ScoreRequest
from mmbench_lib.models import family_records as fr
from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy

from .test_families import _assert_same, _images, _requests, adapter

#: tiny spec -> family record name
FAMILIES = {"tiny-internvl": "InternVL", "tiny-smolvlm": "SmolVLM2", "tiny-mistral3": "Mistral3",
            "tiny-pixtral": "LLaVA / LLaVA-NeXT / Pixtral", "tiny-glm4v": "GLM-4.1V / 4.5V",
            "tiny-glm4v-moe": "GLM-4.1V / 4.5V"}
#: python packages a family's real processor imports (a missing one skips its tests with the reason)
NEEDS = {"tiny-smolvlm": "num2words"}


@pytest.fixture(autouse=True)
def _family_packages(request):
    spec = getattr(request.node, "callspec", None) and request.node.callspec.params.get("spec")
    if spec in NEEDS:
        pytest.importorskip(NEEDS[spec], reason=f"{spec}'s processor needs the {NEEDS[spec]} package")


def _all_requests():
    return _requests("tiny-qwen2-vl")  # one image, chat, two images, IMAGE markers between text


@pytest.mark.parametrize("spec", list(FAMILIES))
def test_family_engine_matches_reference(spec):
    a = adapter(spec)
    d = a.describe()
    assert d["family_record"] == FAMILIES[spec] and spec in fr.record_for(a.model.config.model_type).tiny
    reqs = _all_requests()
    ref = a.score_choices(reqs)
    # the images really enter the computation
    [other] = a.score_choices([ScoreRequest("x", reqs[2].prompt, reqs[2].continuations, reqs[2].images[::-1])])
    assert other[0].sum_logprob != pytest.approx(ref[2][0].sum_logprob, abs=1e-4)
    if a.record.positions == "m-rope":  # two images' 3-D positions run behind the indices: the engine must shift
        import torch

        from mmbench_lib.scoring import engine as eng

        with torch.inference_mode():
            a.model(**a.prepare(reqs[2]).inputs)
        assert eng._rope_delta(a.model) < 0
        assert a.describe()["video_input"] == ("native" if a.record.video == "native" else "frames")
    engine = adapter(spec, "shared-prefix")
    if a.record.engine_unsupported:
        assert engine.describe()["scorer"] == "reference"
        return
    assert engine.describe()["scorer"] == "shared-prefix"
    _assert_same(ref, engine.score_choices(reqs), engine.model)  # several questions in one call (caches stacked)
    _assert_same(ref[2:3], engine.score_choices(reqs[2:3]), engine.model)  # and one alone


def _stops_apart(first, eos):
    """Two extra stop tokens that end some rows early and no row at its first token (random weights repeat tokens)."""
    firsts = {t[0] for t in first}
    later = [t for row in first for t in row[2:] if t not in firsts and t != eos]
    return sorted(set(later[:1] + later[len(later) // 2:len(later) // 2 + 1]))


@pytest.mark.parametrize("spec", list(FAMILIES))
def test_family_batched_generation_equals_one_at_a_time(spec, demo):
    from .test_batched_generation import _items
    from .test_batched_generation import _requests as gen_requests

    a = adapter(spec)
    reqs = gen_requests(_items(demo, 5, 3), max_new_tokens=8, images=True)
    assert any(len(r.images) > 1 for r in reqs)
    first = a.generate_ids(reqs, batched=False)
    eos = a.tokenizer.eos_token_id
    old = a.model.generation_config.eos_token_id
    a.model.generation_config.eos_token_id = [eos, *_stops_apart(first, eos)]  # rows end at different steps
    try:
        ref = a.generate_ids(reqs, batched=False)
        a.generator = BatchedGenerator(BatchPolicy())
        got = a.generate_ids(reqs)
        gen = a.describe()["generation"]
    finally:
        a.model.generation_config.eos_token_id = old
    assert got == ref and any(len(t) < 8 for t in ref) and any(len(t) > 1 for t in ref)
    if a.record.batch_unsupported:
        assert gen["mode"] != "batched"
        return
    assert max(a.generator.batches) > 1
    assert gen["mode"] == "batched", gen
    kv = a.record.kv_unsupported is None  # the kv-decode fast path (one forward per step over the kept cache)
    assert gen["decoder"].startswith("kv-decode") if kv else gen["decoder"] == "generate in chunks", gen
    if kv:
        assert max(a.generator.decode_widths) > 1


def test_phi4_multimodal_is_refused_before_the_run_because_vlm_cannot_load_it():
    """The reason is checked against the installed transformers: ``vlm:`` loads AutoModelForImageTextToText, which has
    no class for Phi-4-multimodal; it sits under AutoModelForCausalLM (with its audio inputs). When a transformers
    release maps it, this test fails and the family can be tested on a tiny model instead."""
    from transformers import AutoConfig
    from transformers.models.auto import modeling_auto as auto

    mt = AutoConfig.for_model("phi4_multimodal").model_type
    assert mt not in auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    assert auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[mt] == "Phi4MultimodalForCausalLM"
    reason = fr.record_for(mt).refused
    assert "AutoModelForCausalLM" in reason and "AutoModelForImageTextToText" in reason and "\n" not in reason
    with pytest.raises(ValueError, match=r"^Phi-4-multimodal \(phi4_multimodal\) is not supported: transformers "):
        fr.check_refused(AutoConfig.for_model(mt))


def test_the_family_table_lists_the_families_supported_here():
    lines = fr.table()
    for name in ("InternVL", "SmolVLM2", "Mistral3", "GLM-4.1V / 4.5V"):
        [line] = [x for x in lines if x.startswith(name + " ")]
        assert "shared-prefix" in line and "not supported" not in line and fr.record_for(
            fr.RECORDS[[r.name for r in fr.RECORDS].index(name)].model_types[0]).refused is None
    [glm] = [x for x in lines if x.startswith("GLM")]
    assert "m-rope" in glm and "batched generate" in glm
    [intern] = [x for x in lines if x.startswith("InternVL")]
    assert "kv-decode" in intern
