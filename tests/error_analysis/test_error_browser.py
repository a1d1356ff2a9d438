"""The error-case browser driven through its widgets (no browser), the CSV, resume, automatic tags, sampling."""
import csv
import json

import pytest

from mmbench_lib.error_analysis import errors
from mmbench_lib.error_analysis import BrowserState, ErrorBrowser


def _case(i, subject="Art", correct=False, **kw):
    base = {"id": f"q{i}", "benchmark": "mmmu", "model": "m", "subject": subject, "group": "Art and Design",
            "difficulty": ["Easy", "Medium", "Hard"][i % 3], "image_type": [["Photographs"], ["Diagrams"]][i % 2],
            "question_type": "multiple-choice", "answer": "A", "prediction": "B", "response": "B", "fallback": False,
            "mode": "letter", "truncated": False, "scores": None, "status": "ok", "error": None, "correct": correct,
            "item": None}
    base.update(kw)
    return base


@pytest.fixture
def cases():
    subjects = ["Art"] * 10 + ["Math"] * 6 + ["History"] * 4
    out = [_case(i, s) for i, s in enumerate(subjects)]
    out += [_case(100 + i, "Art", correct=True) for i in range(5)]
    return out


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_tagging_through_the_widgets_writes_the_csv_and_resumes(cases, tmp_path):
    state = BrowserState(errors.wrong_cases(cases)[:6], "run-1", annotations_dir=tmp_path, annotator="me")
    view = ErrorBrowser(state)
    assert state.current["id"] == "q0" and not state.path.exists()  # nothing written before a change
    view.category.value = "perceptual error"  # a change is saved at once
    rows = _rows(tmp_path / "run-1.csv")
    assert [(r["sample_id"], r["category"], r["annotator"]) for r in rows] == [("q0", "perceptual error", "me")]
    view.note.value = "misread the chart"
    view.save_next_button.click()
    assert state.current["id"] == "q1"
    view.category.value = "reasoning error"
    view.next_button.click()
    view.prev_button.click()
    assert view.category.value == "reasoning error"  # the view shows the stored tag when coming back
    view.next_button.click()
    view.save_button.click()  # saving an untagged case keeps it untagged
    rows = {r["sample_id"]: r for r in _rows(tmp_path / "run-1.csv")}
    assert rows["q0"]["note"] == "misread the chart" and rows["q1"]["category"] == "reasoning error"
    assert rows["q2"]["category"] == ""
    assert not view.log.outputs, view.log.outputs  # no callback raised
    assert not list(tmp_path.glob("*.tmp"))  # atomic write left no temp file

    again = BrowserState(errors.wrong_cases(cases)[:6], "run-1", annotations_dir=tmp_path)
    assert again.current["id"] == "q2" and again.progress == (2, 6)  # resumes at the first untagged
    view2 = ErrorBrowser(again)
    assert view2.category.value == ""
    view2.prev_button.click()
    assert (view2.category.value, view2.note.value) == ("reasoning error", "")


def test_filters_and_navigation(cases, tmp_path):
    state = BrowserState(errors.wrong_cases(cases), "run-2", annotations_dir=tmp_path)
    view = ErrorBrowser(state)
    assert "Math" in view.filters["subject"].options
    view.filters["subject"].value = "Math"
    assert {c["subject"] for c in state.visible} == {"Math"} and len(state.visible) == 6
    view.filters["image_type"].value = "Diagrams"
    assert all("Diagrams" in c["image_type"] for c in state.visible) and len(state.visible) == 3
    view.filters["difficulty"].value = "Hard"
    view.filters["difficulty"].value = "(all)"
    for _ in range(10):
        view.next_button.click()
    assert state.cursor == len(state.visible) - 1  # stops at the end
    view.filters["subject"].value = "(all)"
    view.filters["image_type"].value = "(all)"
    assert len(state.visible) == 20
    with pytest.raises(ValueError):
        state.tag("not a category")


def test_ranked_item_shows_per_choice_scores(tmp_path):
    c = _case(1, benchmark="seed", response=None, mode=None, fallback=None,
              scores={"sum": [-1.0, -0.5, -3.0, -2.0], "mean": [-0.5, -0.25, -1.5, -1.0]})
    view = ErrorBrowser(BrowserState([c], "run-3", annotations_dir=tmp_path))
    assert "-0.500" in view.options.value and "gold" in view.options.value and "predicted" in view.options.value
    assert errors.auto_tags(c) == []


