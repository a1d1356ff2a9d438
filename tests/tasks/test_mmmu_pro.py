"""MMMU-Pro: every extraction rule of the official ``mmmu-pro/evaluate.py`` on worked examples, the
prompts of ``prompts.yaml``, the hub-parquet loader and the rescoring of official output files."""
from __future__ import annotations

import io
import json
import os
import random
from pathlib import Path

import pytest

from mmbench_lib.core.items import DataError
from mmbench_lib.tasks import mmmu_pro
from mmbench_lib.tasks import mmmu_pro_parser as P

TEN = ["Zinc", "Potassium", "Magnesium", "Molybdenum", "Calcium", "Sulfur", "Iron", "Copper", "Nitrogen", "Phosphate"]
I2A, LETTERS = P.mc_info(TEN)


def parse(resp, rng=None, choices=LETTERS, i2a=I2A):
    p = P.parse_answer(resp, choices, i2a, rng)
    return p.pred, p.mode, p.fallback


# --------------------------------------------------------------------------------------------- prompts

def test_prompts_are_prompts_yaml_verbatim():
    assert P.PROMPTS["direct"]["standard"] == "Answer with the option letter from the given choices directly."
    assert P.PROMPTS["cot"]["standard"].startswith("Answer the preceding multiple choice question. The last line")
    assert P.PROMPTS["cot"]["standard"].endswith("where LETTER is one of options. Think step by step before answering.")
    assert P.PROMPTS["cot"]["vision"].startswith("Write out the multiple-choice question in the image and then solve it.")
    assert P.PROMPTS["direct"]["vision"].endswith("'Answer: $LETTER' (without quotes) where LETTER is one of options.")
    assert all("  " not in t for m in P.PROMPTS.values() for t in m.values())


def test_standard_prompt_layout_and_ten_letters():
    text = P.standard_prompt("Which nutrient? <image 1>", TEN, "direct")
    lines = text.split("\n")
    assert lines[0] == "Which nutrient? <image 1>"
    assert lines[1] == "A. Zinc" and lines[10] == "J. Phosphate"
    assert lines[11] == P.PROMPTS["direct"]["standard"] and len(lines) == 12
    assert P.vision_prompt("cot") == P.PROMPTS["cot"]["vision"]


# --------------------------------------------------------------------------------------------- Answer: rule

def test_answer_line_decides_first():
    assert parse("Step 1 ... (B) looks wrong.\nAnswer: H") == ("H", "answer", False)


def test_answer_rule_uses_the_last_answer_colon():
    assert parse("Answer: A is tempting.\nOn reflection...\nAnswer: D") == ("D", "answer", False)


def test_answer_rule_is_case_sensitive():
    # "answer:" does not trigger the rule; the letter pass then finds "D " ... and " D "
    assert parse("final answer: D") == ("D", "letter", False)


def test_answer_rule_plain_substring_several_letters_falls_through():
    # "B or C" has two letters: no unique match; the whole response goes through the MMMU passes
    # (letter pass: "B " found, "C" is at the end -> padded "C " found too; latest " L " wins)
    assert parse("Answer: B or C") == ("C", "letter", False)


def test_answer_rule_substring_catches_letters_inside_words():
    # QUIRK: "Answer: The answer is (C)" -> 'T' is no option letter, 'C' only: C by the Answer rule;
    # but with ten options "Answer: I think C" holds I and C -> no unique match -> bracket/letter passes
    assert parse("Answer: The answer is (C)") == ("C", "answer", False)
    assert parse("Answer: I think C") == ("C", "letter", False)


def test_answer_rule_markdown_and_dollar():
    assert parse("so the result follows.\nAnswer: **G**") == ("G", "answer", False)
    assert parse("Answer: $LETTER") == ("E", "answer", False)  # QUIRK: only 'E' of "LETTER" is among A-J


def test_answer_rule_without_letter_falls_through_to_content():
    assert parse("Answer: nitrogen deficiency shows as yellow older leaves first") == ("I", "content", False)


# --------------------------------------------------------------------------------------------- MMMU passes

def test_bracket_pass_latest_wins():
    assert parse("Not (A), and not (B); it is (F)") == ("F", "bracket", False)


