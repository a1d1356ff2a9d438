"""Model settings to match a model card (``mmbench_lib.models.settings``), on real tiny models and processors:
processor keywords change what the processor makes, the system prompt and chat-template keywords reach the
template, stop strings cut a response where it would have stopped; all recorded in ``describe()`` (the manifest)."""
import pytest
from PIL import Image

from mmbench_lib.core.requests import GenerateRequest, ScoreRequest
from mmbench_lib.models import load_adapter
from mmbench_lib.models.settings import ModelSettings
from mmbench_lib.pipeline.config import RunConfig


def test_processor_kwargs_reach_the_processor():
    """Qwen2-VL's ``max_pixels``: a 64x64 image at most 32x32 pixels (16 tokens) by the tiny default, 16x16 (4) here."""
    a = load_adapter("tiny-qwen2-vl", device="cpu")
    req = ScoreRequest("q", "What is it?", [" A"], [Image.new("RGB", (64, 64))])
    assert a.prepare(req).inputs["image_grid_thw"].tolist() == [[1, 8, 8]]
    a.settings = ModelSettings(processor_kwargs={"max_pixels": 16 * 16, "min_pixels": 8 * 8})
    assert a.prepare(req).inputs["image_grid_thw"].tolist() == [[1, 4, 4]]
    assert a.describe()["settings"]["processor_kwargs"] == {"max_pixels": 256, "min_pixels": 64}


def test_system_prompt_and_chat_template_kwargs_reach_the_template():
    a = load_adapter("tiny-llava-onevision", device="cpu")
    a.processor.chat_template = ("{% if thinking %}<think>{% endif %}" + a.processor.chat_template)
    a.settings = ModelSettings(system_prompt="Answer with one letter.", chat_template_kwargs={"thinking": True})
    text = a._family_text("Which colour?", [Image.new("RGB", (32, 32))], chat=True)
    assert text.startswith("<think><|im_start|>system\nAnswer with one letter.<|im_end|>\n<|im_start|>user\n<image>")
    assert a._family_text("Which colour?", [], chat=False) == "Which colour?"  # plain prompts: no template


def test_system_prompt_reaches_a_text_model(smollm2):
    smollm2.settings = ModelSettings(system_prompt="You are terse.")
    try:
        text, _ = smollm2._text("Hi", chat=True)
    finally:
        smollm2.settings = ModelSettings()
    assert "<|im_start|>system\nYou are terse.<|im_end|>" in text and "SmolLM" not in text


def test_stop_strings_cut_the_response_and_count_the_tokens_up_to_the_cut():
    a = load_adapter("tiny-llava", device="cpu")
    req = GenerateRequest("g", "Describe the image.", [Image.new("RGB", (32, 32))], max_new_tokens=6)
    [ids] = a.generate_ids([req], batched=False)
    k = 3
    stop = a.tokenizer.decode(ids[k - 1:k], skip_special_tokens=True).strip()[:2]
    assert stop
    whole = a.tokenizer.decode(ids, skip_special_tokens=True)
    a.settings = ModelSettings(stop_strings=(stop,))
    g = a.finish(req, ids)
    assert g.text == whole[:whole.find(stop)].strip() and not g.hit_limit
    assert stop in a.tokenizer.decode(ids[:g.num_tokens], skip_special_tokens=True)
    assert stop not in a.tokenizer.decode(ids[:g.num_tokens - 1], skip_special_tokens=True)
    assert a.describe()["settings"]["stop_strings"] == [stop]


def test_run_config_carries_the_settings_to_the_adapter_and_checks_them(tmp_path):
    c = RunConfig("mmmu", tmp_path, source="x", model="tiny-qwen2-vl", processor_kwargs={"max_pixels": 256},
                  system_prompt="Be brief.", chat_template_kwargs={"enable_thinking": False}, stop_strings=["\n\n"])
    assert c.adapter_options()["settings"] == ModelSettings({"max_pixels": 256}, "Be brief.", {"enable_thinking": False},
                                                            ("\n\n",))
    assert c.to_dict()["generation"]["stop_strings"] == ["\n\n"]  # the manifest's spec
    assert "settings" not in RunConfig("mmmu", tmp_path, source="x", model="tiny-qwen2-vl").adapter_options()
    with pytest.raises(ValueError, match=r"^generation.stop_strings: expected non-empty strings"):
        RunConfig("mmmu", tmp_path, source="x", stop_strings=[""])
    with pytest.raises(ValueError, match=r"^model.processor_kwargs: expected dict"):
        RunConfig("mmmu", tmp_path, source="x", processor_kwargs="max_pixels=3")
    with pytest.raises(ValueError, match="need a model with a processor"):
        load_adapter("smollm2", device="cpu", settings=ModelSettings(processor_kwargs={"max_pixels": 1}))


@pytest.mark.parametrize("text, trace, answer", [
    ("<think>A is red, so A.</think>\n\nThe answer is (A).", "A is red, so A.", "The answer is (A)."),
    ("The sky is blue.</think>Answer: B", "The sky is blue.", "Answer: B"),  # the template opened the trace
    ("<think>Counting the apples: one, two", "Counting the apples: one, two", ""),  # cut by the token limit
    ("The answer is (C).", None, "The answer is (C)."),
])
def test_thinking_traces_are_split_from_the_answer_the_parser_reads(text, trace, answer):
    from mmbench_lib.models.settings import split_thinking

    assert split_thinking(text) == (trace, answer)


def test_a_generation_row_keeps_the_trace_and_gives_the_parser_the_answer(demo):
    from mmbench_lib.core.requests import Generation
    from mmbench_lib.pipeline.generation import GenerationProtocol, build_prompt
    from mmbench_lib.tasks import mmmu

    item = mmmu.load(demo["mmmu"]["source"], split="validation")[0]
    req = GenerateRequest(item.id, build_prompt(item)[0], [], max_new_tokens=64)
    row = GenerationProtocol.finish(None, item, (req, {}), Generation("<think>Option B fits.</think> (B)", 9, False))
    assert row["response"] == "(B)" and row["thinking"] == "Option B fits." and row["num_tokens"] == 9
    # the step is named and the raw text kept (tasks/thinking.py)
    assert row["raw_response"] == "<think>Option B fits.</think> (B)" and row["thinking_step"] == "thinking trace removed (closed)"
    plain = GenerationProtocol.finish(None, item, (req, {}), Generation("(B)", 2, False))
    assert plain["response"] == "(B)" and "thinking" not in plain and "raw_response" not in plain


def test_gpu_dtype_follows_a_16_bit_checkpoint_else_bf16_and_the_cpu_stays_fp32(monkeypatch):
    import torch

    from mmbench_lib.models.hf import pick_dtype

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert pick_dtype(None, "cuda:0", "float16") == torch.float16  # LLaVA-1.5's checkpoint: fp16
    assert pick_dtype(None, "cuda:0", "float32") == torch.bfloat16
    assert pick_dtype(None, "cuda:0", None) == torch.bfloat16
    assert pick_dtype("float32", "cuda:0", "float16") == torch.float32  # asked: as asked
    assert pick_dtype(None, "cpu", "float16") == torch.float32
