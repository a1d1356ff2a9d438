"""CircularEval as a benchmark's official metric: per task group, the answers no rule matched, and the
off-by-default LLM choice extractor ("judge") of the official pipeline.

Read from a ``reports.circular.CircularReport`` (the one CircularEval machinery), following VLMEvalKit's
``mcq_circular_eval`` / ``prefetch_circular_group`` / ``eval_circular_group`` / ``extract_answer_from_item``
(vlmeval/dataset/utils/multiple_choice.py at open-compass/VLMEvalKit@e8e78f05): a question with a pass whose
rule-matched letter is wrong is wrong; one whose passes are all right or unmatched is undecided, and counts wrong
without a judge (:func:`unmatched` says how many). :func:`judged` asks the judge (an OpenAI-compatible endpoint,
``models.openai_compat``) about each unmatched pass with VLMEvalKit's extractor prompt, up to 3 attempts, then a
seeded random fallback, and records the judge's model name.

More: docs/modules.md, ``mmbench_lib/reports/circular_official.py``; docs/mmbench.md.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import pandas as pd

from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.models.openai_compat import OpenAICompatible
from mmbench_lib.reports.circular import CircularReport, _entry_of
from mmbench_lib.reports.numbers import interval_cell
from mmbench_lib.tasks.base import get_task, is_task
from mmbench_lib.tasks.letters import vlmevalkit_infer
from mmbench_lib.tasks.options import to_original

#: VLMEvalKit ``build_prompt`` (English; vlmeval/dataset/utils/multiple_choice.py at e8e78f05): question, options
#: (``build_option_str``), the model's answer
EXTRACTOR_PROMPT = (
    "You are an AI assistant who will help me to match an answer with several options of a single-choice question. "
    "You are provided with a question, several options, and an answer, and you need to find which option is most "
    "similar to the answer. If the meaning of all options are significantly different from the answer, output Z. "
    "Your should output a single uppercase character in A, B, C, D (if they are valid options), and Z. \n"
    "Example 1: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: a cute teddy bear\nYour output: A\n"
    "Example 2: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
    "Answer: Spider\nYour output: Z\n"
    "Example 3: \n"
    "Question: {}?\nOptions: {}\nAnswer: {}\nYour output: "
)
#: VLMEvalKit ``build_prompt_cn`` (multiple_choice.py at VLMEvalKit@028a6e77), used when the question has a CJK character
EXTRACTOR_PROMPT_CN = (
    "你是一个帮助我匹配答案与单选题中多个选项的 AI 助手。"
    "你会被提供：一个问题，多个选项，一个答案。你的任务是找到与答案意义最相近的选项。"
    "如果所有选项的意义都与答案显著不同，则输出 Z。"
    "你应该输出一个单个的大写字母，例如 A, B, C, D（如果它们是有效选项），或 Z。"
    "例 1:"
    "问题: 图中最主要的物体是什么?\n选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 一只可爱的泰迪熊\n输出: A\n"
    "例 2: \n"
    "问题: 图中最主要的物体是什么?\n选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 蜘蛛\n输出: Z\n"
    "例 3: \n"
    "问题: {}?\n选项: {}\n答案: {}\n输出: "
)
_CJK = re.compile("[\u4e00-\u9fff]")
RETRIES = 3  # VLMEvalKit extract_answer_from_item: retry = 3
FALLBACK_SEED = 2680


def option_str(choices: dict) -> str:
    """VLMEvalKit ``build_option_str``: ``There are several options: \\n`` then ``X. text\\n`` per option."""
    return "There are several options: \n" + "".join(f"{k}. {v}\n" for k, v in choices.items())


def extractor_prompt(question: str, choices: dict, prediction: str) -> str:
    """VLMEvalKit's prompt for one answer: the Chinese one when the question has a CJK character (``cn_string``)."""
    template = EXTRACTOR_PROMPT_CN if _CJK.search(str(question)) else EXTRACTOR_PROMPT
    return template.format(question, option_str(choices), str(prediction).strip())


@dataclass
class Judge:
    """The LLM choice extractor: ``model`` as the endpoint serves it (recorded), ``base_url`` of an OpenAI-compatible
    server, the key read from ``api_key_env``. ``client``: an object with ``generate`` (tests, or a loaded adapter)."""

    model: str
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    max_new_tokens: int = 16
    client: object = field(default=None, repr=False)

    def ask(self, key: str, prompt: str) -> str | None:
        """The judge's text for one prompt, ``None`` when the endpoint failed (one attempt used)."""
        if self.client is None:
            self.client = OpenAICompatible(self.model, base_url=self.base_url or None, api_key_env=self.api_key_env,
                                           concurrency=1, max_retries=1)
        try:
            [g] = self.client.generate([GenerateRequest(key, prompt, [], chat=True, max_new_tokens=self.max_new_tokens)])
        except (OSError, RuntimeError):  # EndpointError and kin: one attempt used, as VLMEvalKit's API failure
            return None
        return g.text