def test_letter_pass_not_left_guarded():
    # QUIRK: "J. A dramatic ..." -> "J." is no "J ", but "A " is a letter-pass hit: A (official output)
    assert parse("J. A dramatic increase in migration") == ("A", "letter", False)
    # "PDF " contains "F "
    assert parse("See the PDF file") == ("F", "letter", False)


def test_letter_pass_pronoun_i_is_option_i_with_ten_options():
    assert parse("I would say nitrogen") == ("I", "letter", False)
    four = LETTERS[:4]
    i2a4 = {k: I2A[k] for k in four}
    assert parse("I would say nitrogen", rng=None, choices=four, i2a=i2a4) == (None, "none", True)


def test_letter_pass_several_candidates_all_missing_space_guard_first_wins():
    # "B " and "D " occur only right after "(" or at word ends, never as " B "/" D ": all rfind -1 -> first
    assert parse("xB yD") == ("B", "letter", False)
    # with " L " present the latest one wins
    assert parse("A or maybe C instead") == ("C", "letter", False)


def test_letter_dot_pass():
    assert parse("H.") == ("H", "letter", False)  # stripped to " H ": the letter pass decides
    assert parse("The result:H.is it") == ("H", "letter-dot", False)


def test_content_pass_needs_more_than_five_tokens():
    assert parse("the missing nutrient is nitrogen here") == ("I", "content", False)
    assert parse("nutrient is nitrogen here ok", rng=None) == (None, "none", True)  # 5 tokens: skipped


def test_content_pass_ten_options_latest_text_wins():
    assert parse("not zinc or calcium but rather molybdenum surely") == ("D", "content", False)
    # "Iron" is inside nothing else here; "copper then iron" -> iron is later
    assert parse("first copper then iron at the very end") == ("G", "content", False)


def test_cot_trace_naming_several_letters_without_answer_line():
    trace = ("Option (A) is wrong because zinc. Option (C) fails too. Comparing (B) and (I), "
             "the deficiency pattern matches (I).")
    assert parse(trace) == ("I", "bracket", False)


def test_cot_trace_with_answer_line_overrides_brackets():
    trace = "Options (A), (C) and (I) remain. (I) fits best.\n\nAnswer: C"
    assert parse(trace) == ("C", "answer", False)


# --------------------------------------------------------------------------------------------- fallback

def test_empty_response_falls_back_seeded_and_marked():
    a = parse("", rng=random.Random(0))
    b = parse("", rng=random.Random(0))
    assert a == b and a[1:] == ("random", True) and a[0] in LETTERS
    assert parse("", rng=None) == (None, "none", True)


def test_dict_response_is_empty():
    assert parse({"error": "rate limit"}, rng=None) == (None, "none", True)
    assert parse(None, rng=None) == (None, "none", True)


def test_is_correct_is_exact_equality():
    assert P.is_correct("C", "C") and not P.is_correct("c", "C") and not P.is_correct(None, "C")


# --------------------------------------------------------------------------------------------- files

def test_parse_filename_spellings():
    assert mmmu_pro.parse_filename("gpt-4o_standard(10 options)_direct.jsonl") == ("gpt-4o", "standard10", "direct")
    assert mmmu_pro.parse_filename("m_x_standard (4 options)_cot.jsonl") == ("m_x", "standard4", "cot")
    assert mmmu_pro.parse_filename("out/gpt-4o_vision_cot.jsonl") == ("gpt-4o", "vision", "cot")
    with pytest.raises(ValueError):
        mmmu_pro.parse_filename("gpt-4o_vision.jsonl")


def test_parse_split():
    assert mmmu_pro.parse_split("vision-cot") == ("vision", "cot")
    assert mmmu_pro.parse_split("standard (10 options)") == ("standard10", "direct")
    with pytest.raises(ValueError, match="unknown MMMU-Pro split"):
        mmmu_pro.parse_split("validation")


