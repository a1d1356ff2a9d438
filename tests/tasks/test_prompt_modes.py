"""Prompt modes (``mmbench_lib.tasks.modes``): the official prompt unchanged, the CoT prompts, the labelled
``Answer:``-line reading on worked examples, the run config's checks and defaults, and a real run per mode."""
import json

import pytest

from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.tasks import cmmmu, mmmu, mmmu_parser, mmmu_pro, mmmu_pro_parser
from mmbench_lib.tasks.base import all_tasks, get_task
from mmbench_lib.tasks.modes import COT_MAX_NEW_TOKENS, OFFICIAL, answer_line
from mmbench_lib.tasks.protocols import GENERATION, RANKING


@pytest.fixture(scope="module")
def items(demo):
    return {"mmmu": mmmu.load(demo["mmmu"]["source"], split="validation"),
            "cmmmu": cmmmu.load(demo["cmmmu"]["root"], split="val"),
            "mmmu-pro": mmmu_pro.load(demo["mmmu-pro"]["source"], split="standard10-direct")}


def test_every_generation_task_has_the_unchanged_official_mode_and_labels():
    for task in all_tasks("generation"):
        assert task.prompt_modes["official"] is OFFICIAL and OFFICIAL.max_new_tokens is None
        assert {m.label for m in task.prompt_modes.values()} >= {"generation (official)"}
    assert set(get_task("mmmu").prompt_modes) == {"official", "cot", "cot+answer-line"}
    assert get_task("mmmu").prompt_modes["cot"].max_new_tokens == COT_MAX_NEW_TOKENS == 512
    assert not get_task("mmmu").prompt_modes["cot+answer-line"].official
    assert get_task("mmmu-pro").prompt_modes["cot"].official  # MMMU-Pro's CoT prompt is its paper's (§3)


def test_official_prompts_are_unchanged_and_cot_swaps_only_the_instruction(items):
    task = get_task("mmmu")
    for it in items["mmmu"]:
        official = task.prompt(it)
        assert official == task.prompt(it, "official") == mmmu_parser.prompt(it.question, it.choices, it.question_type)
        cot = task.prompt(it, "cot")
        assert cot == task.prompt(it, "cot+answer-line")
        if it.question_type == "multiple-choice":
            body = official[:-len(mmmu_parser.MC_INSTRUCTION)]
            assert cot == body + mmmu_pro_parser.PROMPTS["cot"]["standard"]  # verbatim prompts.yaml instruction
            assert cot.endswith("Think step by step before answering.") and "'Answer: $LETTER'" in cot
        else:
            assert cot == official[:-len(mmmu_parser.OPEN_INSTRUCTION)] + mmmu.COT_INSTRUCTIONS["short-answer"]
    ctask = get_task("cmmmu")
    for it in items["cmmmu"]:
        official, cot = ctask.prompt(it), ctask.prompt(it, "cot")
        assert official.endswith("正确答案：\n") and cot == official[:-len("正确答案：\n")] + cmmmu.COT_ENDINGS[cmmmu.cmmmu_type(it)]
    ptask = get_task("mmmu-pro")
    it = items["mmmu-pro"][0]
    assert ptask.prompt(it) == mmmu_pro_parser.standard_prompt(it.question, it.choices, "direct")
    assert ptask.prompt(it, "cot") == mmmu_pro_parser.standard_prompt(it.question, it.choices, "cot")


@pytest.mark.parametrize("text, line", [
    ("The image shows a cell.\nAnswer: B", "B"),
    ("Answer: A\nWait, (A) ignores friction.\nAnswer: (C) 4.2 N", "(C) 4.2 N"),  # the last line wins
    ("**Final Answer:** D", "D"),  # markdown and "Final"
    ("answer : 3.5 m\n", "3.5 m"),
    ("分析……\n答案：对", "对"), ("正确答案：B", "B"),
    ("Answer:\nB", None),  # an empty Answer: line and a bare letter: no answer line
    ("The answer is B.", None), ("I would answer: B", None),  # not a line of its own
    (None, None),
])
def test_answer_line_worked_examples(text, line):
    assert answer_line(text) == line


def test_the_answer_line_decides_where_the_official_parser_reads_the_reasoning(items):
    """MMMU's official parser reads the whole response: the bracketed (A) of the reasoning wins over the final
    'Answer: C'. Read from the answer line (cot+answer-line), the same response gives C."""
    task = get_task("mmmu")
    response = "(A) ignores friction and B double counts it.\nAnswer: C"
    idx, letters = mmmu_parser.mc_info(["1 N", "2 N", "3 N", "4 N"])
    assert mmmu_parser.parse_multi_choice(response, letters, idx, None).pred == "A"
    text, line = task.parser_input(response, "cot+answer-line")
    assert (text, line) == ("C", "C") and mmmu_parser.parse_multi_choice(text, letters, idx, None).pred == "C"
    assert task.parser_input(response, "cot") == (response, None)  # the cot mode reads the whole response
    assert task.parser_input("No line here (B)", "cot+answer-line") == ("No line here (B)", None)


