"""MMBench (task ``mmb``): the TSV and hub-parquet copies give the same questions; the suite's cyclic shifts are
exactly the file's circular copies, so CircularEval from notebook 52's machinery is VLMEvalKit's; the official
prompt; bad input names file, item and field."""
from __future__ import annotations

import base64
import csv
import io
from collections import defaultdict

import pytest

from mmbench_lib.core.items import DataError
from mmbench_lib.demo import mmbench as demo_mmb
from mmbench_lib.tasks import get_task
from mmbench_lib.tasks import mmbench as M
from mmbench_lib.tasks.copies.tables import read_tsv
from mmbench_lib.tasks.letters import vlmevalkit_infer
from mmbench_lib.tasks.options import select_and_arrange
from mmbench_lib.tasks.recipes import generate_request, get_recipe, score_request


@pytest.fixture
def files(tmp_path):
    return demo_mmb.make_mmbench_demo(tmp_path / "mmb")


def _load(path, tmp_path, **kw):
    return M.load(path, cache_dir=tmp_path / "cache", **kw)


def test_taxonomy_twenty_categories_six_l2_two_l1():
    assert len(M.DIMENSIONS) == 20 and len(set(M.CATEGORY_IDS)) == 20
    assert [g for g in M.GROUPS][:6] == ["CP", "FP-S", "FP-C", "AR", "RR", "LR"]
    assert sorted(sum((M.GROUPS[g] for g in ("CP", "FP-S", "FP-C", "AR", "RR", "LR")), ())) == list(range(1, 21))
    assert len(M.GROUPS["Perception"]) == 12 and len(M.GROUPS["Reasoning"]) == 8 and M.GROUPS["Overall"] == tuple(range(1, 21))


def test_tsv_and_parquet_give_the_same_questions(files, tmp_path):
    task = get_task("mmb")
    assert task.probe(files["annotation_file"]) == "tsv" and task.probe(files["parquet"]) == "parquet"
    tsv, hub = _load(files["annotation_file"], tmp_path), _load(files["parquet"], tmp_path)
    assert len(tsv) == 22 and [it.id for it in tsv] == [str(i) for i in range(22)]
    assert {it.dimension_id for it in tsv} == set(M.DIMENSIONS)  # every category: every group is reported
    key = [(it.id, it.question, tuple(it.choices), it.answer, it.dimension_id, it.meta["hint"], it.meta["copies"]) for it in tsv]
    assert key == [(it.id, it.question, tuple(it.choices), it.answer, it.dimension_id, it.meta["hint"], it.meta["copies"])
                   for it in hub]
    assert [len(it.choices) for it in tsv].count(4) == 15 and {it.meta["copies"] for it in tsv} == {2, 3, 4}
    assert all(it.meta["copies"] == len(it.choices) for it in tsv)  # N passes for N options (MMBench README)
    assert tsv[0].meta["edition"] == "MMBench_DEV_EN" and tsv[0].meta["l2_category"] == "coarse_perception"
    assert [it.id for it in _load(files["annotation_file"], tmp_path, dimensions=[19])] == ["19", "20"]
    with open(tsv[0].images[0], "rb") as f:
        assert f.read(4) == b"\x89PNG"


def test_suite_shifts_are_the_files_circular_copies(files, tmp_path):
    """Every question under the suite's rotations (``selection.rotation``) shows the same option orders and gold
    letters as the file's copies at index + k*1e6, so CircularEval over rotations (reports.circular) is the
    official one over the copies (VLMEvalKit mcq_circular_eval: a group right only if every row is right)."""
    items = _load(files["annotation_file"], tmp_path)
    suite = defaultdict(set)
    for k in range(4):
        for it in select_and_arrange(items, rotation=k):
            suite[it.id].add((tuple(it.choices), it.answer))
    official = defaultdict(set)
    for r in read_tsv(files["annotation_file"]):
        opts = tuple(r[L] for L in "ABCD" if r[L] is not None)
        official[str(int(r["index"]) % M.OFFSET)].add((opts, r["answer"]))
    assert suite == official and sum(map(len, official.values())) == 15 * 4 + 5 * 3 + 2 * 2

    def circular(rows_by_q, pick):  # a model that answers by a rule of the shown options
        return {q: all(pick(opts) == gold for opts, gold in rows) for q, rows in rows_by_q.items()}

    first = lambda opts: "A"  # noqa: E731 - always the first letter: right on one pass of each question
    longest = lambda opts: "ABCD"[max(range(len(opts)), key=lambda i: (len(opts[i]), opts[i]))]  # noqa: E731
    for pick in (first, longest):
        assert circular(suite, pick) == circular(official, pick)
    assert not any(circular(official, first).values())


def _row(**kw):
    base = {"index": "7", "question": "What is shown?", "hint": "", "A": "cat", "B": "dog", "C": "", "D": "",
            "answer": "B", "category": "image_topic", "l2-category": "coarse_perception", "split": "dev",
            "image": base64.b64encode(_png()).decode()}
    return {**base, **kw}


def _png():
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 0, 0)).save(buf, format="PNG")
    return buf.getvalue()


def _tsv(path, rows):
    cols = list(rows[0])
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([r.get(c, "") for c in cols])
    return path


def test_two_options_hint_and_capitalised_l2(tmp_path):
    path = _tsv(tmp_path / "MMBench_DEV_CN_V11.tsv", [{**_row(hint="a pet"), "L2-category": "coarse_perception"}])
    (it,) = _load(path, tmp_path)
    assert it.choices == ["cat", "dog"] and it.answer == "B" and it.meta["hint"] == "a pet"
    assert it.meta["copies"] == 1 and it.meta["edition"] == "MMBench_DEV_CN_V11" and it.group == "CP"


