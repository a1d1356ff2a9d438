"""Protocol sensitivity (reports/protocol.py): answers read per protocol, agreement matrices, McNemar tests and
flips on hand-made runs written through the run store; the fallback-seed distribution on a hand-made response set
checked against full rescoring; reuse of a finished run found in outputs/."""
import json
import random

import numpy as np
import pytest

from mmbench_lib.analysis import reader
from mmbench_lib.core.items import Item
from mmbench_lib.core.rows import failed_row, ok_row
from mmbench_lib.core.store import RunStore
from mmbench_lib.pipeline import rescoring, runs
from mmbench_lib.reports import protocol as pr
from mmbench_lib.reports import subruns

P = pr.SEED_PROTOCOLS
#: a protocol reading VLMEvalKit's extraction of the responses made with lmms-eval's prompt
VLM_ON_LMMS = pr.Protocol("vlm-on-lmms", "VLMEvalKit reading", "test", "lmms-eval-gen", "vlmevalkit")
PROTOCOLS = [P["content-sum"], P["content-mean"], P["gen-lmms-eval"], VLM_ON_LMMS]

# id, dimension, gold, summed and mean log-likelihoods per choice, extracted letters (lmms-eval, VLMEvalKit)
ITEMS = [
    ("q1", 1, "A", [-1, -2, -3, -4], [-4, -1, -3, -2], ("A", "A")),
    ("q2", 1, "B", [-5, -1, -6, -7], [-9, -1, -8, -7], ("T", "B")),
    ("q3", 2, "C", [-1, -2, -3, -4], [-2, -3, -1, -4], ("C", None)),
    ("q4", 2, "D", [-2, -2, -3, -4], [-2, -2, -3, -4], ("D", "D")),  # a tie goes to the first choice
    ("q5", 2, "A", [-1, -2, -3, -4], [-1, -2, -3, -4], None),  # failed in the generation run: left out
    ("q6", 1, "A", [-1, -2, -3, -4], [-1, -2, -3, -4], ("A", "A")),  # every protocol right: no flip
]


def _item(qid, dim, gold):
    return Item(id=qid, benchmark="seed", question=f"question {qid}", choices=["w", "x", "y", "z"], answer=gold,
                split="test", dimension_id=dim, dimension=f"dim {dim}", group="image", images=[f"{qid}.jpg"])


def _hand_made_runs(root):
    rank, gen = RunStore(root / "rank"), RunStore(root / "gen")
    rank_rows, gen_rows = [], []
    for qid, dim, gold, s, m, ext in ITEMS:
        it = _item(qid, dim, gold)
        pred = "ABCD"[int(np.argmax(s))]
        rank_rows.append(ok_row(it, prediction=pred, correct=pred == gold, scores={"sum": s, "mean": m},
                                reduction="sum"))
        if ext is None:
            gen_rows.append(failed_row(it, "model call failed"))
        else:
            gen_rows.append(ok_row(it, prediction=ext[0], correct=ext[0] == gold, response="...",
                                   extracted={"lmms-eval": ext[0], "vlmevalkit": ext[1]}))
    rank.append(rank_rows)
    gen.append(gen_rows)
    rank.update_manifest(benchmark="seed", recipe={"name": "seed1-ppl"})
    gen.update_manifest(benchmark="seed", recipe={"name": "lmms-eval-gen"})
    rank.close()
    gen.close()
    return {"seed1-ppl": root / "rank", "lmms-eval-gen": root / "gen"}


@pytest.fixture
def long(tmp_path):
    return pr.ranking_long(PROTOCOLS, _hand_made_runs(tmp_path))


def test_each_protocol_reads_its_answer_from_the_stored_run(long):
    wide = long.pivot(index="id", columns="key", values="prediction")
    assert wide.loc[["q1", "q2", "q3", "q4", "q6"], "content-sum"].tolist() == ["A", "B", "A", "A", "A"]
    assert wide.loc[["q1", "q2", "q3", "q4", "q6"], "content-mean"].tolist() == ["B", "B", "C", "A", "A"]
    assert wide.loc[["q1", "q2", "q3", "q4"], "gen-lmms-eval"].tolist() == ["A", "T", "C", "D"]
    q3 = long[(long["id"] == "q3") & (long["key"] == "vlm-on-lmms")]
    assert q3["prediction"].isna().all() and not q3["correct"].iloc[0]  # no letter found: wrong
    assert set(pr.common_items(long)["id"]) == {"q1", "q2", "q3", "q4", "q6"}  # q5 failed in one run