@pytest.mark.parametrize("response, extra, expected", [
    ("", {"prediction": None, "mode": "none"}, {"empty response", "answer extraction failure"}),
    ("   ", {"prediction": [""], "mode": "open"}, {"empty response", "answer extraction failure"}),
    ("I cannot determine this from the image.", {"fallback": True, "mode": "random"},
     {"rejection", "answer extraction failure"}),
    ("I'm sorry, but I can't help with that.", {"prediction": None}, {"rejection", "answer extraction failure"}),
    ("抱歉，我无法确定图中的内容。", {"prediction": None, "mode": "empty"}, {"rejection", "answer extraction failure"}),
    ("根据图片不能确定答案", {"prediction": "A"}, {"rejection"}),
    ("The answer is (B).", {}, set()),
])
def test_automatic_tags(response, extra, expected):
    c = _case(0, response=response, **extra)
    assert set(errors.auto_tags(c)) == expected


@pytest.mark.parametrize("response, extra, tags, suggestion", [
    # cut at max_new_tokens after a cleanly parsed answer: the answer was read, nothing to suggest
    ("Answer: B. The curve rises because the", {"prediction": "B", "mode": "letter", "truncated": True}, set(), ""),
    ("The answer is (B) because the curve", {"truncated": True}, set(), ""),
    # cut before any answer: the parser's random fallback decided it -> an extraction problem
    ("Let us look at the graph. The x-axis shows the", {"prediction": "C", "fallback": True, "mode": "random",
                                                         "truncated": True},
     {"answer extraction failure", "truncated response"}, "answer extraction error"),
    ("首先，我们观察图中的", {"prediction": None, "truncated": True},
     {"answer extraction failure", "truncated response"}, "answer extraction error"),
    # not cut, no answer: an extraction failure, not a truncation
    ("The picture is nice.", {"prediction": None, "mode": "none"}, {"answer extraction failure"}, "answer extraction error"),
    # a generated letter (ranking row) cut before the letter, and one cut after it
    (None, {"scores": {"sum": [0.0, 1.0]}, "prediction": None, "truncated": True}, {"truncated response"},
     "answer extraction error"),
    (None, {"scores": {"sum": [0.0, 1.0]}, "prediction": "B", "truncated": True}, set(), ""),
])
def test_truncation_is_a_tag_only_when_no_answer_was_parsed(response, extra, tags, suggestion):
    c = _case(0, response=response, **extra)
    assert set(errors.auto_tags(c)) == tags
    assert errors.suggested_category(errors.auto_tags(c)) == suggestion


def test_automatic_tags_are_suggestions_beside_the_human_tag(tmp_path):
    c = _case(0, response="抱歉，无法回答", prediction=None, fallback=True)
    state = BrowserState([c], "run-4", annotations_dir=tmp_path)
    view = ErrorBrowser(state)
    assert "rejection" in view.suggestion.value and "not a human tag" in view.suggestion.value
    view.note.value = "model declined"  # any change writes the row, with the suggestion in its own columns
    row = _rows(tmp_path / "run-4.csv")[0]
    assert row["category"] == "" and row["auto_category"] == "rejection to answer"
    assert "rejection" in row["auto_tags"]
    view.category.value = "lack of knowledge"
    row = _rows(tmp_path / "run-4.csv")[0]
    assert row["category"] == "lack of knowledge" and row["auto_category"] == "rejection to answer"
    view.accept_button.click()  # accepting the suggestion makes it the human tag
    assert _rows(tmp_path / "run-4.csv")[0]["category"] == "rejection to answer"


def test_stratified_seeded_sample_is_reproducible_and_saved(cases, tmp_path):
    a = errors.sample_errors(cases, 10, stratify_by="subject", seed=7)
    assert a == errors.sample_errors(cases, 10, stratify_by="subject", seed=7)
    by_id = {c["id"]: c for c in cases}
    counts = {s: sum(by_id[i]["subject"] == s for i in a) for s in ("Art", "Math", "History")}
    assert counts == {"Art": 5, "Math": 3, "History": 2}  # proportional to 10/6/4 wrong
    assert all(by_id[i]["correct"] is False for i in a)
    assert errors.sample_errors(cases, 10, seed=1) != errors.sample_errors(cases, 10, seed=2)
    assert len(errors.sample_errors(cases, 500)) == 20  # all errors when fewer than asked

    run = tmp_path / "run"
    run.mkdir()
    ids = errors.sample_for_run(run, cases, 10, "subject", 7)
    saved = json.loads((run / errors.SAMPLE_FILE).read_text())
    assert saved["ids"] == ids == a and saved["stratify_by"] == "subject" and saved["population_wrong"] == 20
    assert errors.sample_for_run(run, cases, 10, "subject", 7) == ids


