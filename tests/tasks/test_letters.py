"""Letter extraction from generated answers (tasks/letters.py, a non-paper protocol) on worked examples,
and the generated-letter recipes' prompts (lmms-eval seedbench, VLMEvalKit multiple choice)."""
import pytest

from mmbench_lib.core.items import Item
from mmbench_lib.tasks.letters import extract, extract_all, lmms_eval_letter, vlmevalkit_letter
from mmbench_lib.tasks.recipes import RECIPES, generate_request, get_recipe, score_request

LETTERS = ["A", "B", "C", "D"]
CHOICES = ["a cat", "a dog", "two birds", "no animal"]


@pytest.mark.parametrize("response,letter,mode", [
    ("B", "B", "first-char"),
    ("  B. a dog\n", "B", "first-char"),
    ("The answer is B", "T", "first-char"),  # the first character, whatever it is: wrong for gold B
    ("b", "b", "first-char"),  # case-sensitive: never equals an upper-case gold
    ("(C)", "(", "first-char"),
    ("", None, "empty"),
    (" \n ", None, "empty"),
])
def test_lmms_eval_first_character(response, letter, mode):
    got = lmms_eval_letter(response, LETTERS, CHOICES)
    assert (got.letter, got.mode) == (letter, mode)


@pytest.mark.parametrize("response,letter,mode", [
    ("B", "B", "option"),
    ("(B) a dog", "B", "option"),
    ("The answer is B.", "B", "option"),
    ("**C**", "C", "option"),  # * is one of the characters turned into spaces
    ("C) two birds", "C", "option"),
    ("[D]", "D", "option"),
    ("A dog", "A", "option"),  # the article "A" is a whole token: read as option A (VLMEvalKit's known pitfall)
    ("I think it is the dog", None, "none"),  # "the dog" is no option's text
    ("I think it shows a dog", "B", "text"),  # no letter token; exactly one option text occurs
    ("A or B", None, "none"),  # two letters -> text pass -> no option text -> no answer
    ("A. a cat B. a dog", None, "none"),  # two letters, two option texts: no answer
    ("c", None, "none"),  # lower case is not a letter token, and "c" is no option's text
    ("Cannot determine the answer", None, "refusal"),
    ("Z", None, "refusal"),
    ("", None, "none"),
    # VLMEvalKit e8e78f0: the one letter must be among the last five tokens; "answer is X" is read after the option pass
    ("B is what the picture shows, as the dog is brown and big", None, "none"),  # B is 1st of 12 tokens; no text hit
    ("A. a cat\n\nThe answer is D. no animal", "D", "answer-is"),  # two letters: the option pass reads nothing
    ("The correct answer is **C**, two birds sit there, not a dog", "C", "answer-is"),  # C is 5th of 13 tokens
])
def test_vlmevalkit_exact_matching(response, letter, mode):
    got = vlmevalkit_letter(response, LETTERS, CHOICES)
    assert (got.letter, got.mode) == (letter, mode)


def test_extract_by_name_and_all():
    both = extract_all("The answer is B.", LETTERS, CHOICES)
    assert {k: v.letter for k, v in both.items()} == {"lmms-eval": "T", "vlmevalkit": "B"}
    assert extract("vlmevalkit", "B", LETTERS, CHOICES).letter == "B"
    with pytest.raises(ValueError, match="unknown letter extractor 'gpt'"):
        extract("gpt", "B", LETTERS, CHOICES)


def _item():
    return Item(id="q1", benchmark="seed", question="What is shown?", choices=CHOICES, answer="B")


def test_generated_letter_recipes_build_the_harness_prompts():
    item = _item()
    lmms = generate_request(item, get_recipe("lmms-eval-gen"), max_new_tokens=7)
    assert lmms.prompt == ("What is shown?\nA. a cat\nB. a dog\nC. two birds\nD. no animal\n"
                           "Answer with the option's letter from the given choices directly.")
    assert lmms.chat and lmms.max_new_tokens == 7 and lmms.images == []
    vlm = generate_request(item, get_recipe("vlmevalkit-gen"))
    assert vlm.prompt == ("Question: What is shown?\nOptions:\nA. a cat\nB. a dog\nC. two birds\nD. no animal\n"
                          "Please select the correct answer from the options above.")
    for name in ("lmms-eval-gen", "vlmevalkit-gen"):
        r = RECIPES[name]
        assert r.generates and r.reduction is None and r.extractor in ("lmms-eval", "vlmevalkit")
    with pytest.raises(ValueError, match="continuation must be"):
        score_request(item, get_recipe("lmms-eval-gen"))
    with pytest.raises(ValueError, match="ranks choices"):
        generate_request(item, get_recipe("seed1-ppl"))