def test_accuracy_agreement_and_flips_on_hand_made_runs(long):
    acc = pr.accuracy_table(long).set_index("key")
    assert acc["n"].tolist() == [5, 5, 5, 5] and acc["correct"].tolist() == [3, 3, 4, 4]
    assert acc.loc["content-sum", "scored_in_run"] == 6 and acc.loc["gen-lmms-eval", "scored_in_run"] == 5
    assert (acc["ci_low"] <= acc["accuracy"]).all() and (acc["accuracy"] <= acc["ci_high"]).all()

    same = pr.agreement_matrix(long, "prediction")
    labels = [p.label for p in PROTOCOLS]
    expected = np.array([[5, 3, 2, 3], [3, 5, 2, 2], [2, 2, 5, 3], [3, 2, 3, 5]]) / 5
    np.testing.assert_allclose(same.loc[labels, labels].to_numpy(float), expected)  # "no letter" agrees with itself
    right = pr.agreement_matrix(long, "correct")
    expected = np.array([[5, 3, 2, 4], [3, 5, 2, 2], [2, 2, 5, 3], [4, 2, 3, 5]]) / 5
    np.testing.assert_allclose(right.loc[labels, labels].to_numpy(float), expected)

    f = pr.flips(long).set_index("id")
    assert list(f.index) == ["q1", "q2", "q3", "q4"] and f["right_under"].tolist() == [3, 3, 2, 2]
    assert f.loc["q2", "generated, lmms-eval"] == "T wrong" and f.loc["q3", "VLMEvalKit reading"] == "(none) wrong"


def test_mcnemar_and_deltas_on_hand_made_runs(long):
    tests = pr.pairwise_tests(long).set_index(["a", "b"])
    row = tests.loc[("content, sum", "generated, lmms-eval")]
    assert (row["only_a_correct"], row["only_b_correct"]) == (1, 2)  # q2 / q3, q4
    assert row["difference"] == pytest.approx(20.0) and row["mcnemar_exact_p"] == pytest.approx(1.0)
    assert len(tests) == 6 and (tests["holm_p"] >= tests["mcnemar_exact_p"]).all()
    d = pr.group_deltas(long).set_index(["dimension", "protocol"])
    assert d.loc[("dim 1", "content, sum"), "accuracy"] == pytest.approx(100.0)
    assert d.loc[("dim 1", "generated, lmms-eval"), "delta"] == pytest.approx(-100 / 3)
    assert d.loc[("dim 2", "generated, lmms-eval"), "delta"] == pytest.approx(100.0)
    assert d.loc[("dim 1", "content, sum"), "n"] == 3


# --------------------------------------------------------------------------------------- fallback seeds

def _cmmmu_files(root):
    science = {"category": "科学", "subcategory": "物理"}
    opts = {"option1": "苹果", "option2": "香蕉", "option3": "橙子", "option4": "葡萄"}
    data = [  # id, type, gold, response
        ("1", "选择", "A", "(A)"),  # parsed, right
        ("2", "选择", "B", "(C)"),  # parsed, wrong
        ("3", "选择", "C", "不知道"),  # nothing found: random letter
        ("4", "选择", "D", "无法确定"),  # random letter
        ("5", "判断", "对", "不知道"),  # no keyword: 0-0 tie, random 对/错
        ("6", "判断", "错", "这个说法不正确"),  # official: "正确" votes true (negation quirk); fixed: false
        ("7", "判断", "对", "正确"),  # parsed, right
    ]
    gold, resp = root / "gold.jsonl", root / "responses.jsonl"
    gold.write_text("".join(json.dumps({"id": i, "type": t, "answer": a, **science, **(opts if t == "选择" else {})},
                                       ensure_ascii=False) + "\n" for i, t, a, _r in data), encoding="utf-8")
    resp.write_text("".join(json.dumps({"id": i, "type": t, "response": r}, ensure_ascii=False) + "\n"
                            for i, t, _a, r in data), encoding="utf-8")
    return resp, gold


