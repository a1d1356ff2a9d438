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


# ------------------------------------------------------------------ beside the published text-only scores (notebook 51)

def test_blind_runs_beside_the_published_text_only_rows(audited):
    """SEED (dims 1-4, all image items): each run's n / accuracy / interval are the audit's overall numbers; no model
    of the paper is SmolLM2, so every text-only row of the MMStar paper's Tables 1-2 is a labelled reference row."""
    from mmbench_lib import published
    from mmbench_lib.reports import blind_reference as R

    table, note = R.reference_table(audited.folders)
    ours = table[table["source"] == "ours"].set_index("model")
    assert list(ours.index) == ["SmolLM2-135M-Instruct", "Random Choice"]
    for label, name in (("smollm2", "SmolLM2-135M-Instruct"), ("random", "Random Choice")):
        overall = audited.audit.per_model[(audited.audit.per_model["label"] == label)].iloc[-1]
        assert ours.loc[name, "n"] == overall["n"] == 12
        assert ours.loc[name, "accuracy %"] == round(100 * overall["accuracy"], 1)
        assert ours.loc[name, "95% interval"] == f"{100 * overall['ci_low']:.1f}-{100 * overall['ci_high']:.1f}"
        assert ours.loc[name, "setting"] == "text only, recipe seed1-ppl, 0-shot" and ours.loc[name, "data"].startswith("demo data")
    paper = table[table["source"] != "ours"]
    t1, t2 = published.load("mmstar_table1"), published.load("mmstar_table2")
    text_only = len(t1) - 1 + int(t2["strategy"].isin(["LLM", "LVLM-text"]).sum())  # Random Choice shown once
    assert len(paper) == text_only + 1 and set(paper["same model"]) == {"reference", "chance"}
    chance = paper[paper["same model"] == "chance"].iloc[0]
    assert chance["accuracy %"] == 24.3 and chance["source"] == "MMStar paper, Table 1 / MMStar paper, Table 2"
    gpt4 = paper[(paper["model"] == "GPT4-Turbo") & (paper["setting"] == "LLM, 2-shot")].iloc[0]
    assert gpt4["accuracy %"] == 26.8 and gpt4["source"] == "MMStar paper, Table 1"  # Table 1, SEED column
    llava = paper[paper["setting"] == "LLaVA-1.5 without images, 0-shot"].iloc[0]
    assert llava["accuracy %"] == 37.5 and llava["source"] == "MMStar paper, Table 2"
    assert "no model the paper names matched ours (SmolLM2-135M-Instruct, Random Choice)" in note
    assert "SEED-Image (column seed_image" in note and "Image group's items" in note


def test_only_the_declared_group_counts_and_other_benchmarks_are_refused(demo, tmp_path):
    """SEED-Image is dimensions 1-9: a blind run over dims 1 and 10 is compared on its dim-1 items only."""
    from mmbench_lib.reports import blind_reference as R

    config = runs.RunConfig("seed", tmp_path, data=runs.demo_args("seed", demo, dimensions=[1, 10]), model="random",
                            recipe="seed1-ppl", device="cpu", progress=False)
    folders = blind.blind_runs(config, ["random"], tmp_path)
    rows = _rows(folders["random"])
    image = [r for r in rows.values() if r["dimension_id"] == 1]
    assert len(image) < len(rows)
    table, _note = R.reference_table(folders)
    assert table.iloc[0]["n"] == len(image)
    assert table.iloc[0]["accuracy %"] == round(100 * sum(bool(r["correct"]) for r in image) / len(image), 1)
    config2 = runs.RunConfig("seed2", tmp_path / "s2", data=runs.demo_args("seed2", demo, dimensions=[1]), model="random",
                             recipe="seed1-ppl", device="cpu", progress=False)
    with pytest.raises(ValueError, match="no published text-only column is declared"):
        R.reference_table(blind.blind_runs(config2, ["random"], tmp_path / "s2"))


def test_the_same_model_s_published_rows_come_first(audited, monkeypatch):
    """A blind run of lmsys/vicuna-7b-v1.5 (the run's model renamed: the marking, not the model, is under test) is
    matched to Vicuna-v1.5-7B in Table 1 and as the LLM base of LLaVA-1.5 and CogVLM-Chat in Table 2."""
    from mmbench_lib.reports import blind_reference as R

    real = R._ours

    def renamed(label, folder, task):
        return {**real(label, folder, task), "model": "vicuna-7b-v1.5", "spec": "causal:lmsys/vicuna-7b-v1.5"}

    monkeypatch.setattr(R, "_ours", renamed)
    table, note = R.reference_table({"smollm2": audited.folders["smollm2"]})
    same = table[table["same model"] == "yes"]
    assert list(same.index) == [1, 2, 3] and list(same["accuracy %"]) == [32.0, 32.6, 32.6]
    assert list(same["setting"]) == ["LLM, 2-shot", "LLM base of LLaVA-1.5, 0-shot", "LLM base of CogVLM-Chat, 0-shot"]
    assert "the paper's rows of the same model: Vicuna-v1.5-7B" in note