@pytest.mark.parametrize("change, field, words", [
    ({"category": "counting"}, "category", "unknown category 'counting'"),
    ({"category": ""}, "category", "field missing or empty"),
    ({"answer": "C"}, "answer", "answer must be one of ['A', 'B']"),
    ({"B": "", "C": "bird"}, "B", "option B is empty but a later option is given"),
    ({"B": ""}, "A", "expected at least two options, found 1"),
    ({"index": "7a"}, "index", ""),
])
def test_bad_field_is_one_line_naming_file_item_and_field(tmp_path, change, field, words):
    path = _tsv(tmp_path / "MMBench_DEV_EN.tsv", [_row(**change)])
    with pytest.raises(DataError) as e:
        _load(path, tmp_path)
    msg = str(e.value)
    assert "MMBench_DEV_EN.tsv" in msg and field in msg and words in msg and "\n" not in msg


def test_undecodable_image_marks_that_item(tmp_path):
    path = _tsv(tmp_path / "MMBench_DEV_EN.tsv", [_row(image=base64.b64encode(b"not an image" * 8).decode())])
    (it,) = _load(path, tmp_path)
    assert it.meta["media_error"].startswith("image: cannot decode image")


def test_probe_names_what_it_found(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    with pytest.raises(DataError, match="expected an MMBench TSV"):
        get_task("mmb").probe(bad)
    empty = tmp_path / "hub"
    empty.mkdir()
    with pytest.raises(DataError, match="en/dev-"):
        get_task("mmb").probe(empty)
    no_cat = _tsv(tmp_path / "x.tsv", [{k: v for k, v in _row().items() if k != "category"}])
    with pytest.raises(DataError, match="missing \\['category'\\]"):
        get_task("mmb").probe(no_cat)


def test_only_copies_is_an_error(tmp_path):
    path = _tsv(tmp_path / "MMBench_DEV_EN.tsv", [_row(index="1000007")])
    with pytest.raises(DataError, match="no question row"):
        _load(path, tmp_path)


def test_official_prompt_with_and_without_hint(files, tmp_path):
    """VLMEvalKit ImageMCQDataset.build_prompt (vlmeval/dataset/image_mcq.py, VLMEvalKit@e8e78f05): the hint line
    only when the hint is not NaN, then Question, Options, one 'X. text' line per option, the instruction."""
    items = {it.id: it for it in _load(files["annotation_file"], tmp_path)}
    with_hint = generate_request(items["19"], get_recipe("mmbench-gen")).prompt
    assert with_hint.startswith("Hint: The chart shows how many units of four products were sold.\nQuestion: Which product")
    assert with_hint.endswith("\nD. R\nPlease select the correct answer from the options above.")
    plain = generate_request(items["11"], get_recipe("mmbench-gen")).prompt
    assert plain == ("Question: Which shape is larger?\nOptions:\nA. the square\nB. the circle\n"
                     "Please select the correct answer from the options above.")
    ranked = score_request(items["11"], get_recipe("mmbench-letters"))
    assert ranked.prompt.endswith("B. the circle\nAnswer:") and ranked.continuations == [" A", " B"]
    # the SEED recipes have no {hint} field: their prompts are unchanged for an item with a hint
    assert score_request(items["19"], get_recipe("seed1-ppl")).prompt == "Question: Which product sold the most?\nAnswer:"


@pytest.mark.parametrize("answer, letter, mode", [
    ("B", "B", "option"),
    ("The answer is (C) S.", "C", "option"),
    ("S", "C", "text"),  # the option text alone
    ("I think it is P or T", None, "none"),  # two option texts: unmatched, counted wrong without the judge
    ("Cannot determine the answer", None, "refusal"),
])
def test_official_rule_on_mmbench_answers(answer, letter, mode):
    """VLMEvalKit can_infer (vlmeval/utils/matching_util.py at e8e78f05) on a chart question's options."""
    got = vlmevalkit_infer(answer, {"A": "P", "B": "T", "C": "S", "D": "Q"})
    assert (got.letter, got.mode) == (letter, mode)


@pytest.mark.slow
def test_notebook_52_on_mmbench_reports_circular_eval_per_l2_group(demo_dir, outputs):
    """Notebook 52 through `mmbench run` with the shipped params (SmolLM2 generating, VLMEvalKit's prompt and rule),
    the five coarse-perception categories: CircularEval per category and for the CP group, the figure written."""
    import json
    from pathlib import Path

    from mmbench_lib.cli import main

    root = Path(__file__).resolve().parents[2]
    assert main(["run", str(root / "notebooks" / "52_circular_eval.ipynb"), "--run-id", "circ_mmb", "-f",
                 str(root / "params" / "52_circular_eval" / "mmb_demo_smollm2_generated.yaml"),
                 "-p", "data_dir", str(demo_dir), "-p", "data", "{dimensions: [1, 2, 3, 4, 5]}"]) == 0
    out = outputs / "circ_mmb"
    body = json.loads((out / "circular.json").read_text())
    assert body["benchmark"] == "mmb" and body["recipe"] == "mmbench-gen" and body["orders"] == [f"rot-{k}" for k in range(4)]
    assert body["overall"]["plain"]["n"] == 5 and body["overall"]["circular"]["correct"] <= body["overall"]["plain"]["correct"]
    groups = (out / "tables" / "circular_groups.csv").read_text().splitlines()
    assert groups[0].startswith("group,items") and [g.split(",")[0] for g in groups[1:]] == ["CP"]
    assert groups[1].split(",")[1] == "5"
    assert (out / "figures" / "circular_eval.png").is_file()
