"""Answer ranking arithmetic: both reductions, ties, and the reference scorer on real models."""
import math

import pytest
import torch

from mmbench_lib.models.base import IMAGE, ScoreRequest
from mmbench_lib.scoring import choice_scores, pick


def test_both_reductions_on_a_hand_computed_case():
    # choice A: two tokens, log-probs -1.0 and -2.0 -> sum -3.0, mean -1.5
    # choice B: one token, log-prob -2.5           -> sum -2.5, mean -2.5
    scores = choice_scores([torch.tensor([-1.0, -2.0]), torch.tensor([-2.5])])
    assert [s.sum_logprob for s in scores] == [-3.0, -2.5]
    assert [s.mean_logprob for s in scores] == [-1.5, -2.5]
    assert [s.num_tokens for s in scores] == [2, 1]
    assert pick(scores, "sum") == 1  # summed NLL (LAVIS reference) prefers the short choice
    assert pick(scores, "mean") == 0  # mean NLL (HF wrappers) prefers the long one


def test_ties_go_to_the_lowest_index():
    scores = choice_scores([torch.tensor([-2.0]), torch.tensor([-1.0]), torch.tensor([-1.0])])
    assert pick(scores, "sum") == 1


def test_unknown_reduction():
    with pytest.raises(ValueError, match="reduction"):
        pick(choice_scores([torch.tensor([-1.0])]), "max")


def test_reference_scorer_matches_a_manual_forward_on_smollm2(smollm2):
    tok, model = smollm2.tokenizer, smollm2.model
    prompt, choices = "Question: What colour is a clear sky?\nAnswer:", [" Blue", " A red brick wall"]
    [scores] = smollm2.score_choices([ScoreRequest("q", prompt, choices)])
    for choice, s in zip(choices, scores):
        p = tok(prompt, return_tensors="pt").input_ids
        c = tok(choice, add_special_tokens=False, return_tensors="pt").input_ids
        with torch.no_grad():
            logits = model(torch.cat([p, c], 1)).logits[0]
        lp = torch.log_softmax(logits, -1)
        manual = sum(lp[p.shape[1] - 1 + j, c[0, j]].item() for j in range(c.shape[1]))
        assert s.num_tokens == c.shape[1]
        assert math.isclose(s.sum_logprob, manual, abs_tol=1e-4)
        assert math.isclose(s.mean_logprob, manual / c.shape[1], abs_tol=1e-4)
    assert scores[0].sum_logprob > scores[1].sum_logprob  # a real model: "Blue" beats the brick wall


def test_text_only_model_never_sees_image_markers(smollm2):
    with_marker = smollm2.prepare(ScoreRequest("q", f"{IMAGE}Question: hi\nAnswer:", [" yes"]))
    without = smollm2.prepare(ScoreRequest("q", "Question: hi\nAnswer:", [" yes"]))
    assert torch.equal(with_marker.inputs["input_ids"], without.inputs["input_ids"])


def test_append_eos_scores_the_end_token_too(smollm2):
    from mmbench_lib.models.hf import HFCausalLM

    eos = HFCausalLM(smollm2.model, smollm2.tokenizer, "smollm2", append_eos=True)
    [plain] = smollm2.score_choices([ScoreRequest("q", "Question: hi\nAnswer:", [" yes"])])
    [with_eos] = eos.score_choices([ScoreRequest("q", "Question: hi\nAnswer:", [" yes"])])
    assert with_eos[0].num_tokens == plain[0].num_tokens + 1
    assert with_eos[0].sum_logprob < plain[0].sum_logprob
