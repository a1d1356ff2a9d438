"""The reproduction audit on SEED-Bench (v1), SEED-Bench-2 and SEED-Bench-2-Plus: the same responses read from an
lmms-eval sample log and a VLMEvalKit prediction file, re-scored under the strict letter rule (the reference, NOT
the papers' answer ranking), its trace-removed form and the peers' rules; this suite's ranking and
generated-letter runs read from their run folders and compared item by item.

Inputs are written in the peers' exact formats: lmms-eval ``seedbench`` / ``seedbench_2`` / ``seedbench_2_plus``
sample rows (``doc_id``, ``doc``, ``target``, ``resps``, ``filtered_resps`` and the metric fields of
``seed_process_result``), VLMEvalKit ``SEEDBench_IMG`` / ``SEEDBench2`` / ``SEEDBench2_Plus`` prediction rows
(``index``, ``question``, ``A``..``D``, ``answer``, ``category``, ``prediction``). A real lmms-eval sample log is
checked when ``MMBENCH_SEED_LMMS_EVAL`` names one (``samples_seedbench*_*.jsonl``).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from mmbench_lib.cli import main
from mmbench_lib.core.items import DataError
from mmbench_lib.core.requests import Generation
from mmbench_lib.pipeline import audit as A
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.tasks import seed_audit as S
from mmbench_lib.tasks.audits import audit_rules

OPTS = ["a red car", "a blue bus", "a green tram", "a yellow taxi"]
#: (question id, answer, response, why)
CASES = [
    ("101669", "B", "B", "a bare letter: every rule agrees"),
    ("101670", "B", "The answer is B", "lmms-eval reads 'T'; VLMEvalKit finds the lone B; not a bare letter"),
    ("101671", "C", "(C) a green tram", "lmms-eval reads '('; VLMEvalKit finds C; not a bare letter"),
    ("101672", "C", "(C)", "bracketed letter: the reference and VLMEvalKit accept it, lmms-eval reads '('"),
    ("101673", "A", "A man is driving. Answer: D", "lmms-eval reads the article 'A' (right by accident); "
                                                     "VLMEvalKit sees A and D and gives up"),
    ("101674", "D", "<think>Is it (A) a red car? No, the taxi is yellow.</think>D", "a thinking trace before D"),
    ("101675", "B", "", "empty: wrong under every rule"),
    ("101676", "C", "c", "lower case: wrong for the reference and lmms-eval v1/v2, right for 2-Plus' lower-cased match"),
]
WANT = {  # rule -> the question ids it scores right (SEED v1 / SEED-2; 2-Plus adds 101676 to lmms-eval)
    S.REFERENCE: {"101669", "101672"},
    f"{S.REFERENCE}, trace removed": {"101669", "101672", "101674"},
    "lmms-eval": {"101669", "101673"},
    "vlmevalkit": {"101669", "101670", "101671", "101672"},
}


def _category(bench):
    return {"seed": "image", "seed2": "Single Image", "seed2plus": "chart"}[bench]


def lmms_rows(bench: str, cases=CASES, strip=False) -> list[dict]:
    """Sample-log rows as lmms-eval writes them (``evaluator.py``; ``seed_process_result`` of the task).
    ``strip``: a run with reasoning tags configured: ``filtered_resps`` (and ``pred``) without the trace."""
    rules = audit_rules(bench)
    out = []
    for n, (qid, answer, response, _why) in enumerate(cases):
        keys = rules.CHOICE_KEYS
        doc = {"question_id": qid, "question": "Which vehicle is in front?", "answer": answer,
               **dict(zip(keys, OPTS)), rules.CATEGORY_FIELD: _category(bench)}
        if bench == "seed":
            doc.update(data_id="1454426_2591111986", question_type_id=1)
        elif bench == "seed2":
            doc.update(data_id="1454426_2591111986", data_source="cc3m", level="L1", question_type_id=1,
                       subpart="Single-Image & Text Comprehension", version="v1")
        else:
            doc.update(data_id="text_rich/1.png", question_image_subtype="bar chart")
        scored = S.strip_trace(response) if strip else response
        pred = scored.strip()
        pred = pred[0] if len(pred) > 1 else pred
        verdict = {"pred": pred, "answer": answer, "question_id": qid}
        metric = rules._metric_of(_category(bench))
        out.append({"doc_id": n, "doc": doc, "target": answer,
                     "arguments": ["Which vehicle is in front?\nA. ...", {"until": ["ASSISTANT:"]}],
                     "resps": [[response]], "filtered_resps": [scored], metric: verdict,
                     rules.METRIC_ALL: dict(verdict)})
    return out


def vlmevalkit_rows(bench: str, cases=CASES) -> list[dict]:
    """Prediction rows as VLMEvalKit's inference dumps them (the dataset's columns but ``image``, ``prediction``)."""
    return [{"index": int(qid), "question": "Which vehicle is in front?", **dict(zip("ABCD", OPTS)), "answer": answer,
             "category": {"seed": "Scene Understanding", "seed2": "Scene Understanding", "seed2plus": "chart"}[bench],
             "prediction": response} for qid, answer, response, _why in cases]


def _write(tmp_path: Path, bench: str, **kw) -> dict[str, Path]:
    rules = audit_rules(bench)
    lmms = tmp_path / f"samples_{rules.LMMS_TASK}_2026-11-27T10-00-00.jsonl"
    lmms.write_text("".join(json.dumps(r) + "\n" for r in lmms_rows(bench, **kw)))
    tsv = tmp_path / f"Model_{rules.VLMEVALKIT_DATASET}.tsv"
    pd.DataFrame(vlmevalkit_rows(bench)).to_csv(tsv, sep="\t", index=False)  # as VLMEvalKit's dump() writes a .tsv
    return {"lmms-eval": lmms, "vlmevalkit": tsv}


def _scores(result, n):
    return result["files"][n]["scores"].set_index("id")


@pytest.mark.parametrize("bench", ["seed", "seed2", "seed2plus"])
def test_lmms_eval_log_and_vlmevalkit_file_give_the_same_per_item_results(tmp_path, bench):
    files = _write(tmp_path, bench)
    result = A.audit([files["lmms-eval"], files["vlmevalkit"]], bench)
    assert [f["format"] for f in result["files"]] == ["lmms-eval", "vlmevalkit"]
    a, b = _scores(result, 0), _scores(result, 1)
    assert sorted(a.index) == sorted(b.index) == sorted(c[0] for c in CASES)  # paired by SEED's question_id
    for rule in WANT:
        assert b.loc[a.index, rule].tolist() == a[rule].tolist(), rule
    across = result["across"].iloc[0]
    assert across["n"] == len(CASES) and across["difference"] == 0
    assert S.RANKING not in a and S.RANKING not in b  # no ranking in a text file
    assert (a["file's own"] == a["lmms-eval"]).all()  # the stored metric is lmms-eval's rule on the same text


@pytest.mark.parametrize("bench", ["seed", "seed2", "seed2plus"])
def test_worked_examples_per_rule(tmp_path, bench):
    s = _scores(A.audit([_write(tmp_path, bench)["lmms-eval"]], bench), 0)
    for rule, right in WANT.items():
        if bench == "seed2plus" and rule == "lmms-eval":
            right = right | {"101676"}  # seed_aggregation_result of 2-Plus compares lower().strip()
        assert set(s.index[s[rule]]) == right, rule
    table = A.audit([_write(tmp_path, bench)["lmms-eval"]], bench)["files"][0]["table"]
    assert table["rule set"].iloc[0] == "letter exact match"  # the reference, first


def test_strict_letter_rule():
    assert [S.strict_letter(x) for x in ("B", " B. ", "(B)", "[B].", "B)", "b", "B C", "E", "**B**")] == \
        ["B", "B", "B", "B", None, None, None, None, None]
    assert S.strict_letter("E", ["A", "B", "C", "D", "E"]) == "E"


def test_thinking_trace_and_lmms_eval_reasoning_tags(tmp_path):
    """A trace before the answer: the strict rule and lmms-eval's first character fail on the raw text; removed,
    the letter is right. An lmms-eval run with reasoning tags configured scored the stripped text (``pred`` D),
    which the file's own column shows while the raw ``resps`` keep the trace."""
    files = _write(tmp_path, "seed", strip=True)
    s = _scores(A.audit([files["lmms-eval"]], "seed"), 0).loc["101674"]
    assert s["response"].startswith("<think>")
    assert not s[S.REFERENCE] and s[f"{S.REFERENCE}, trace removed"] and not s["lmms-eval"] and s["file's own"]
    f = A.audit([files["lmms-eval"]], "seed", reported=60.0)["files"][0]
    assert f["stats"]["with_trace"] == 1
    steps = f["waterfall"]["step"].tolist()
    assert steps == ["reported", "file's own score", "file's own rule -> letter exact match rule",
                     "thinking trace removed", "unexplained rest"]


