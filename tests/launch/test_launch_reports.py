"""The report notebooks 50, 51 and 52 as two shards through submitit's real local executor and real papermill
runs: every sub-run (protocol run, blind model, option order) merges to the single-process run item by item,
and the report computed once on the merged sub-runs (its headline in results.json) equals the single run's.
Small selections keep it cheap; ``batch_size`` 1 as in notebook 10's test (no padding differences)."""
import json
from pathlib import Path

import pytest

from mmbench_lib.launch.launcher import launch_shards
from mmbench_lib.runner import run_notebook

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

CASES = {
    "50_protocol_sensitivity": ({"ranking_benchmark": "seed", "protocols": ["content-sum", "letters"], "limit": 6,
                                 "generation_benchmark": "cmmmu", "generation_limit": 4, "seeds": 20,
                                 "max_new_tokens": 4, "reuse": False}, "Protocol sensitivity"),
    "51_blind_solvability": ({"benchmark": "seed", "blind_models": ["smollm2"], "limit": 6}, "Blind-solvability"),
    "52_circular_eval": ({"benchmark": "seed", "recipe": "qwen-vl-letters", "reduction": "mean", "limit": 4},
                         "CircularEval"),
}


def _rows(path):
    return {r["id"]: r for r in map(json.loads, Path(path).read_text(encoding="utf-8").splitlines())}


def _report(folder):
    report = json.loads((folder / "results.json").read_text(encoding="utf-8"))["report"]
    keep = [i for i, c in enumerate(report["columns"]) if c != "run"]  # the run column names the run folder
    return report["name"], [[row[i] for i in keep] for row in report["rows"]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_two_report_shards_merge_to_the_single_process_run(name, demo_dir, outputs):
    nb = ROOT / "notebooks" / f"{name}.ipynb"
    params, title = CASES[name]
    over = {**params, "data_dir": str(demo_dir), "batch_size": 1}
    sharded = launch_shards(nb, None, over, run_id="sharded", num_shards=2, out=[].append)
    single = run_notebook(nb, None, over, run_id="single", progress=False)
    subs = sorted(p.name for p in single.iterdir() if (p / "predictions.jsonl").is_file())
    assert subs and subs == sorted(p.name for p in sharded.iterdir() if (p / "predictions.jsonl").is_file())
    for sub in subs:
        shard_rows = [_rows(next((sharded / "shards" / f"{k}-of-2" / sub).glob("predictions.shard-*.jsonl")))
                      for k in range(2)]
        assert not set(shard_rows[0]) & set(shard_rows[1]), sub  # each item in one shard only
        one, merged = _rows(single / sub / "predictions.jsonl"), _rows(sharded / sub / "predictions.jsonl")
        assert len(one) > 0 and merged == one, sub  # item by item
        m1, m2 = (json.loads((d / sub / "metrics.json").read_text(encoding="utf-8")) for d in (single, sharded))
        assert m2 == m1, sub
    (t1, rows1), (t2, rows2) = _report(single), _report(sharded)
    assert title in t1 and t2 == t1 and rows2 == rows1 and rows1
