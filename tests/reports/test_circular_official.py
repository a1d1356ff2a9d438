"""CircularEval as MMBench's official metric, through the one CircularEval machinery: the MMBench demo set under every
cyclic shift with scripted generated answers (recipe mmbench-gen, VLMEvalKit's can_infer), per-L2 groups, the
unmatched answers counted, and the off-by-default judge through the suite's OpenAI-compatible client against a stub
server on 127.0.0.1."""
from __future__ import annotations

import re

import pytest

from mmbench_lib.core.requests import Generation
from mmbench_lib.demo.mmbench import make_mmbench_demo
from mmbench_lib.pipeline import runs
from mmbench_lib.reports import circular
from mmbench_lib.reports import circular_official as O
from mmbench_lib.tasks import mmbench as M
from tests.models.openai_server import Server

UNMATCHED = "Which shape is larger?"  # both option texts in the answer: the rule matches none
WRONG_ONCE = "Which way is the arrow pointing?"


class ByPrompt:
    """A generating adapter (no weights) answering from the prompt: the gold letter, except an unmatched sentence for
    one question and a wrong letter on one shift of another."""

    name, sees_images, can_output_images = "scripted", False, False

    def __init__(self, gold: dict):
        self.gold, self.prompts = gold, []

    def generate(self, requests):
        out = []
        for r in requests:
            self.prompts.append(r.prompt)
            q = re.search(r"Question: (.*)\n", r.prompt).group(1)
            opts = tuple(re.findall(r"^[A-D]\. (.*)$", r.prompt, re.M))
            letter = self.gold[(q, opts)]
            if q == UNMATCHED:
                text = "The square is larger than the circle." if "the square" in opts[0] else "The circle is smaller than the square."
            elif q == WRONG_ONCE and letter == "A":
                text = "B"
            else:
                text = f"{letter}. {opts['ABCD'.index(letter)]}"
            out.append(Generation(text, 4, False))
        return out

    def score_choices(self, requests):
        raise NotImplementedError

    def describe(self) -> dict:
        return {"adapter": "scripted", "name": self.name}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("mmbcirc")
    paths = make_mmbench_demo(root / "data")
    data = {"annotation_file": paths["annotation_file"], "cache_dir": str(root / "cache")}
    items = {it.id: it for it in M.load(**data)}
    from mmbench_lib.tasks.options import select_and_arrange

    gold = {(it.question, tuple(it.choices)): it.answer for k in range(4) for it in select_and_arrange(list(items.values()), rotation=k)}
    config = runs.RunConfig("mmb", root / "out", data=data, model="smollm2", recipe="mmbench-gen", progress=False)
    adapter = ByPrompt(gold)
    folders = circular.order_runs(config, root / "out", adapter=adapter)
    return circular.report(folders), items, adapter


def _id(items, question):
    return next(i for i, it in items.items() if it.question == question)


def test_groups_and_unmatched_without_a_judge(report):
    r, items, adapter = report
    assert len(adapter.prompts) == 15 * 4 + 5 * 3 + 2 * 2  # every question once per shift of its options
    u = O.unmatched(r)
    big, arrow = _id(items, UNMATCHED), _id(items, WRONG_ONCE)
    assert (u["rows"], u["items"], u["decided"], u["undecided_ids"]) == (2, 1, 1, [big])
    by_id = r.items.set_index("id")
    assert not by_id.loc[big, "circular_correct"] and not by_id.loc[arrow, "circular_correct"]
    assert by_id.loc[arrow, "plain_correct"] == (items[arrow].answer != "A")
    t = O.group_table(r).set_index("group")
    assert list(t.index) == ["CP", "FP-S", "FP-C", "AR", "RR", "LR", "Perception", "Reasoning", "Overall"]
    assert t.loc["Overall", "items"] == 22 and t.loc["Overall", "circular %"] == round(100 * 20 / 22, 1)
    assert t.loc["FP-C", "items"] == 3 and t.loc["FP-C", "circular %"] == round(100 / 3, 1)  # larger and arrow wrong
    assert "1 questions hang on them and count wrong" in O.unmatched_line(r)


def test_judge_through_the_openai_client_on_a_stub_server(report):
    r, items, _ = report
    big = _id(items, UNMATCHED)
    gold_text = items[big].choices["AB".index(items[big].answer)]

    def answer(path, body):  # the judge: the letter of the gold text among the options in its prompt
        prompt = body["messages"][0]["content"][0]["text"]
        shown = dict(re.findall(r"^([A-D])\. (.*)$", prompt.split("Example 3:")[1], re.M))
        letter = next(k for k, v in shown.items() if v == gold_text)
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": letter}, "finish_reason": "stop"}],
                "usage": {"completion_tokens": 1}}

    with Server(answer=answer) as srv:
        judge = O.Judge("gpt-4o-mini-2024-07-18", base_url=srv.url, api_key_env="MMB_TEST_NO_KEY")
        judged, record = O.judged(r, items, judge)
    assert srv.url.startswith("http://127.0.0.1:") and srv.requests == 2  # one call per unmatched pass
    first = srv.bodies[0]
    assert first["model"] == "gpt-4o-mini-2024-07-18" and first["temperature"] == 0
    shown = dict(zip("AB", items[big].choices))
    rows = r.rows[(r.rows["id"] == big) & (r.rows["order"] == "rot-0")]
    assert first["messages"][0]["content"][0]["text"] == O.extractor_prompt(items[big].question, shown, rows["response"].iloc[0])
    assert record["judge_model"] == "gpt-4o-mini-2024-07-18" and (record["matched"], record["turned_right"]) == (2, 1)
    t = O.group_table(r, judged).set_index("group")
    assert t.loc["Overall", "circular %"] == round(100 * 21 / 22, 1)
    assert "judge 'gpt-4o-mini-2024-07-18': 2 calls, 2 matched, 0 random fallbacks, 1 questions turned right" in \
        O.unmatched_line(r, record)


def test_a_judge_that_matches_nothing_falls_back_as_vlmevalkit_does(report):
    r, items, _ = report

    class Mute:
        def generate(self, requests):
            return [Generation("I am not sure.", 3, False) for _ in requests]

    judged, record = O.judged(r, items, O.Judge("stub", client=Mute()))
    assert record["calls"] >= O.RETRIES and record["random_fallbacks"] >= 1 and record["matched"] == 0
    again, record2 = O.judged(r, items, O.Judge("stub", client=Mute()))
    assert record2 == record and again.equals(judged)  # the random fallback is seeded


def test_extractor_prompt_is_vlmevalkits():
    p = O.extractor_prompt("What is shown", {"A": "cat", "B": "dog"}, "a dog")
    assert p.endswith("Example 3: \nQuestion: What is shown?\nOptions: There are several options: \nA. cat\nB. dog\n\n"
                      "Answer: a dog\nYour output: ")
    assert p.startswith("You are an AI assistant who will help me to match an answer with several options")
    cn = O.extractor_prompt("图中是什么", {"A": "猫", "B": "狗"}, " 狗 ")
    assert cn.startswith("你是一个帮助我匹配答案") and cn.endswith("问题: 图中是什么?\n选项: There are several options: \nA. 猫\n"
                                                          "B. 狗\n\n答案: 狗\n输出: ")