def test_distribution_and_published_comparison():
    import pandas as pd

    tags = pd.DataFrame({"category": ["perceptual error", "", "reasoning error", ""],
                         "auto_category": ["", "answer extraction error", "rejection to answer", ""]})
    dist = errors.distribution(tags)
    got = dict(zip(dist["category"], dist["n"]))
    auto = dict(zip(dist["category"], dist["auto_n"]))
    assert got["perceptual error"] == 1 and got["reasoning error"] == 1  # by hand: 2 tags, 50% each
    assert got["answer extraction error"] == 0  # a suggestion is never counted as a tag
    assert dict(zip(dist["category"], dist["percent"]))["perceptual error"] == 50
    assert auto == {**{c: 0 for c in errors.CATEGORIES}, "answer extraction error": 1}  # counted apart
    assert auto["rejection to answer"] == 0  # the case tagged by hand keeps no suggestion in the count
    assert errors.counts(tags) == {"sampled": 4, "by_hand": 2, "automatic": 1, "untagged": 1}
    both = errors.compare_published(dist, label="hand", auto_label="auto")
    assert list(both.columns[1:3]) == ["hand", "auto"] and both.attrs["n"]["hand"] == 2 and both.attrs["n"]["auto"] == 1
    assert dict(zip(both["category"], both["auto"]))["answer extraction error"] == 100
    end = errors.category_table(tags)
    assert list(end.columns[:5]) == ["category", "by hand", "by hand %", "automatic", "automatic %"]
    assert end["by hand"].sum() == 2 and end["automatic"].sum() == 1
    table = errors.compare_published(dist)
    mmmu = dict(zip(table["category"], table["MMMU Fig. 6 (GPT-4V, 150 errors)"]))
    cmmmu = dict(zip(table["category"], table["CMMMU Fig. 4 (GPT-4V, 141 errors)"]))
    assert mmmu["perceptual error"] == 35 and sum(v for v in mmmu.values() if v == v) == 102  # as printed (rounding)
    assert pd.isna(mmmu["other"]) and pd.isna(cmmmu["other"])  # no such category in the papers: n/a, not 0
    assert cmmmu["rejection to answer"] == 12 and cmmmu["textual understanding"] == 7


def test_demo_run_end_to_end(tmp_path):
    from mmbench_lib.pipeline import generation as generate
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.demo import ensure_demo

    paths = ensure_demo("data/demo")
    run = tmp_path / "run"
    generate.evaluate_generation(RunConfig("mmmu", run, source=paths["mmmu"]["source"], model="random", baseline="random",
                                           progress=False))
    cases = errors.load_cases(run)
    assert cases and all(c["item"] is not None for c in cases)
    state = BrowserState.from_run(run, n_sample=5, stratify_by="subject", annotations_dir=tmp_path / "ann", cases=cases)
    view = ErrorBrowser(state)
    assert len(state.cases) == 5 and view.thumbs.children and "[image 1]" in view.question.value
    view.thumbs.children[0].children[1].click()  # enlarge
    assert view.large.layout.display != "none" and view.large.value
    view.category.value = "other"
    assert _rows(tmp_path / "ann" / "run.csv")[0]["category"] == "other"
    html = errors.summary_html(state.cases, state.frame())
    assert "sampled errors" in html


def test_ranking_run_shows_items_and_scores(tmp_path):
    from mmbench_lib.pipeline import runs
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.demo import ensure_demo

    paths = ensure_demo("data/demo")
    run = tmp_path / "seedrun"
    runs.evaluate(RunConfig("seed", run, data=runs.demo_args("seed", paths), model="random", device="cpu", progress=False))
    state = BrowserState.from_run(run, n_sample=8, stratify_by="dimension", annotations_dir=tmp_path / "ann")
    assert len(state.cases) == 8 and all(c["item"] is not None for c in state.cases)
    assert len({c["subject"] for c in state.cases}) > 3  # stratified over dimensions
    view = ErrorBrowser(state)
    assert "log-lik." in view.options.value and "Question." in view.question.value
    assert all(errors.auto_tags(c) == [] for c in state.cases)  # nothing generated, nothing to suggest


def _count(view, category):
    """The live chart's count cell of ``category`` ("k (p%), h by hand")."""
    import re

    m = re.search(rf"<tr data-category='{category}'>.*?<td class='mmb-count'>([^<]*)</td>", view.distribution.value)
    return m.group(1)


