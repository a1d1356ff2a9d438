"""Answer ranking arithmetic: both reductions, ties, and the reference scorer on real models."""
import math

import pytest
import torch

from mmbench_lib.core.requests import IMAGE, ScoreRequest
from mmbench_lib.scoring import choice_scores, pick

from ..scores import tolerance


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
        tol = tolerance(model, s)  # derived from the token count, magnitude, dtype and network shape
        assert math.isclose(s.sum_logprob, manual, abs_tol=tol)
        assert math.isclose(s.mean_logprob, manual / c.shape[1], abs_tol=tol / c.shape[1])
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


def test_leaderboard_recipes_build_their_prompts_on_a_worked_example():
    from mmbench_lib.core.items import Item
    from mmbench_lib.tasks.recipes import get_recipe, score_request

    item = Item(id="q1", benchmark="seed", question="What is on the table?", choices=["A cup", "A dog", "Keys", "Nothing"],
                answer="C", dimension_id=1, dimension="Scene Understanding")
    letters = score_request(item, get_recipe("qwen-vl-letters"))
    assert letters.prompt == ("Question: What is on the table?\nOptions: A. A cup\nB. A dog\nC. Keys\nD. Nothing\n"
                              "Answer:")
    assert letters.continuations == [" A", " B", " C", " D"] and get_recipe("qwen-vl-letters").reduction == "mean"
    lmms = score_request(item, get_recipe("lmms-eval-ppl"))
    assert lmms.prompt == "What is on the table? Answer :" and lmms.continuations[2] == " Keys"
    assert get_recipe("lmms-eval-ppl").reduction == "sum"
    with pytest.raises(ValueError, match="continuation"):
        score_request(item, get_recipe("seed1-ppl", continuation="words"))


def test_letter_recipe_ranks_one_token_letters_with_a_real_model(smollm2, demo, tmp_path):
    from mmbench_lib.pipeline import runs
    from mmbench_lib.pipeline.ranking import rank_items
    from mmbench_lib.tasks.recipes import get_recipe
    from mmbench_lib.core.store import RunStore

    items = runs.load_items("seed", runs.demo_args("seed", demo))[:4]
    store = rank_items(items, smollm2, RunStore(tmp_path), get_recipe("qwen-vl-letters"), progress=False)
    rows = store.rows()
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    assert all(n == 1 for r in rows for n in r["num_tokens"])  # " A" ... " D" are one SmolLM2 token each
    # the options in the prompt change the scores of the same letters
    content = rank_items(items, smollm2, RunStore(tmp_path / "content"), get_recipe("seed1-ppl"), progress=False)
    assert [r["num_tokens"] for r in content.rows()] != [r["num_tokens"] for r in rows]