def test_fallback_seed_distribution_replays_the_official_draws(tmp_path):
    files = _cmmmu_files(tmp_path)
    table, s = pr.fallback_seeds("cmmmu", files, range(400))
    assert (s["n"], s["decided_by_chance"], s["correct_without_chance"]) == (7, 3, 2)
    assert s["expected_accuracy"] == pytest.approx((2 + 0.25 + 0.25 + 0.5) / 7)
    for seed in (0, 1, 7, 399):  # the replay gives what full rescoring with that seed gives
        _rows, summary = rescoring.score_cmmmu_outputs(*files, seed=seed)
        assert table.set_index("seed").loc[seed, "correct"] == summary["overall"]["correct"]
    _rows, official = rescoring.score_cmmmu_outputs(*files)
    assert s["official_accuracy"] == official["overall"]["accuracy"]
    acc = table["accuracy"]
    assert 2 / 7 <= acc.min() and acc.max() <= 5 / 7 and s["range"] == pytest.approx(acc.max() - acc.min())
    assert s["std"] == pytest.approx(acc.std(ddof=1)) and s["std"] > 0
    assert set(np.round(acc * 7).astype(int)) == {2, 3, 4, 5}  # 400 seeds reach every total from 2 to 5


@pytest.mark.filterwarnings("ignore:.*subjects have no output.json")
def test_fallback_seeds_on_mmmu_responses(tmp_path):
    recs = [{"id": f"validation_Math_{k}", "question_type": "multiple-choice", "answer": gold, "response": resp,
             "all_choices": ["A", "B", "C", "D"], "index2ans": {"A": "1", "B": "2", "C": "3", "D": "4"}}
            for k, (gold, resp) in enumerate([("A", "(A)"), ("B", "no idea"), ("C", "hmm"), ("D", "?")], 1)]
    (tmp_path / "Math").mkdir()
    (tmp_path / "Math" / "output.json").write_text(json.dumps(recs))
    table, s = pr.fallback_seeds("mmmu", (tmp_path, None), range(25))
    assert (s["decided_by_chance"], s["correct_without_chance"]) == (3, 1)
    for seed in (3, 24):
        _rows, summary = rescoring.score_mmmu_outputs(tmp_path, seed=seed)
        assert table.set_index("seed").loc[seed, "correct"] == summary["overall"]["correct"]


def test_recording_rng_draws_as_random_random():
    rec, plain = pr.RecordingRandom(5), random.Random(5)
    assert [rec.choice("ABCD") for _ in range(6)] == [plain.choice("ABCD") for _ in range(6)]
    assert rec.calls == [tuple("ABCD")] * 6


def test_parser_variants_flip_the_negation_item(tmp_path):
    files = _cmmmu_files(tmp_path)

    class HandRun:  # what parser_long reads of a run: benchmark, key and samples (id, cluster)
        benchmark, key = "cmmmu", "hand-made"
        samples = __import__("pandas").DataFrame({"id": [str(i) for i in range(1, 8)], "cluster": list("abcdefg")})

    long = pr.parser_long(HandRun(), list(pr.PARSER_VARIANTS["cmmmu"].values()), files)
    f = pr.flips(long).set_index("id")
    assert f.loc["6", "official"] == "对 wrong" and f.loc["6", "T/F negation fixed"] == "错 right"
    acc = pr.accuracy_table(long).set_index("key")
    assert acc.loc["no-fallback", "correct"] == 2  # the items decided by chance scored wrong
    assert acc.loc["tf-fixed", "correct"] == acc.loc["official", "correct"] + 1


# --------------------------------------------------------------------------------------- reuse

