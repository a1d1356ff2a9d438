"""Sharded runs through submitit's real local executor and real papermill runs of 10_seed_bench.

Each shard writes only in its own folder; the merge alone writes the run's names; a two-shard
launch merges to exactly the predictions of one process, also when a shard is killed mid-run.
"""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from mmbench_lib.launch.launcher import launch_shards
from mmbench_lib.runner import run_notebook

ROOT = Path(__file__).resolve().parents[2]
NB = ROOT / "notebooks" / "10_seed_bench.ipynb"
SMOLLM2 = str(ROOT / "params" / "10_seed_bench" / "seed1_demo_smollm2.yaml")
pytestmark = pytest.mark.slow


def _rows(path):
    return {r["id"]: r for r in map(json.loads, Path(path).read_text(encoding="utf-8").splitlines())}


def _files(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def single_smollm2(demo_dir, tmp_path_factory):
    """SmolLM2 on 24 SEED v1 demo items in one process (the reference for the sharded runs)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MMBENCH_OUTPUTS", str(tmp_path_factory.mktemp("single")))
        folder = run_notebook(NB, [SMOLLM2], {"data_dir": str(demo_dir), "limit": 24, "batch_size": 1},
                              run_id="single", progress=False)
    return _rows(folder / "predictions.jsonl")


def test_shards_touch_disjoint_files_and_the_launch_merges_to_one_process(demo_dir, outputs):
    params = {"data_dir": str(demo_dir), "model": "random:3"}
    run = outputs / "two"
    seen = {}
    for k in range(2):  # by hand, one after the other: what each shard writes
        run_notebook(NB, None, {**params, "shard_index": k, "num_shards": 2}, run_id="two", progress=False)
        now = _files(run)
        assert {f: h for f, h in now.items() if f in seen} == seen, f"shard {k} rewrote a file of an earlier shard"
        new = set(now) - set(seen)
        assert new and all(f.startswith(f"shards/{k}-of-2/") for f in new), sorted(new)
        for name in ("params.yaml", "10_seed_bench.ipynb", f"predictions.shard-0{k}-of-02.jsonl",
                     "tables/per_dimension.csv", "figures/per_dimension.png"):
            assert f"shards/{k}-of-2/{name}" in new, name
        seen = now
    lines = []  # the launcher finds both shards finished with these parameters: it only merges
    folder = launch_shards(NB, overrides=params, run_id="two", num_shards=2, out=lines.append)
    assert lines[0].startswith("submitted 0 of 2 shards (local)") and "done earlier" in lines[-1]
    after = _files(run)
    assert {f: h for f, h in after.items() if f in seen} == seen  # the merge only reads the shards
    merged = set(after) - set(seen)
    assert not any(f.startswith("shards/") for f in merged)
    for name in ("params.yaml", "10_seed_bench.ipynb", "predictions.jsonl", "metrics.json", "tables/per_dimension.csv",
                 "figures/per_dimension.png", "results.json"):
        assert name in merged, name
    results = json.loads((folder / "results.json").read_text())  # the merged run only, not its shards again
    assert [r["run"] for r in results["runs"]] == ["two"] \
        and results["runs"][0]["summary"]["n"] == len(_rows(folder / "predictions.jsonl"))
    single = run_notebook(NB, None, params, run_id="one", progress=False)
    assert _rows(folder / "predictions.jsonl") == _rows(single / "predictions.jsonl")
    assert json.loads((folder / "metrics.json").read_text()) == json.loads((single / "metrics.json").read_text())


def _wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_killed_shard_is_resumed_and_the_merge_equals_one_process(demo_dir, outputs, single_smollm2):
    cmd = [sys.executable, "-m", "mmbench_lib.cli", "run", str(NB), "-f", SMOLLM2, "-p", "data_dir", str(demo_dir),
           "-p", "limit", "24", "-p", "batch_size", "1", "--run-id", "killed", "--shards", "2", "--launcher", "local"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        shard = outputs / "killed" / "shards" / "1-of-2"
        preds, lock = shard / "predictions.shard-01-of-02.jsonl", shard / "run.shard-01-of-02.lock"

        def stored():
            return preds.is_file() and preds.read_bytes().count(b"\n") >= 2

        _wait_for(stored, 900, "shard 1 to store two items")  # generous: a shared machine can be slow
        kernel = psutil.Process(int(lock.read_text().split()[1]))  # the lock names the kernel writing the store
        task = kernel.parent()  # the shard's papermill process, started by submitit
        os.kill(task.pid, signal.SIGKILL)
        kept = preds.read_bytes()
        total = len(json.loads((shard / "manifest.shard-01-of-02.json").read_text())["shard"]["item_ids"])
        kept_lines = kept[:kept.rfind(b"\n") + 1].splitlines(keepends=True)
        assert 2 <= len(kept_lines) < total, "the shard must be killed mid-run"
        out, _ = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "shard 1-of-2 failed (its process ended without a result" in out and "attempt 2 of 3" in out, out
    final = preds.read_bytes().splitlines(keepends=True)
    assert len(final) == total and final[:len(kept_lines)] == kept_lines  # resumed: stored items never rescored
    assert len(list((shard / "submitit").glob("*_submitted.pkl"))) == 2  # shard 1 alone was submitted again
    assert len(list((outputs / "killed" / "shards" / "0-of-2" / "submitit").glob("*_submitted.pkl"))) == 1
    merged = _rows(outputs / "killed" / "predictions.jsonl")
    assert merged == single_smollm2  # item for item: prediction, scores, status
    assert json.loads((outputs / "killed" / "merge.json").read_text()) == {"shards": 2, "items": 24}
