"""Stop strings end generation (``models.batching.ResponseStops``): on the real SmolLM2, every path -- the
one-at-a-time reference, the batched kv-decode path and the chunked ``generate`` path -- generates fewer tokens
than without them, and the responses equal the long responses cut afterwards (text and tokens counted)."""
import pytest

from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.models.batching import BatchedGenerator, ResponseStops, policy_from
from mmbench_lib.models.settings import ModelSettings

PROMPTS = ["Why is the sky blue?", "Write a sentence about the sea."]
LIMIT = 24


@pytest.fixture(scope="module")
def long_run(smollm2):
    """The responses without stop strings, and a stop string each response reaches well before the limit."""
    smollm2.settings = ModelSettings()
    reqs = [GenerateRequest(f"q{i}", p, [], max_new_tokens=LIMIT) for i, p in enumerate(PROMPTS)]
    ids = smollm2.generate_ids_one_at_a_time(reqs)
    texts = [smollm2.tokenizer.decode(t, skip_special_tokens=True) for t in ids]
    assert all(len(t) == LIMIT for t in ids), "every long response runs to the limit (the test needs it)"
    return reqs, ids, texts


def _stop(texts) -> str:
    """A stop string in the first half of every response: the shortest common word, else a space."""
    words = sorted({w for w in texts[0].split() if all(w in t[:len(t) // 2] for t in texts)}, key=len)
    return words[0] if words else " "


def _cut(smollm2, req, ids):
    return smollm2.finish(req, ids)


@pytest.mark.parametrize("policy", [None, {"kv_decode": True}, {"kv_decode": False, "chunk": 4}],
                         ids=["reference", "kv-decode", "chunked-generate"])
def test_stop_strings_end_generation_and_equal_cutting_afterwards(smollm2, long_run, policy):
    reqs, long_ids, texts = long_run
    stop = _stop(texts)
    settings = ModelSettings(stop_strings=(stop,))
    smollm2.settings = settings
    try:
        expected = [_cut(smollm2, r, t) for r, t in zip(reqs, long_ids)]  # the long responses cut afterwards
        if policy is None:
            ids = smollm2.generate_ids_one_at_a_time(reqs)
        else:
            smollm2.generator = BatchedGenerator(policy_from(policy))
            ids = smollm2.generate_ids(reqs)
            assert smollm2.batch_fallback is None
            assert (smollm2.generator.kv_reason(smollm2) is None) == policy["kv_decode"]
        got = [_cut(smollm2, r, t) for r, t in zip(reqs, ids)]
    finally:
        smollm2.settings = ModelSettings()
        smollm2.generator = BatchedGenerator()
    assert [g.text for g in got] == [e.text for e in expected]
    assert [g.num_tokens for g in got] == [e.num_tokens for e in expected]
    assert all(stop in t for t in texts) and all(stop not in g.text and not g.hit_limit for g in got)
    if policy is None or policy.get("kv_decode"):  # stopped at the token that completed the stop string
        assert [len(t) for t in ids] == [e.num_tokens for e in expected]
    assert sum(len(t) for t in ids) < len(reqs) * LIMIT  # fewer tokens generated than without stop strings
    assert all(len(t) < LIMIT for t in ids)


def test_a_stop_string_that_begins_in_the_prompt_does_not_stop_the_response(smollm2):
    """``generate(stop_strings=...)`` would stop on a stop string overhanging from the prompt; ours reads only the
    response: a stop string equal to the prompt's end never stops a row before its response holds it."""
    import torch

    smollm2.settings = ModelSettings(stop_strings=("assistant\n",))
    try:
        crit = ResponseStops(smollm2, prompt_width=3)
        ids = smollm2.tokenizer("user\nassistant\n", add_special_tokens=False)["input_ids"]
        prompt = torch.tensor([ids[:3] + ids[3:]])  # any tokens after column 3 are the "response"
        assert crit(prompt[:, :3], None).tolist() == [False]  # no response yet
        whole = smollm2.tokenizer("Hi there. assistant\n", add_special_tokens=False)["input_ids"]
        assert crit(torch.tensor([ids[:3] + whole]), None).tolist() == [True]
    finally:
        smollm2.settings = ModelSettings()