def test_number_keys_tag_and_move_and_the_distribution_follows(cases, tmp_path):
    from mmbench_lib.error_analysis.browser import KEY_CATEGORIES

    state = BrowserState(errors.wrong_cases(cases)[:6], "run-k", annotations_dir=tmp_path)
    view = ErrorBrowser(state)
    assert KEY_CATEGORIES["3"] == errors.CATEGORIES[2] == "reasoning error"
    assert _count(view, "reasoning error") == "0 by hand (0%)"
    view.keys.value = "3"  # what the keys box sends when 3 is typed
    assert view.keys.value == ""  # emptied for the next key
    assert [(r["sample_id"], r["category"]) for r in _rows(tmp_path / "run-k.csv")] == [("q0", "reasoning error")]
    assert state.current["id"] == "q1" and view.category.value == ""  # tagged, then on to the next case
    assert _count(view, "reasoning error") == "1 by hand (100%)"  # the chart followed at once
    assert "<b>1</b> of 6 tagged by hand" in view.distribution.value and "<b>1</b> of 6 tagged by hand" in view.position.value
    view.keys.value = "12"  # two keys in one update: two cases tagged in order
    rows = {r["sample_id"]: r["category"] for r in _rows(tmp_path / "run-k.csv")}
    assert rows == {"q0": "reasoning error", "q1": "perceptual error", "q2": "lack of knowledge"}
    assert _count(view, "perceptual error") == "1 by hand (33%)"
    view.keys.value = "p"
    assert state.current["id"] == "q2" and view.category.value == "lack of knowledge"
    view.keys.value = "0"  # untag, stay
    assert state.current["id"] == "q2" and view.category.value == ""
    assert {r["sample_id"]: r["category"] for r in _rows(tmp_path / "run-k.csv")}["q2"] == ""
    assert _count(view, "lack of knowledge") == "0 by hand (0%)"
    view.keys.value = "n"
    assert state.current["id"] == "q3"
    view.keys.value = "f"  # back to the first untagged
    assert state.current["id"] == "q2"
    view.keys.value = "x"  # an unknown key does nothing
    assert state.current["id"] == "q2" and not view.log.outputs, view.log.outputs


def test_an_empty_response_is_shown_as_such(tmp_path):
    empty = _case(1, response="", prediction="", fallback=False, mode=None)
    state = BrowserState([empty], "run-e", annotations_dir=tmp_path)
    view = ErrorBrowser(state)
    assert "(empty response)" in view.response.value
    assert "<b>Parsed answer:</b> <i>none</i> (empty response)" in view.response.value
    spoken = _case(2, response="I cannot tell", prediction=[], fallback=False, mode=None)
    view2 = ErrorBrowser(BrowserState([spoken], "run-s", annotations_dir=tmp_path))
    assert "I cannot tell" in view2.response.value and "nothing extracted" in view2.response.value


def test_the_end_report_is_the_results_headline(tmp_path):
    """``end_report``: the report section of the analysis's own results.json (no sub-runs), hand tags and
    suggestions apart, printed by ``format_table`` as ``mmbench run`` prints it."""
    import pandas as pd

    from mmbench_lib.analysis.results import format_table, read_results

    tags = pd.DataFrame({"category": ["perceptual error", "perceptual error", "other", "", ""],
                         "auto_category": ["", "answer extraction error", "", "answer extraction error", ""]})
    body = errors.end_report(tmp_path, tags, tmp_path / "some_run", n_items=20, n_wrong=9, tag_file="t.csv")
    saved = read_results(tmp_path)
    assert saved["runs"] == [] and saved["report"] == body
    assert body["counts"] == {"sampled": 5, "by_hand": 3, "automatic": 1, "untagged": 1, "items": 20, "wrong": 9}
    rows = {r[0]: r for r in body["rows"]}
    assert rows["perceptual error"][1:5] == [2, 66.7, 0, 0.0] and rows["other"][1:3] == [1, 33.3]
    assert rows["answer extraction error"][1:5] == [0, 0.0, 1, 100.0]  # the suggestion of the untagged case only
    assert rows["all"][1:5] == [3, 100.0, 1, 100.0] and rows["other"][5:] == [None, None]
    text = format_table(saved)
    assert text.startswith(body["name"]) and "no finished sub-run" not in text
    assert "|perceptual error       |          2|     66.7|" in text
    none = errors.end_report(tmp_path, tags.assign(category=""), "r", n_items=20, n_wrong=9, tag_file="t.csv")
    assert {r[2] for r in none["rows"]} == {None}  # nothing tagged by hand: no shares (not 0%)
