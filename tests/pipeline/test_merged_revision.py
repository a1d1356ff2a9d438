"""A merged sharded generation run keeps its data revision (issue 34, item 5): the shards' ``data_revision`` is copied
into the merged manifest and ``results.json``'s reader sees it; shards made on different data revisions are refused."""
import json

import pytest

from mmbench_lib.analysis import results
from mmbench_lib.demo import ensure_demo
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunSpec


def _shards(root, demo, n=2):
    for k in range(n):
        runs.evaluate(RunSpec.from_params("mmmu", root / "shards" / f"{k}-of-{n}" / "random", source=demo["mmmu"]["source"],
                                          model="random", baseline="random", split="validation", shard_index=k,
                                          num_shards=n, progress=False))
    return sorted((root / "shards").glob("*/random/manifest.shard-*.json"))


def test_the_merged_run_records_the_shards_data_revision(tmp_path):
    demo = ensure_demo(tmp_path / "demo")
    manifests = _shards(tmp_path / "run", demo)
    revisions = [json.loads(m.read_text())["data_revision"] for m in manifests]
    assert revisions[0] == revisions[1] and revisions[0]["kind"].startswith("sha256")
    runs.merge_sub_runs(tmp_path / "run")
    merged = json.loads((tmp_path / "run" / "random" / "manifest.json").read_text())
    assert merged["data_revision"] == revisions[0] and len(merged["merged_from"]) == 2
    by_run = {r["run"]: r for r in results.collect(tmp_path / "run")["runs"]}
    assert by_run["random"]["data_revision"] == revisions[0]  # what results.json records for the merged run


def test_shards_of_another_data_revision_are_refused(tmp_path):
    demo = ensure_demo(tmp_path / "demo")
    manifests = _shards(tmp_path / "run", demo)
    m = json.loads(manifests[1].read_text())
    m["data_revision"] = {**m["data_revision"], "value": "0" * 64}  # shard 1 made on a rewritten copy
    manifests[1].write_text(json.dumps(m))
    with pytest.raises(ValueError, match="data_revision"):
        runs.merge_sub_runs(tmp_path / "run")
