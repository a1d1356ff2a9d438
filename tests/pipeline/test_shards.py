"""Sharded runs: a deterministic split, one file per shard, a merge that checks coverage."""
import json

import pytest

from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.cli import main
from mmbench_lib.pipeline.shards import merge_runs, select, shard_of


def test_split_is_deterministic_and_a_partition(demo):
    items = runs.load_items("seed", runs.demo_args("seed", demo))
    parts = [select(items, k, 3) for k in range(3)]
    assert sorted(it.id for p in parts for it in p) == sorted(it.id for it in items)
    assert all(shard_of(it.id, 3) == k for k, p in enumerate(parts) for it in p)
    assert [it.id for it in select(list(reversed(items)), 1, 3)] == [it.id for it in reversed(parts[1])]
    with pytest.raises(ValueError, match="shard_index"):
        select(items, 3, 3)


def test_shards_merge_to_the_unsharded_metrics(demo, tmp_path, capsys):
    args = runs.demo_args("seed2", demo, level="L2")
    whole = runs.evaluate(RunConfig("seed2", tmp_path / "whole", data=args, model="random:5", progress=False))
    for k in range(3):  # three independent processes would do this, one per GPU
        runs.evaluate(RunConfig("seed2", tmp_path / "sharded", data=args, model="random:5", shard_index=k, num_shards=3,
                                  progress=False))
    files = sorted(p.name for p in (tmp_path / "sharded").glob("predictions*.jsonl"))
    assert files == [f"predictions.shard-0{k}-of-03.jsonl" for k in range(3)]
    assert main(["merge", str(tmp_path / "sharded"), "--out", str(tmp_path / "merged")]) == 0
    merged = json.loads((tmp_path / "merged" / "metrics.json").read_text())
    assert merged["per_dimension"] == whole["per_dimension"] and merged["groups"] == whole["groups"]
    assert "merged 48 items" in capsys.readouterr().out


def test_merge_refuses_missing_shards_and_missing_items(demo, tmp_path):
    args = runs.demo_args("seed", demo)
    runs.evaluate(RunConfig("seed", tmp_path / "r", data=args, model="random", shard_index=0, num_shards=2, progress=False))
    with pytest.raises(ValueError, match=r"missing shard\(s\) \[1\] of 2"):
        merge_runs([tmp_path / "r"], tmp_path / "m1")
    runs.evaluate(RunConfig("seed", tmp_path / "r", data=args, model="random", shard_index=1, num_shards=2, progress=False))
    path = tmp_path / "r" / "predictions.shard-01-of-02.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")  # shard 1 was interrupted before its last item
    with pytest.raises(ValueError, match=r"1 item\(s\) not scored yet"):
        merge_runs([tmp_path / "r"], tmp_path / "m2")
    dup = tmp_path / "r" / "predictions.shard-00-of-02.jsonl"
    dup.write_text(dup.read_text() + lines[0] + "\n")
    with pytest.raises(ValueError, match="more than one shard"):
        merge_runs([tmp_path / "r"], tmp_path / "m3")


def test_shards_write_only_in_their_folders_and_a_merge_grows_with_them(demo, tmp_path, monkeypatch):
    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path))
    args = runs.demo_args("seed", demo)

    def shards(limit):
        for k in range(2):
            runs.evaluate(RunConfig("seed", runs.run_dir("grow", shard=(k, 2)), data=args, model="random", limit=limit,
                                    shard_index=k, num_shards=2, progress=False))

    shards(10)
    assert not list((tmp_path / "grow").glob("*.json*"))  # nothing under the run's own names before the merge
    merge_runs([tmp_path / "grow"], tmp_path / "grow")
    first = (tmp_path / "grow" / "predictions.jsonl").read_text().splitlines()
    assert len(first) == 10
    shards(20)  # the shards resume with more items; merging again adds only the new rows
    merged = merge_runs([tmp_path / "grow"], tmp_path / "grow")
    second = (tmp_path / "grow" / "predictions.jsonl").read_text().splitlines()
    assert second[:10] == first and len(second) == 20 == merged["counts"]["items"]
    shard0 = tmp_path / "grow" / "shards" / "0-of-2" / "predictions.shard-00-of-02.jsonl"
    row = json.loads(shard0.read_text().splitlines()[0])
    shard0.write_text("".join(json.dumps({**r, "prediction": "Z"} if r["id"] == row["id"] else r) + "\n"
                              for r in map(json.loads, shard0.read_text().splitlines())))
    with pytest.raises(ValueError, match="already holds predictions that are not these shards' rows"):
        merge_runs([tmp_path / "grow"], tmp_path / "grow")
