"""One reader for both protocols: a SEED ranking run (whole and in shards) and an MMMU baseline run
into one frame with the same columns, one row per item, values equal to each run's metrics.json
(schema version 2: accuracies as fractions); old or broken folders give one clear error."""
import json
import shutil

import pytest

from mmbench_lib.analysis import reader
from mmbench_lib.core.metrics import ENTRY_KEYS, SCHEMA_VERSION, upgrade
from mmbench_lib.pipeline import generation, runs
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.pipeline.shards import merge_runs
from mmbench_lib.tasks import seed1


@pytest.fixture(scope="module")
def folders(demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("reader")
    args = runs.demo_args("seed", demo)
    runs.evaluate(RunConfig("seed", root / "seed", data=args, model="random:3", progress=False))
    for k in range(2):
        runs.evaluate(RunConfig("seed", root / "shards", data=args, model="random:3", progress=False,
                                shard_index=k, num_shards=2))
    generation.evaluate_generation(RunConfig("mmmu", root / "mmmu", source=demo["mmmu"]["source"], model="random",
                                             baseline="random", progress=False))
    return {"seed": root / "seed", "shards": root / "shards", "mmmu": root / "mmmu", "root": root}


def _metrics(folder):
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))


def test_both_protocols_share_one_frame(folders):
    df = reader.samples_df([folders["seed"], folders["mmmu"]])
    assert list(df.columns) == list(reader.COLUMNS)
    seed, mmmu = df[df["protocol"] == "ranking"], df[df["protocol"] == "generation"]
    assert len(seed) == _metrics(folders["seed"])["counts"]["items"] == len(
        (folders["seed"] / "predictions.jsonl").read_text(encoding="utf-8").splitlines())
    assert len(mmmu) == _metrics(folders["mmmu"])["counts"]["items"]
    assert not df.duplicated(["run", "id"]).any()
    assert set(seed["benchmark"]) == {"seed"} and set(mmmu["benchmark"]) == {"mmmu"}
    assert set(seed["recipe"]) == {"seed1-ppl"} and set(mmmu["recipe"]) == {"random baseline"}
    # generation: prediction is the official parser's answer, dimension the subject, group the discipline
    scored = [json.loads(line) for line in (folders["mmmu"] / "scored.jsonl").read_text(encoding="utf-8").splitlines()]
    by_id = mmmu.set_index("id")
    for r in scored:
        assert by_id.loc[r["id"], "prediction"] == r["parsed_pred"] == by_id.loc[r["id"], "parsed_pred"]
        assert (by_id.loc[r["id"], "dimension"], by_id.loc[r["id"], "group"]) == (r["subject"], r["discipline"])
        assert by_id.loc[r["id"], "response"] == r["response"]
    assert seed["scores"].map(lambda s: isinstance(s, dict)).all() and seed["response"].isna().all()


def test_values_equal_the_metrics(folders):
    seed = reader.load_run(folders["seed"])
    assert seed.metrics["schema_version"] == SCHEMA_VERSION and seed.protocol == "ranking"
    ok = seed.samples[seed.samples["status"] == "ok"]
    for d in seed.metrics["per_dimension"]:
        sub = ok[ok["dimension_id"] == d["dimension_id"]]
        assert set(ENTRY_KEYS) <= set(d)
        assert (d["n"], d["correct"]) == (len(sub), int(sub["correct"].sum()))
        assert d["accuracy"] == pytest.approx(sub["correct"].mean()) and 0 <= d["accuracy"] <= 1
        assert d["ci_low"] <= d["accuracy"] <= d["ci_high"]
    groups = {g["group"]: g for g in seed.metrics["groups"]}
    assert groups["All"]["accuracy"] == groups["All"]["accuracy_micro"] == pytest.approx(ok["correct"].mean())
    image = ok[ok["dimension_id"].isin(seed1.GROUPS["Image"])]
    assert groups["Image"]["accuracy_dim_mean"] == pytest.approx(image.groupby("dimension_id")["correct"].mean().mean())

    mmmu = reader.load_run(folders["mmmu"])
    m, ok = mmmu.metrics, mmmu.samples[mmmu.samples["status"] == "ok"]
    assert m["schema_version"] == SCHEMA_VERSION and mmmu.protocol == "generation"
    assert set(ENTRY_KEYS) <= set(m["overall"])
    assert (m["overall"]["n"], m["overall"]["correct"]) == (len(ok), int(ok["correct"].sum()))
    assert m["overall"]["accuracy"] == pytest.approx(ok["correct"].mean())
    for subject, e in m["per_subject"].items():
        sub = ok[ok["dimension"] == subject]
        assert set(ENTRY_KEYS) <= set(e) and (e["n"], e["correct"]) == (len(sub), int(sub["correct"].sum()))
        assert e["ci_low"] <= e["accuracy"] <= e["ci_high"]


