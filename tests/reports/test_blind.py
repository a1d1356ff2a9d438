"""Blind-solvability audit with real text-only models (SmolLM2 real weights, Random Choice) on the SEED v1 demo set."""
import json
from types import SimpleNamespace

import pytest
from scipy import stats

from mmbench_lib.analysis import subsets
from mmbench_lib.pipeline import runs
from mmbench_lib.reports import blind

pytestmark = pytest.mark.slow


def _rows(folder):
    return {r["id"]: r for r in map(json.loads, (folder / "predictions.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def audited(demo, smollm2, tmp_path_factory):
    out = tmp_path_factory.mktemp("blind")
    config = runs.RunConfig("seed", out, data=runs.demo_args("seed", demo, dimensions=[1, 2, 3, 4]), model="smollm2",
                            recipe="seed1-ppl", scorer="shared-prefix", device="cpu", progress=False)
    folders = blind.blind_runs(config, ["smollm2", "random"], out, adapters={"smollm2": smollm2})
    a = blind.audit(folders)
    return SimpleNamespace(out=out, folders=folders, audit=a, files=blind.write(a, out), config=config)


def test_blind_solvable_items_are_those_every_blind_model_answers(audited):
    folders, a, files = audited.folders, audited.audit, audited.files
    assert set(folders) == {"smollm2", "random"} and all((f / "metrics.json").is_file() for f in folders.values())
    rows = {label: _rows(f) for label, f in folders.items()}
    assert set(rows["smollm2"]) == set(rows["random"]) and len(rows["smollm2"]) == a.n_items == 12
    expected = sorted(i for i in rows["smollm2"] if rows["smollm2"][i]["correct"] and rows["random"][i]["correct"])
    assert a.ids == expected
    saved = subsets.read_blind_ids(files["ids"])
    assert saved["ids"] == expected and saved["benchmark"] == "seed" and saved["rule"] == subsets.RULE
    assert [m["label"] for m in saved["models"]] == ["smollm2", "random"] and saved["n_items"] == 12
    assert sum(d["blind_solvable"] for d in saved["per_dimension"].values()) == len(expected)


def test_per_dimension_accuracy_and_exact_test_against_chance(audited):
    folders, a, files = audited.folders, audited.audit, audited.files
    rows = _rows(folders["smollm2"])
    t = a.per_model[a.per_model["label"] == "smollm2"]
    for r in t.itertuples():
        mine = [x for x in rows.values() if r.dimension in ("All", x["dimension"])]
        assert r.n == len(mine) and r.correct == sum(bool(x["correct"]) for x in mine)
        assert r.chance == pytest.approx(0.25)  # four options
        assert r.p_value == pytest.approx(stats.binomtest(r.correct, r.n, 0.25, alternative="greater").pvalue)
        assert r.wilson_low <= r.accuracy <= r.wilson_high
    assert list(t["dimension"]) == ["Scene Understanding", "Instance Identity", "Instance Attributes",
                                    "Instance Location", "All"]
    body = json.loads(files["audit"].read_text())
    entry = body["per_model"]["smollm2"]["overall"]
    assert entry["n"] == 12 and entry["accuracy"] == pytest.approx(t.iloc[-1]["accuracy"]) and "ci_low" in entry
    table = blind.table(a)
    assert {"blind %", "chance %", "p (> chance)", "p Holm", "solved by all"} <= set(table.columns)


def test_vision_required_accuracy_leaves_out_the_blind_solvable_items(audited):
    folders, a, files = audited.folders, audited.audit, audited.files
    # with the same two models, the blind-solvable items are exactly the ones both got right
    res = subsets.vision_required(folders["random"], files["ids"])
    overall = res["overall"]
    assert overall["all"]["n"] == 12 and overall["blind_solvable"]["n"] == len(a.ids)
    assert overall["vision_required"]["n"] == 12 - len(a.ids)
    assert overall["blind_solvable"]["correct"] == len(a.ids)  # each was answered right by this model
    assert overall["all"]["correct"] == overall["vision_required"]["correct"] + len(a.ids)
    assert set(overall["all"]) >= {"n", "correct", "accuracy", "ci_low", "ci_high", "failed", "n/a"}
    table = subsets.vision_required_report({"random": folders["random"]}, files["ids"])
    assert (folders["random"] / subsets.VISION_FILE).is_file()
    assert list(table["dimension"])[0] == "all" and table["vision_required n"].iloc[0] == 12 - len(a.ids)


def test_a_model_that_sees_images_is_refused(demo, tiny_llava, tmp_path):
    config = runs.RunConfig("seed", tmp_path, data=runs.demo_args("seed", demo, dimensions=[1]), model="smollm2",
                            device="cpu", progress=False)
    with pytest.raises(ValueError, match="sees images"):
        blind.blind_runs(config, ["tiny-llava"], tmp_path, adapters={"tiny-llava": tiny_llava})
    assert not (tmp_path / "blind__tiny-llava" / "predictions.jsonl").exists()


def test_bad_ids_files_and_other_benchmarks_are_one_line_errors(audited, tmp_path):
    folders, files = audited.folders, audited.files
    with pytest.raises(ValueError, match="no such blind-solvable ids file"):
        subsets.read_blind_ids(tmp_path / "missing.json")
    (tmp_path / "x.json").write_text('{"format": "other", "ids": []}')
    with pytest.raises(ValueError, match="not a blind-solvable ids file"):
        subsets.read_blind_ids(tmp_path / "x.json")
    other = dict(subsets.read_blind_ids(files["ids"]), benchmark="mmmu")
    with pytest.raises(ValueError, match="blind-solvable ids of 'mmmu'"):
        subsets.vision_required(folders["smollm2"], other)


def test_rerunning_resumes_without_rescoring(audited, smollm2):
    folders = audited.folders
    before = (folders["smollm2"] / "predictions.jsonl").read_bytes()
    blind.blind_runs(audited.config, ["smollm2"], audited.out, adapters={"smollm2": smollm2})
    assert (folders["smollm2"] / "predictions.jsonl").read_bytes() == before