# ---------------------------------------------------------------------------------- this suite's own runs

class Scripted:
    """A generating adapter with scripted answers (no weights): ``answers[i % len]`` for the i-th request."""

    name, sees_images, can_output_images = "scripted", False, False

    def __init__(self, answers):
        self.answers, self.calls = list(answers), 0

    def generate(self, requests):
        out = []
        for _r in requests:
            out.append(Generation(self.answers[self.calls % len(self.answers)], 4, False))
            self.calls += 1
        return out

    def score_choices(self, requests):
        raise NotImplementedError

    def describe(self) -> dict:
        return {"adapter": "scripted", "name": self.name}


@pytest.fixture(scope="module")
def own_runs(demo, tmp_path_factory):
    out = tmp_path_factory.mktemp("seedruns")
    data = runs.demo_args("seed", demo, dimensions="image")
    rank = out / "ranking"
    runs.evaluate(RunSpec.from_params("seed", rank, data=data, model="random", progress=False))
    gen = out / "generated"
    runs.evaluate(RunSpec.from_params("seed", gen, data=data, model="smollm2", recipe="lmms-eval-gen",
                                      max_new_tokens=8, progress=False),
                  Scripted(["B", "The answer is C", "(A) the first one", "<think>(D)?</think>A"]))
    return {"ranking": rank, "generated": gen}