def test_run_config_checks_the_mode_and_sizes_max_new_tokens(tmp_path, demo):
    src = demo["mmmu"]["source"]
    # one default per protocol: generation's is notebook 20's documented 16 (docs/protocols.md §5); a ranking
    # recipe that generates a letter keeps 32
    assert RunConfig("mmmu", tmp_path, source=src, model="random").max_new_tokens == GENERATION.max_new_tokens == 16
    assert RunConfig("seed", tmp_path, data={"annotation_file": "x"}, model="random",
                     recipe="lmms-eval-gen").max_new_tokens == RANKING.max_new_tokens == 32
    assert RunConfig("mmmu", tmp_path, source=src, model="random", prompt_mode="cot").max_new_tokens == 512
    assert RunConfig("mmmu", tmp_path, source=src, model="random", prompt_mode="cot", max_new_tokens=64).max_new_tokens == 64
    with pytest.raises(ValueError, match=r"^task.prompt_mode: MMMU has no prompt mode 'cto'; .*did you mean 'cot'"):
        RunConfig("mmmu", tmp_path, source=src, model="random", prompt_mode="cto")
    with pytest.raises(ValueError, match=r"^task.prompt_mode: 'cot' applies to generation benchmarks"):
        RunConfig("seed", tmp_path, data={"annotation_file": "x"}, model="random", prompt_mode="cot")
    pro = demo["mmmu-pro"]["source"]
    c = RunConfig("mmmu-pro", tmp_path, source=pro, model="random", prompt_mode="cot")
    assert (c.split, c.prompt_mode) == ("standard10-cot", "cot")  # the CoT mode runs the -cot split
    c = RunConfig("mmmu-pro", tmp_path, source=pro, model="random", split="vision-cot")
    assert (c.split, c.prompt_mode) == ("vision-cot", "cot")  # a -cot split is the CoT mode, labelled so
    assert RunConfig("mmmu-pro", tmp_path, source=pro, model="random").prompt_mode == "official"


def _stored_run(tmp_path, items, responses, mode):
    """A finished store of ``items`` with the given responses, scored under ``mode``."""
    from mmbench_lib.core.rows import ok_row
    from mmbench_lib.core.store import RunStore
    from mmbench_lib.pipeline.generation import score_run

    store = RunStore(tmp_path / mode)
    store.append([ok_row(it, response=r, num_tokens=5, truncated=False) for it, r in zip(items, responses)])
    return score_run(items, store, mode=mode)


def test_scoring_under_the_answer_line_equals_the_official_scoring_of_the_lines(tmp_path, items):
    mc = [it for it in items["mmmu"] if it.question_type == "multiple-choice"][:3]
    letters = [it.answer if isinstance(it.answer, str) else it.answer[0] for it in mc]
    other = {"A": "B", "B": "C", "C": "D", "D": "A"}
    responses = [f"({other[g]}) looks right at first.\nAnswer: {g}" for g in letters[:2]] + ["(A) maybe."]
    rows, metrics = _stored_run(tmp_path, mc, responses, "cot+answer-line")
    assert [r["answer_line"] for r in rows] == [*letters[:2], None]
    assert [r["response"] for r in rows] == responses  # the row keeps the whole response
    assert metrics["counts"]["answer_lines"] == 2 and metrics["prompt_mode"] == "cot+answer-line"
    same, _ = _stored_run(tmp_path, mc, [*letters[:2], "(A) maybe."], "official")
    assert [r["correct"] for r in rows] == [r["correct"] for r in same]
    assert [r["parsed_pred"] for r in rows] == [r["parsed_pred"] for r in same]
    assert all(r["correct"] for r in rows[:2])
    whole, m = _stored_run(tmp_path, mc, responses, "cot")
    assert [r["parsed_pred"] for r in whole[:2]] == [other[g] for g in letters[:2]]  # the reasoning's letter
    assert "answer_line" not in whole[0] and "answer_lines" not in m["counts"]


def test_a_cot_run_records_and_labels_its_mode(tmp_path, demo, smollm2):
    from mmbench_lib.analysis import results
    from mmbench_lib.pipeline.generation import evaluate_generation

    src = demo["mmmu"]["source"]
    made = {}
    for mode in ("official", "cot"):
        c = RunConfig("mmmu", tmp_path / "modes" / mode, source=src, model="smollm2", limit=2, max_new_tokens=8,
                      prompt_mode=mode, progress=False)
        made[mode] = evaluate_generation(c, smollm2)
        man = json.loads((tmp_path / "modes" / mode / "manifest.json").read_text(encoding="utf-8"))
        assert man["generation"]["prompt_mode"] == mode and man["prompt_mode"]["label"] == f"generation ({mode})"
        assert man["spec"]["task"]["prompt_mode"] == mode
    assert made["cot"]["prompt_mode"] == "cot" and made["official"]["prompt_mode"] == "official"
    rows = {m: [json.loads(x) for x in (tmp_path / "modes" / m / "predictions.jsonl").read_text().splitlines()]
            for m in made}
    assert all(a["prompt_sha"] != b["prompt_sha"] for a, b in zip(rows["official"], rows["cot"]))
    table = results.format_table(results.collect(tmp_path / "modes"))
    assert "generation (official)" in table and "generation (cot)" in table
    with pytest.raises(ValueError, match="other settings: generation"):  # a folder keeps its mode
        evaluate_generation(RunConfig("mmmu", tmp_path / "modes" / "cot", source=src, model="smollm2", limit=2,
                                      max_new_tokens=8, progress=False), smollm2)


def test_runs_made_before_prompt_modes_resume_as_official():
    from mmbench_lib.pipeline.resume import identity

    old = {"benchmark": "mmmu", "generation": {"baseline": "none", "max_new_tokens": 16}}
    assert identity(old)["generation"]["prompt_mode"] == "official"
    assert identity({"benchmark": "seed", "recipe": {}, "generation": {"max_new_tokens": 8}})["generation"] == \
        {"max_new_tokens": 8}  # a ranking run's generated-letter settings are left as they are