def test_a_finished_matching_run_in_outputs_is_reused(demo, outputs):
    data = runs.demo_args("seed", demo)
    first = outputs / "earlier" / "seed__random"
    runs.evaluate(runs.RunConfig("seed", first, data=data, model="random", recipe="seed1-ppl", limit=6, progress=False))
    rep = pr.seed_report("seed", data, outputs / "report", model="random", protocols=["content-sum", "content-mean"],
                         limit=4, scorer="reference")
    assert rep.sources["reused"].all() and set(rep.sources["run"]) == {"earlier/seed__random"}
    assert not (outputs / "report" / "seed__seed1-ppl").exists()
    stored = {json.loads(line)["id"]: json.loads(line)["prediction"]
              for line in (first / "predictions.jsonl").read_text().splitlines()}
    sums = rep.long[rep.long["key"] == "content-sum"]
    assert len(sums) == 4 and all(stored[i] == p for i, p in zip(sums["id"], sums["prediction"]))

    more = pr.seed_report("seed", data, outputs / "report", model="random", protocols=["content-sum"], limit=8,
                          scorer="reference")  # the earlier run lacks items 7 and 8: made anew, in the report's folder
    assert not more.sources["reused"].any() and (outputs / "report" / "seed__seed1-ppl" / "predictions.jsonl").is_file()
    fresh = pr.seed_report("seed", data, outputs / "fresh", model="random", protocols=["content-sum"], limit=4,
                           scorer="reference", reuse=False)
    assert not fresh.sources["reused"].any()


def test_a_run_with_the_default_filter_spelled_out_is_reused(demo, outputs):
    data = {k: v for k, v in runs.demo_args("seed", demo).items() if k != "dimensions"}
    first = outputs / "earlier" / "seed__random"
    runs.evaluate(runs.RunConfig("seed", first, data={**data, "dimensions": "all"}, model="random", recipe="seed1-ppl",
                                 limit=4, progress=False))
    ids = list(reader.samples_df(first)["id"])
    implicit = runs.RunConfig("seed", outputs / "new", data=data, model="random", recipe="seed1-ppl", limit=4)
    assert subruns.find_same_run(implicit, ids) == first  # "all" is the loader's default: the same selection
    narrower = runs.RunConfig("seed", outputs / "new", data={**data, "dimensions": [1]}, model="random",
                              recipe="seed1-ppl", limit=4)
    assert subruns.find_same_run(narrower, ids[:1]) is None  # another filter: not the same run


def test_a_rotated_or_permuted_run_is_never_reused(demo, outputs):
    """CircularEval's rot-k runs (notebook 52) hold the same ids, recipe and data as the plain run notebook 50
    asks for, but their letters name other options: another identity, never reused (issue 35)."""
    from mmbench_lib.pipeline.reuse import identity_difference
    data = runs.demo_args("seed2plus", demo)
    cfg = dict(data=data, model="random", recipe="qwen-vl-letters", limit=4, progress=False)
    rot = runs.RunConfig("seed2plus", outputs / "circ" / "rot-3", rotation=3, lettered_only=True, **cfg)
    runs.evaluate(rot)
    ids = list(reader.samples_df(rot.out_dir)["id"])
    wanted = runs.RunConfig("seed2plus", outputs / "new", **cfg)
    man = reader.read_manifest(rot.out_dir)
    assert "selection.rotation 3 (wanted 0)" in identity_difference(man, wanted)
    assert subruns.find_same_run(wanted, ids) is None
    plain = runs.RunConfig("seed2plus", outputs / "plain", **cfg)
    runs.evaluate(plain)
    assert subruns.find_same_run(wanted, ids) == outputs / "plain"
    for change in ({"permutation_seed": 1, "lettered_only": True}, {"lettered_only": True}, {"model": "random:7"},
                   {"recipe": "llava-chat"}, {"dtype": "float16"}):
        other = runs.RunConfig("seed2plus", outputs / "x", **{**cfg, **change})
        assert identity_difference(reader.read_manifest(outputs / "plain"), other), change


# --------------------------------------------------------------------------------------- the task's protocols