def test_a_ranking_run_compared_with_a_generated_letter_run_by_id(own_runs):
    result = A.audit([own_runs["ranking"], own_runs["generated"]], "seed")
    assert [f["format"] for f in result["files"]] == ["official-folders", "official-folders"]
    rank, gen = _scores(result, 0), _scores(result, 1)
    rows = {json.loads(x)["id"]: json.loads(x) for x in (own_runs["ranking"] / "predictions.jsonl").read_text().splitlines()}
    assert rank[S.RANKING].to_dict() == {i: r["correct"] for i, r in rows.items()}  # the run's own ranking verdicts
    assert (rank[S.REFERENCE] == rank[S.RANKING]).all()  # the ranked letter read as a written one: the same
    assert S.RANKING not in gen
    stored = {json.loads(x)["id"]: json.loads(x) for x in (own_runs["generated"] / "predictions.jsonl").read_text().splitlines()}
    assert gen["file's own"].to_dict() == {i: r["correct"] for i, r in stored.items()}  # recipe lmms-eval-gen
    assert (gen["file's own"] == gen["lmms-eval"]).all()
    across = result["across"].iloc[0]
    assert across["n"] == len(rows) == len(stored) and set(rank.index) == set(gen.index)
    items, _ = A.read_items(own_runs["generated"], "seed")
    assert all(len(it["index2ans"]) == 4 for it in items)  # the choices come from the run's questions
    assert sum(it["response"].startswith("<think>") for it in items) > 0


def test_the_suite_run_written_in_the_peers_formats_reads_back_the_same(own_runs, tmp_path):
    rules = audit_rules("seed")
    items, _ = A.read_items(own_runs["generated"], "seed")
    lmms = tmp_path / rules.DEMO_FILES["lmms-eval"]
    lmms.write_text("".join(json.dumps(r) + "\n" for r in rules.lmms_eval_rows(items)))
    tsv = tmp_path / rules.DEMO_FILES["vlmevalkit"]
    pd.DataFrame(rules.vlmevalkit_rows(items)).to_csv(tsv, sep="\t", index=False)
    result = A.audit([own_runs["generated"], lmms, tsv], "seed")
    base = _scores(result, 0)
    for n in (1, 2):
        other = _scores(result, n).loc[base.index]
        for rule in WANT:
            assert other[rule].tolist() == base[rule].tolist(), (n, rule)


def test_a_wrong_file_is_one_line(own_runs, tmp_path, capsys):
    with pytest.raises(DataError, match="holds a run of seed, not seed2$"):
        A.read_items(own_runs["ranking"], "seed2")
    assert main(["audit", str(own_runs["ranking"]), "--benchmark", "seed2plus"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "holds a run of seed" in err
    mmmu_log = tmp_path / "samples_mmmu_val_x.jsonl"
    mmmu_log.write_text(json.dumps({"doc_id": 0, "doc": {"id": "validation_Art_1", "options": "[]"}, "resps": [["A"]]}) + "\n")
    with pytest.raises(DataError, match="line 1: cannot read the item .its doc has no question_id: not a sample log of lmms-eval's seedbench"):
        A.read_items(mmmu_log, "seed")
    no_pred = tmp_path / "Model_SEEDBench_IMG.tsv"
    pd.DataFrame(vlmevalkit_rows("seed")).drop(columns="prediction").to_csv(no_pred, sep="\t", index=False)
    with pytest.raises(DataError, match="needs columns A, B, C, D, prediction, answer and index"):
        A.read_items(no_pred, "seed")
    empty = tmp_path / "empty_run"
    empty.mkdir()
    with pytest.raises(DataError, match="expected a run folder of this suite"):
        A.read_items(empty, "seed")


# ----------------------------------------------------------------------------------- the real files

REAL = os.environ.get("MMBENCH_SEED_LMMS_EVAL", "")


@pytest.mark.skipif(not REAL, reason="set MMBENCH_SEED_LMMS_EVAL to an lmms-eval samples_seedbench*_*.jsonl")
def test_real_lmms_eval_sample_log():
    name = Path(REAL).name
    bench = "seed2plus" if "2_plus" in name else "seed2" if "seedbench_2" in name else "seed"
    items, fmt = A.read_items(REAL, bench)
    s = A.score(items, bench)
    assert fmt == "lmms-eval" and len(items) > 0
    traced = s["response"].str.contains("</think>", regex=False)
    assert (s.loc[~traced, "file's own"] == s.loc[~traced, "lmms-eval"]).all()