def _passes(r: CircularReport) -> pd.DataFrame:
    rows = r.rows[r.rows["scored"]].copy()
    rows["letter_found"] = rows["prediction"].notna()
    return rows


def unmatched(r: CircularReport) -> dict:
    """Answers the rule matched to no option: ``rows`` (passes), ``items`` with one, ``decided`` (questions whose
    passes are all right or unmatched: counted wrong without a judge, so the exact-matching result hangs on them)."""
    rows = _passes(r)
    rows["none"] = ~rows["letter_found"]
    rows["wrong"] = rows["letter_found"] & ~rows["correct"].astype(bool)
    per = rows.groupby("id")[["none", "wrong"]].sum()
    undecided = per[(per["none"] > 0) & (per["wrong"] == 0)]
    return {"rows": int((~rows["letter_found"]).sum()), "items": int((per["none"] > 0).sum()),
            "decided": int(len(undecided)), "undecided_ids": [str(i) for i in undecided.index]}


def judged(r: CircularReport, items: dict, judge: Judge, seed: int = FALLBACK_SEED) -> tuple[pd.DataFrame, dict]:
    """``r.items`` with each undecided question settled by ``judge`` (module doc), and the record: the judge's model,
    calls, passes it matched, random fallbacks, questions it turned right. ``items``: id -> the original item."""
    rng = random.Random(seed)
    out = r.items.copy()
    rows = _passes(r)
    record = {"judge_model": judge.model, "base_url": judge.base_url, "calls": 0, "matched": 0, "random_fallbacks": 0,
              "turned_right": 0, "questions": 0, "prompt": "VLMEvalKit build_prompt / build_prompt_cn"}
    for qid in unmatched(r)["undecided_ids"]:
        item, hit = items[qid], True
        record["questions"] += 1
        for row in rows[(rows["id"] == qid) & ~rows["letter_found"]].itertuples():
            order = list(row.option_order) if isinstance(row.option_order, list) else list(range(len(item.choices)))
            shown = {chr(65 + j): item.choices[o] for j, o in enumerate(order)}
            letter = None
            for attempt in range(RETRIES):
                record["calls"] += 1
                text = judge.ask(f"{qid}:{row.order}:{attempt}", extractor_prompt(item.question, shown, row.response or ""))
                got = vlmevalkit_infer(text, shown) if text is not None else None
                if got is not None and (got.letter or got.mode == "refusal"):
                    letter = got.letter or "Z"
                    record["matched"] += 1
                    break
            if letter is None:  # VLMEvalKit: "Failed to predict, thus randomly generate one."
                letter = rng.choice([*shown, "Z"])
                record["random_fallbacks"] += 1
            if to_original(letter, order) != row.gold:
                hit = False
                break
        if hit:
            out.loc[out["id"] == qid, "circular_correct"] = True
            record["turned_right"] += 1
    return out, record


def group_table(r: CircularReport, items: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per task group (``Task.groups``: MMBench's six L2 abilities, L1 and Overall) whose categories the report holds
    all of: questions, plain and circular accuracy (%) with the one interval rule (``reports.circular``)."""
    items = r.items if items is None else items
    groups = get_task(r.benchmark).groups if is_task(r.benchmark) else {}
    present = set(items["dimension_id"].dropna().astype(int))
    rows = []
    for name, ids in groups.items():
        if not set(ids) <= present:
            continue
        g = items[items["dimension_id"].isin(ids)]
        p, c = _entry_of(g, "plain_correct"), _entry_of(g, "circular_correct")
        rows.append({"group": name, "items": p["n"], "incomplete": p["failed"],
                     "plain %": _pct(p["accuracy"]), "plain 95%": _span(p), "circular %": _pct(c["accuracy"]),
                     "circular 95%": _span(c)})
    return pd.DataFrame(rows, columns=["group", "items", "incomplete", "plain %", "plain 95%", "circular %", "circular 95%"])


def _pct(v):
    return None if v is None else round(100 * v, 1)


def _span(e: dict):
    return interval_cell(e.get("ci_low"), e.get("ci_high"))  # as every table prints an interval


def unmatched_line(r: CircularReport, judge_record: dict | None = None) -> str:
    """One line: the passes no rule matched and how many questions they decided, and the judge used (or none)."""
    u = unmatched(r)
    if not u["rows"]:
        return "answer extraction: every answer matched an option by the rule (no judge needed)"
    head = (f"answer extraction: {u['rows']} answers in {u['items']} questions matched no option by the rule; "
            f"{u['decided']} questions hang on them")
    if not judge_record:
        return head + " and count wrong (exact matching, no judge; the official pipeline would ask an LLM)"
    j = judge_record
    return (head + f"; judge {j['judge_model']!r}: {j['calls']} calls, {j['matched']} matched, "
            f"{j['random_fallbacks']} random fallbacks, {j['turned_right']} questions turned right")
