"""The one resumable batch loop (pipeline/loop.py), for both request kinds: resume skips stored ids,
a failing item is isolated by bisection and marked failed, ranking and generation rows share field names,
and RunConfig rejects bad values before anything loads."""
import re

import pytest

from mmbench_lib.core.requests import Generation
from mmbench_lib.core.rows import base_row
from mmbench_lib.core.store import RunStore
from mmbench_lib.models import RandomChoice
from mmbench_lib.pipeline import generation, ranking
from mmbench_lib.pipeline.config import RunConfig, RunSpec, run_params
from mmbench_lib.pipeline.loop import Failed, bisect_call
from mmbench_lib.tasks import mmmu, seed1
from mmbench_lib.tasks.recipes import get_recipe

SHARED = {"id", "benchmark", "split", "dimension_id", "dimension", "group", "level", "part", "question_type",
          "difficulty", "answer", "cluster", "status", "prediction", "correct", "error"}


@pytest.fixture(scope="module")
def seed_items(demo):
    d = demo["seed"]
    return seed1.load(d["annotation_file"], d["image_root"], d["video_roots"], dimensions="image")[:10]


@pytest.fixture(scope="module")
def mmmu_items(demo):
    return mmmu.load(demo["mmmu"]["source"], split="validation")[:10]


class FailsOn(RandomChoice):
    """Random Choice that raises for a whole batch whenever ``bad`` is in it; records every call."""

    def __init__(self, bad):
        super().__init__(seed=1)
        self.bad, self.calls = bad, []

    def score_choices(self, requests):
        self.calls.append([r.id for r in requests])
        if self.bad in {r.id for r in requests}:
            raise RuntimeError("boom on " + self.bad)
        return super().score_choices(requests)


class Recorder:
    """A generation adapter that answers "(A)", records requests, and fails for one id."""

    name, sees_images = "rec", False

    def __init__(self, bad=None):
        self.bad, self.calls = bad, []

    def generate(self, requests):
        self.calls.append([r.id for r in requests])
        if self.bad in {r.id for r in requests}:
            raise RuntimeError("boom on " + self.bad)
        return [Generation("(A)", 2, False) for _ in requests]

    def describe(self):
        return {"adapter": "Recorder"}


def test_ranking_isolates_the_failing_item_by_bisection_and_resumes(seed_items, tmp_path):
    bad = seed_items[5].id
    ad = FailsOn(bad)
    store = ranking.rank_items(seed_items[:8], ad, RunStore(tmp_path), get_recipe("seed1-ppl"), batch_size=8,
                               progress=False)
    rows = {r["id"]: r for r in store.rows()}
    assert rows[bad]["status"] == "failed" and "boom on" in rows[bad]["error"]
    assert all(r["status"] == "ok" and r["prediction"] in "ABCD" for i, r in rows.items() if i != bad)
    # bisection: 8 -> 4 + 4 -> (2 + 2) -> (1 + 1): the failing item ends up alone
    assert [bad] in ad.calls and max(len(c) for c in ad.calls[1:]) == 4
    # the same predictions as an uninterrupted run without the failure
    clean = ranking.rank_items(seed_items[:8], RandomChoice(seed=1), RunStore(tmp_path / "clean"),
                               get_recipe("seed1-ppl"), progress=False)
    assert {i: r["prediction"] for i, r in rows.items() if i != bad} == \
           {r["id"]: r["prediction"] for r in clean.rows() if r["id"] != bad}
    # resume: only the new items reach the model
    ad2 = FailsOn("none")
    ranking.rank_items(seed_items, ad2, RunStore(tmp_path), get_recipe("seed1-ppl"), progress=False)
    assert sorted(i for c in ad2.calls for i in c) == sorted(it.id for it in seed_items[8:])
    # retry_failed redoes only the failed item
    ad3 = FailsOn("none")
    ranking.rank_items(seed_items, ad3, RunStore(tmp_path), get_recipe("seed1-ppl"), retry_failed=True, progress=False)
    assert ad3.calls == [[bad]] and RunStore(tmp_path).done_ids() == {it.id for it in seed_items}