def test_each_ranking_task_declares_its_protocols_and_which_is_official():
    """SEED keeps its five defaults (labels unchanged); MMBench's official protocol is the generated answer
    (``mmbench-gen``) and every ranked reading is marked not official (MMBench defines no ranking protocol)."""
    seed = pr.ranking_protocols("seed")
    assert [p.key for p in seed] == list(pr.DEFAULT_SEED_PROTOCOLS) and seed == [P[k] for k in pr.DEFAULT_SEED_PROTOCOLS]
    assert [p.kind.split(":")[0] for p in seed] == ["paper", "official wrappers", "leaderboard 'PPL for A/B/C/D' (Qwen-VL "
                                                    "recipe)", "NOT a paper protocol", "NOT a paper protocol"]
    mmb = {p.key: p for p in pr.ranking_protocols("mmb")}
    assert list(mmb) == ["official", "letters", "content-sum", "content-mean", "gen-lmms-eval"]
    assert (mmb["official"].recipe, mmb["official"].view) == ("mmbench-gen", "vlmevalkit")
    assert mmb["official"].kind.startswith("official: MMBench") and mmb["letters"].recipe == "mmbench-letters"
    assert all(p.kind.startswith("NOT official") for k, p in mmb.items() if k != "official")
    with pytest.raises(ValueError, match="MMBench has no protocol 'gen-vlmevalkit'; use some of \\['official'"):
        pr.ranking_protocols("mmb", ["gen-vlmevalkit"])


def test_mmbench_report_labels_its_protocols_from_the_task(demo, outputs):
    """A real MMBench report (Random Choice ranks the demo items): the headline's kind comes from the task."""
    data = runs.demo_args("mmb", demo)
    rep = pr.seed_report("mmb", data, outputs / "mmb", model="random", protocols=["letters", "content-sum"],
                         scorer="reference", reuse=False)
    head = pr.headline_table({"mmb": rep})
    assert list(head["protocol"]) == ["letters ranked", "content, sum"] and set(head["kind"]) == {"NOT official"}
    assert list(rep.sources["kind"]) == [pr.ranking_protocols("mmb", ["letters"])[0].kind,
                                         pr.ranking_protocols("mmb", ["content-sum"])[0].kind]
    assert head["n"].iloc[0] == 22


def test_mmstar_declares_its_own_protocols_the_official_one_generated():
    """MMStar (paper A.1): LVLMs 0-shot, a generated answer read by heuristic matching (``MMStar_eval``): the official
    protocol is recipe ``mmstar-gen`` read by the ``mmstar`` rule; SEED's ranked readings are not MMStar's protocol."""
    star = {p.key: p for p in pr.ranking_protocols("mmstar")}
    assert list(star) == ["official", "content-sum", "content-mean", "letters", "gen-vlmevalkit"]
    assert (star["official"].recipe, star["official"].view) == ("mmstar-gen", "mmstar")
    assert star["official"].kind.startswith("official: MMStar")
    assert all(p.kind.startswith("NOT official") for k, p in star.items() if k != "official")
    assert star != {p.key: p for p in pr.ranking_protocols("seed")}  # not SEED's labels


def test_mmstar_report_reads_the_official_rule_from_the_stored_responses(demo, outputs):
    """A real MMStar report with the tiny random-weight LLaVA: the official protocol's letters are the ``mmstar``
    rule's reading of each stored response (``extracted``), scored against the gold answer."""
    data = runs.demo_args("mmstar", demo)
    rep = pr.seed_report("mmstar", data, outputs / "mmstar", model="tiny-llava", protocols=["official", "content-sum"],
                         scorer="reference", reuse=False, max_new_tokens=4, device="cpu")
    head = pr.headline_table({"mmstar": rep})
    assert list(head["protocol"]) == ["generated, official", "content, sum"]
    assert list(head["kind"]) == ["official", "NOT official"]
    rows = [json.loads(x) for x in (outputs / "mmstar" / "mmstar__mmstar-gen" / "predictions.jsonl").read_text().splitlines()]
    official = rep.long[rep.long["key"] == "official"].set_index("id")
    for r in rows:
        if r["id"] in official.index:
            assert official.loc[r["id"], "prediction"] == r["extracted"]["mmstar"]