def _write_output(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def test_score_responses_official_file(tmp_path):
    rows = [
        {"id": "test_History_1", "options": str(TEN), "answer": "B", "subject": "History", "response": "B. Potassium"},
        {"id": "test_Art_2", "options": str(TEN), "answer": "J", "subject": "Art", "response": "J. A dramatic one"},
        {"id": "test_Art_3", "options": str(TEN[:4]), "answer": "D", "subject": "Art", "response": "Answer: D"},
        {"id": "validation_Physics_7", "options": str(TEN), "answer": "A", "subject": "Physics", "response": ""},
    ]
    f = tmp_path / "tiny_standard(10 options)_cot.jsonl"
    _write_output(f, rows)
    out, s = mmmu_pro.score_responses(f, seeds=range(20))
    assert [r["parsed_pred"] for r in out[:3]] == ["B", "A", "D"]
    assert [r["correct"] for r in out[:3]] == [True, False, True]
    assert out[3]["fallback"] and out[3]["mode"] == "random" and out[3]["response_empty"]
    assert (s["model"], s["setting"], s["method"]) == ("tiny", "standard10", "cot")
    assert s["per_subject"]["Art"]["n"] == 2 and s["per_subject"]["Art"]["correct"] == 1
    assert s["per_discipline"]["Art and Design"]["n"] == 2
    assert list(s["official"])[0] == "Overall-Art and Design" and "Overall" in s["official"]
    spread = s["fallback_seed_spread"]
    assert spread["seeds"] == 20 and 0.5 <= spread["min"] <= spread["max"] <= 0.75
    assert any("expects 1730" in w for w in s["warnings"])
    # the same seed gives the same rows; no-random scores the empty response wrong
    out2, _ = mmmu_pro.score_responses(f, seeds=range(1))
    assert out2 == out
    out3, s3 = mmmu_pro.score_responses(f, use_random=False)
    assert out3[3]["parsed_pred"] is None and s3["overall"]["correct"] == 2


def test_official_file_with_blank_lines_and_int_options_scores_and_counts(tmp_path):
    """Quirks of hand-edited output files: a blank line (skipped, counted) and int options (read as
    text by ast.literal_eval(str(options)) as evaluate.py does; no traceback)."""
    f = tmp_path / "m_standard_direct.jsonl"
    f.write_text('{"id": "validation_Math_1", "options": "[1, 2, 3]", "answer": "B", "response": "Answer: B"}\n\n'
                 '{"id": "validation_Math_2", "options": [10, 20], "answer": "A", "response": "(A)"}\n')
    out, s = mmmu_pro.score_responses(f, seeds=range(1))
    assert [r["correct"] for r in out] == [True, True] and s["counts"]["blank_lines"] == 1


def test_read_output_names_line_and_field(tmp_path):
    f = tmp_path / "m_vision_direct.jsonl"
    f.write_text('{"id": "a", "options": "[\'x\', \'y\']", "answer": "A", "response": "A"}\n{"id": "b", "answer": "A"}\n')
    with pytest.raises(DataError, match=r"m_vision_direct.jsonl:2.*'b'.*options"):
        mmmu_pro.read_output(f)


# --------------------------------------------------------------------------------------------- loader

def _png(colour):
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(buf, format="PNG")
    return {"bytes": buf.getvalue(), "path": None}


def _write_parquet(path, rows):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def test_loader_standard_images_in_placeholder_order(tmp_path):
    rec = {"id": "test_Art_1", "question": "Which is older?", "options": str(["<image 2>", "<image 1>", "<image 3>"]),
           "explanation": "", "answer": "B", "topic_difficulty": "Easy", "subject": "Art", "img_type": "['Paintings']",
           **{f"image_{k}": _png((40 * k, 0, 0)) if k <= 3 else None for k in range(1, 8)}}
    _write_parquet(tmp_path / "data" / "standard (10 options)" / "test-00000-of-00001.parquet", [rec])
    items = mmmu_pro.load(tmp_path / "data", "standard10-cot", cache_dir=tmp_path / "cache")
    (it,) = items
    assert it.meta["image_tags"] == ["<image 2>", "<image 1>", "<image 3>"]
    assert [p.split("_image_")[1][:1] for p in it.images] == ["2", "1", "3"]
    assert it.letters == ["A", "B", "C"] and it.answer == "B" and it.group == "Art and Design"
    assert mmmu_pro.generation_prompt(it).endswith(P.PROMPTS["cot"]["standard"])
    assert "B. <image 1>" in mmmu_pro.generation_prompt(it)


def test_loader_vision_has_no_question_text(tmp_path):
    rec = {"id": "test_Math_3", "image": _png((0, 0, 200)), "options": str(TEN), "answer": "J", "subject": "Math"}
    _write_parquet(tmp_path / "d" / "vision" / "test" / "0000.parquet", [rec])
    (it,) = mmmu_pro.load(tmp_path / "d", "vision-direct", cache_dir=tmp_path / "c")
    assert it.question == "" and len(it.images) == 1 and it.letters[-1] == "J"
    assert mmmu_pro.generation_prompt(it) == P.PROMPTS["direct"]["vision"]


def test_loader_bad_answer_names_field(tmp_path):
    rec = {"id": "test_Math_4", "image": _png((0, 0, 0)), "options": "['a', 'b']", "answer": "C", "subject": "Math"}
    _write_parquet(tmp_path / "d" / "vision" / "test-0.parquet", [rec])
    with pytest.raises(DataError, match=r"test_Math_4.*answer"):
        mmmu_pro.load(tmp_path / "d", "vision", cache_dir=tmp_path / "c")


def test_write_official_roundtrip(tmp_path):
    rec = {"id": "test_Math_3", "image": _png((0, 0, 200)), "options": str(TEN), "answer": "I", "subject": "Math"}
    _write_parquet(tmp_path / "d" / "vision" / "test-0.parquet", [rec])
    items = mmmu_pro.load(tmp_path / "d", "vision-cot", cache_dir=tmp_path / "c")
    stored = {"test_Math_3": {"status": "ok", "response": "Nitrogen.\nAnswer: I"}}
    (path,) = mmmu_pro.write_official(items, stored, tmp_path / "smollm2" / "official")
    assert path.name == "smollm2_vision_cot.jsonl"
    rows, s = mmmu_pro.score_responses(path, seeds=range(2))
    assert rows[0]["parsed_pred"] == "I" and rows[0]["correct"] and s["overall"]["accuracy"] == 1.0


# --------------------------------------------------------------------------------------------- published

def test_leaderboard_overall_is_mean_of_settings():
    from mmbench_lib import published

    df = published.load("mmmu_pro_leaderboard")
    assert len(df) == 37 and set(mmmu_pro.MMMUProTask.published_tables) <= set(published.list_tables())
    mean = (df["standard_10"] + df["vision"]) / 2
    assert ((mean - df["pro_overall"]).abs() <= 0.1 + 1e-9).all()
    gpt = df.set_index("model").loc["GPT-4o (0513)"]
    assert (gpt["standard_10"], gpt["vision"], gpt["pro_overall"]) == (54.0, 49.7, 51.9)


# --------------------------------------------------------------------------------------------- official files

OFFICIAL_DIR = os.environ.get("MMBENCH_MMMU_PRO_OUTPUTS", "")


@pytest.mark.skipif(not OFFICIAL_DIR, reason="set MMBENCH_MMMU_PRO_OUTPUTS to a folder with the official "
                                             "mmmu-pro/output/*.jsonl files (evaluated: they carry pred_indexs)")
def test_parity_with_official_pred_indexs():
    """Every item the official scorer decided without its random fallback gets the same letter here."""
    files = sorted(Path(OFFICIAL_DIR).glob("*.jsonl"))
    assert files, OFFICIAL_DIR
    for f in files:
        recs = mmmu_pro.read_output(f)
        rows, s = mmmu_pro.score_responses(f, seeds=range(50))
        decided = [(r, o) for r, o in zip(rows, recs) if "pred_indexs" in o and not r["fallback"]]
        assert decided, f
        assert [r["parsed_pred"] for r, _ in decided] == [o["pred_indexs"] for _, o in decided], f.name
        official = sum(bool(o["if_right"]) for o in recs) / len(recs)
        spread = s["fallback_seed_spread"]
        # the official accuracy is one draw of its unseeded fallback: it lies in the span of 50 seeded draws
        # unless the fallbacks are many; allow one fallback item either side of the span
        slack = 1 / len(recs)
        assert spread["min"] - slack <= official <= spread["max"] + slack, (f.name, official, spread)


# --------------------------------------------------------------------------------------------- reports' hooks

def test_circular_eval_moves_images_with_their_placeholders_and_writes_shown_options(tmp_path):
    """Rotation 1 of ``[<image 2>, <image 1>, <image 3>]`` shows ``<image 1>`` first: the images follow their
    placeholders (the prompt and the image list agree), and the official file carries the options as shown, so
    a content answer is read against the shown letters."""
    from mmbench_lib.tasks.options import rotation_order, select_and_arrange

    rec = {"id": "test_Art_1", "question": "Which is older?", "options": str(["<image 2>", "<image 1>", "<image 3>"]),
           "explanation": "", "answer": "B", "topic_difficulty": "Easy", "subject": "Art", "img_type": "['Paintings']",
           **{f"image_{k}": _png((40 * k, 0, 0)) if k <= 3 else None for k in range(1, 8)}}
    _write_parquet(tmp_path / "data" / "standard (10 options)" / "test-0.parquet", [rec])
    (it,) = mmmu_pro.load(tmp_path / "data", "standard10-direct", cache_dir=tmp_path / "cache")
    assert rotation_order(3, 1) == [1, 2, 0]
    (moved,) = select_and_arrange([it], rotation=1)
    assert moved.choices == ["<image 1>", "<image 3>", "<image 2>"] and moved.answer == "A"
    assert moved.meta["image_tags"] == ["<image 1>", "<image 3>", "<image 2>"]
    assert [p.split("_image_")[1][:1] for p in moved.images] == ["1", "3", "2"]
    assert [tag for _k, tag, _p in mmmu_pro.image_placeholders(moved)] == moved.meta["image_tags"]
    stored = {it.id: {"status": "ok", "response": "The painting shown first is the older one: A"}}
    (path,) = mmmu_pro.write_official([moved], stored, tmp_path / "m" / "official")
    line = json.loads(path.read_text().splitlines()[0])
    assert line["options"] == str(moved.choices) and line["answer"] == "A"
    (unmoved,) = select_and_arrange([it], lettered_only=True)
    assert json.loads(mmmu_pro.write_official([unmoved], stored, tmp_path / "u" / "official")[0].read_text())["options"] \
        == rec["options"]  # the dataset's own string when nothing moved


def test_vision_options_are_in_the_screenshot_so_nothing_rotates(tmp_path):
    from mmbench_lib.tasks.options import lettered, select_and_arrange

    rec = {"id": "test_Math_3", "image": _png((0, 0, 200)), "options": str(TEN), "answer": "J", "subject": "Math"}
    _write_parquet(tmp_path / "d" / "vision" / "test-0.parquet", [rec])
    (it,) = mmmu_pro.load(tmp_path / "d", "vision-direct", cache_dir=tmp_path / "c")
    assert not lettered(it) and select_and_arrange([it], rotation=3) == []


def test_parser_variants_and_fallback_wins_for_the_protocol_report(tmp_path):
    from mmbench_lib.tasks.base import get_task

    task = get_task("mmmu-pro")
    assert list(task.parser_variants) == ["official", "mmmu-parser", "no-fallback"]
    assert all(p.kind.startswith("NOT") for k, p in task.parser_variants.items() if k != "official")
    assert task.fallback_wins({"answer": "C"}, tuple(LETTERS)) == ("C",)
    recs = [{"id": "validation_Art_1", "options": str(TEN), "answer": "C", "subject": "Art",
             "response": "Iron (G) looks plausible at first. Answer: C"},
            {"id": "validation_Art_2", "options": str(TEN), "answer": "A", "subject": "Art", "response": "no idea"}]
    official = mmmu_pro.score_records(recs, random.Random(0))
    mmmu = mmmu_pro.score_records(recs, random.Random(0), variant="mmmu-parser")
    assert [r["parsed_pred"] for r in official[:1]] == ["C"] and official[0]["mode"] == "answer"
    assert mmmu[0]["parsed_pred"] == "G" and mmmu[0]["mode"] == "bracket"  # MMMU's parser has no Answer: rule
    assert official[1]["mode"] == mmmu[1]["mode"] == "random"
    assert mmmu_pro.score_records(recs, None)[1]["parsed_pred"] is None
    with pytest.raises(ValueError, match="unknown MMMU-Pro parser variant"):
        mmmu_pro.score_records(recs, None, variant="lenient")
    path = tmp_path / "m_standard(10 options)_direct.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    _rows, s = mmmu_pro.score_responses(path, seeds=range(3), variant="mmmu-parser")
    assert s["parser"].startswith("NOT official")