def test_the_loop_prints_progress_lines_with_counts_and_failures(seed_items, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MMBENCH_PROGRESS", "text")
    bad = seed_items[5].id
    ranking.rank_items(seed_items[:8], FailsOn(bad), RunStore(tmp_path), get_recipe("seed1-ppl"), batch_size=4)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "seed random: 0/8 items (0%), - items/s, failed 0"
    assert lines[1].startswith("seed random: 4/8 items (50%), ") and lines[1].endswith(", failed 0")
    assert lines[-1].startswith("seed random: 8/8 items (100%), ") and lines[-1].endswith("failed 1")
    # a resumed loop counts what is stored (the failed item included) and names the label it is given
    generation.generate_items([], Recorder(), RunStore(tmp_path / "g"), label="mmmu rec")
    ranking.rank_items(seed_items[:10], RandomChoice(), RunStore(tmp_path), get_recipe("seed1-ppl"))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "mmmu rec: 0/0 items (100%), - items/s, failed 0"
    assert lines[2] == "seed random: 8/10 items (80%), - items/s, failed 1 (resuming: 8 done before)"
    assert lines[-1].startswith("seed random: 10/10 items (100%)") and lines[-1].endswith("failed 1")


def test_generation_isolates_the_failing_item_and_resumes(mmmu_items, tmp_path):
    bad = mmmu_items[2].id
    rec = Recorder(bad)
    store = generation.generate_items(mmmu_items[:6], rec, RunStore(tmp_path), batch_size=6, progress=False)
    rows = {r["id"]: r for r in store.rows()}
    assert rows[bad]["status"] == "failed" and "boom on" in rows[bad]["error"] and rows[bad]["response"] is None
    assert all(r["status"] == "ok" and r["response"] == "(A)" for i, r in rows.items() if i != bad)
    assert [bad] in rec.calls
    rec2 = Recorder()
    generation.generate_items(mmmu_items, rec2, RunStore(tmp_path), batch_size=3, progress=False)
    assert [i for c in rec2.calls for i in c] == [it.id for it in mmmu_items[6:]]  # nothing generated twice
    assert [r["id"] for r in RunStore(tmp_path).rows()] == [it.id for it in mmmu_items]


def test_rows_of_both_protocols_share_field_names(seed_items, mmmu_items, tmp_path):
    r = ranking.rank_items(seed_items[:2], RandomChoice(), RunStore(tmp_path / "r"), get_recipe("seed1-ppl"),
                           progress=False).rows()
    g = generation.generate_items(mmmu_items[:2], Recorder(), RunStore(tmp_path / "g"), progress=False).rows()
    failed_r = ranking.failed_row(seed_items[0], "x")
    failed_g = generation.GenerationProtocol(Recorder()).failed(mmmu_items[0], "x")
    for row in r + g + [failed_r, failed_g]:
        assert SHARED <= set(row), SHARED - set(row)
    assert set(base_row(seed_items[0])) == set(base_row(mmmu_items[0]))


def test_bisect_call_returns_one_result_per_pair():
    pairs = [(type("I", (), {"id": str(k)})(), k) for k in range(5)]

    def call(ps):
        if any(v == 3 for _, v in ps):
            raise ValueError("three")
        return [v * 10 for _, v in ps]

    out = bisect_call(call, pairs)
    assert [o if not isinstance(o, Failed) else "F" for o in out] == [0, 10, 20, "F", 40]
    assert "ValueError: three" in out[3].error


@pytest.mark.parametrize("kw, field", [
    ({"batch_size": 0}, "generation.batch_size"), ({"batch_size": "8"}, "generation.batch_size"),
    ({"recipe": "nope"}, "task.recipe"), ({"reduction": "max"}, "generation.reduction"), ({"model": "gpt-17"}, "model.spec"),
    ({"shard_index": 2, "num_shards": 2}, "selection.shard_index"), ({"device": "gpu"}, "model.device"),
    ({"trust_remote_code": 2}, "model.trust_remote_code"), ({"baseline": "frequent"}, "generation.baseline"),
    ({"endpoint": {"base_url": "http://x"}}, "model.engine_options"), ({"data": {}}, "task.data"),
    ({"benchmark": "seed3"}, "task.benchmark"), ({"model": "openai:m", "endpoint": {"timeout": "soon"}},
                                                 "model.engine_options.timeout"),
    ({"model": "openai:m", "endpoint": {"max_retries": -1}}, "model.engine_options.max_retries"),
    ({"model": "openai:m", "endpoint": {"base_url": "file:///x"}}, "model.engine_options.base_url"),
])
def test_run_config_names_the_bad_field(kw, field, tmp_path):
    """A wrong value is one line naming the part and the field (``<part>.<field>: ...``)."""
    args = {"benchmark": "seed", "out_dir": tmp_path, "data": {"annotation_file": "a.json"}, **kw}
    with pytest.raises(ValueError, match=rf"^{re.escape(field)}: ") as e:
        RunConfig(**args)
    assert "\n" not in str(e.value)


def test_run_config_defaults_and_manifest_record(demo, tmp_path):
    c = RunConfig("cmmmu", tmp_path, source=demo["cmmmu"]["root"], model="random", split="validation", limit=0)
    assert (c.split, c.baseline, c.limit, c.protocol) == ("val", "random", None, "generation")
    with pytest.raises(ValueError, match=r"^task\.split: "):
        RunConfig("mmmu", tmp_path, source="x", split="train")
    with pytest.raises(ValueError, match=r"^task\.data\.source: "):
        RunConfig("mmmu", tmp_path)
    from mmbench_lib.pipeline.runs import evaluate

    m = evaluate(RunConfig("mmmu", tmp_path / "m", source=demo["mmmu"]["source"], model="random", subjects=["Math"],
                           progress=False))
    assert m["baseline"] == "random" and m["counts"]["items"] == 3
    man = RunStore(tmp_path / "m").manifest()
    spec = man["spec"]  # the parts as they are
    assert spec["task"]["benchmark"] == "mmmu" and spec["task"]["data"]["subjects"] == ["Math"]
    assert spec["run"]["out_dir"] == str(tmp_path / "m") and spec["generation"]["baseline"] == "random"
    again = RunSpec.from_manifest(man)  # the manifest rebuilds the same run
    assert again.identity() == man["identity"] and again.params() == run_params(man)


def test_old_flat_manifest_still_reads(demo, tmp_path):
    """A manifest written before the spec holds the flat ``config``: it rebuilds the same spec."""
    new = RunConfig("mmmu", tmp_path, source=demo["mmmu"]["source"], model="random", subjects=["Math"], limit=3)
    old = {"config": {**{k: v for k, v in new.params().items() if k != "stop_strings"}, "stop_strings": [],
                      "out_dir": str(tmp_path)}}
    assert RunSpec.from_manifest(old).identity() == new.identity()
    assert run_params(old)["subjects"] == ["Math"] and run_params({}) == {}