def test_shards_read_as_one_run(folders):
    shards = reader.samples_df(folders["shards"])
    whole = reader.load_run(folders["seed"]).samples
    assert sorted(shards["id"]) == sorted(whole["id"]) and not shards["id"].duplicated().any()
    cols = ["id", "prediction", "correct", "status", "dimension_id"]
    assert shards[cols].sort_values("id").reset_index(drop=True).equals(whole[cols].sort_values("id").reset_index(drop=True))
    with pytest.raises(reader.RunError, match="no metrics.json.*merge"):
        reader.load_run(folders["shards"])
    merged = folders["root"] / "merged"
    metrics = merge_runs([folders["shards"]], merged)
    for k in range(2):  # as `mmbench run` lays a sharded run out: each shard in its own folder, read before the merge
        shutil.copytree(folders["shards"], folders["root"] / "laid_out" / "shards" / f"{k}-of-2",
                        ignore=shutil.ignore_patterns(f"*shard-0{1 - k}-of-02*", "*.lock"))
    laid_out = reader.samples_df(folders["root"] / "laid_out")
    assert laid_out[cols].sort_values("id").reset_index(drop=True).equals(shards[cols].sort_values("id").reset_index(drop=True))
    run = reader.load_run(merged)
    assert run.metrics == metrics and metrics["groups"] == _metrics(folders["seed"])["groups"]
    assert sorted(run.samples["id"]) == sorted(whole["id"])


def test_a_version_1_metrics_file_is_upgraded(folders, tmp_path):
    for name in ("seed", "mmmu"):
        v2 = _metrics(folders[name])
        old = tmp_path / name
        shutil.copytree(folders[name], old)
        if name == "seed":  # as the previous layout wrote it: percentages, micro_ci_*
            v1 = {**v2, "per_dimension": [{**d, **{k: None if d[k] is None else 100 * d[k]
                                                   for k in ("accuracy", "random_expected", "ci_low", "ci_high")}}
                                          for d in v2["per_dimension"]],
                  "groups": [{**{k: v for k, v in g.items() if k not in ("ci_low", "ci_high", "accuracy")},
                              "accuracy_micro": None if g["accuracy_micro"] is None else 100 * g["accuracy_micro"],
                              "accuracy_dim_mean": None if g["accuracy_dim_mean"] is None else 100 * g["accuracy_dim_mean"],
                              "micro_ci_low": None if g["ci_low"] is None else 100 * g["ci_low"],
                              "micro_ci_high": None if g["ci_high"] is None else 100 * g["ci_high"]} for g in v2["groups"]]}
        else:  # acc / num
            v1 = {**v2, "overall": {"num": v2["overall"]["n"], "correct": v2["overall"]["correct"],
                                    "acc": v2["overall"]["accuracy"]}}
        del v1["schema_version"]
        (old / "metrics.json").write_text(json.dumps(v1), encoding="utf-8")
        got = reader.load_run(old).metrics
        if name == "seed":
            for a, b in zip(got["per_dimension"], v2["per_dimension"]):
                assert a["accuracy"] == pytest.approx(b["accuracy"]) and a["ci_low"] == pytest.approx(b["ci_low"])
            for a, b in zip(got["groups"], v2["groups"]):
                assert a["accuracy"] == pytest.approx(b["accuracy"]) and a["ci_high"] == pytest.approx(b["ci_high"])
        else:
            assert got["overall"]["n"] == v2["overall"]["n"] and got["overall"]["accuracy"] == v2["overall"]["accuracy"]
    assert upgrade(v2) is v2


def test_old_or_broken_folders_name_what_is_missing(folders, tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    (old / "results.jsonl").write_text("{}\n")
    with pytest.raises(reader.RunError, match=r"old: no item rows \(predictions.jsonl.*found \['results.jsonl'\]"):
        reader.load_run(old)
    newer = tmp_path / "newer"
    shutil.copytree(folders["seed"], newer)
    (newer / "metrics.json").write_text(json.dumps({**_metrics(folders["seed"]), "schema_version": 9}))
    with pytest.raises(reader.RunError, match=r"newer/metrics.json: metrics schema_version 9"):
        reader.load_run(newer)
    man = json.loads((folders["seed"] / "manifest.json").read_text())
    assert isinstance(man["data"]["video_roots"], dict)  # loader arguments recorded as JSON, not str()
    assert {it.id for it in reader.load_items(man)} == set(reader.samples_df(folders["seed"])["id"])
    with pytest.raises(reader.RunError, match=r"m.json: data.video_roots is a Python repr string"):
        reader.load_items({**man, "data": {**man["data"], "video_roots": str(man["data"]["video_roots"])}}, "m.json")
