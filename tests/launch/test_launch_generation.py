"""Notebook 20 (MMMU generation, the paper's baselines) as two shards through submitit's real local
executor and real papermill runs: the merge equals one process item by item, per baseline."""
import json
from pathlib import Path

import pytest

from mmbench_lib.launch.launcher import launch_shards
from mmbench_lib.runner import run_notebook

ROOT = Path(__file__).resolve().parents[2]
NB = ROOT / "notebooks" / "20_generation.ipynb"
PARAMS = str(ROOT / "params" / "20_generation" / "mmmu_demo_baselines.yaml")
pytestmark = pytest.mark.slow


def _rows(path):
    return {r["id"]: r for r in map(json.loads, Path(path).read_text(encoding="utf-8").splitlines())}


def test_two_generation_shards_merge_to_the_single_process_run(demo_dir, outputs):
    over = {"data_dir": str(demo_dir), "limit": 10}  # 10 of the 24 demo items: both shards hold some
    lines = []
    sharded = launch_shards(NB, [PARAMS], over, run_id="sharded", num_shards=2, out=lines.append)
    assert lines[0].startswith("submitted 2 of 2 shards (local)"), lines
    single = run_notebook(NB, [PARAMS], over, run_id="single", progress=False)
    labels = sorted(p.name for p in single.iterdir() if (p / "scored.jsonl").is_file())
    assert {"random", "frequent", "smollm2"} <= set(labels)
    sizes = []
    for k in range(2):  # each shard generated only its own items, in its own sub-run folders
        rows = _rows(sharded / "shards" / f"{k}-of-2" / "smollm2" / f"predictions.shard-0{k}-of-02.jsonl")
        sizes.append(len(rows))
    assert sum(sizes) == 10 and min(sizes) > 0, sizes
    for label in labels:
        one, merged = _rows(single / label / "predictions.jsonl"), _rows(sharded / label / "predictions.jsonl")
        assert list(merged) != [] and sorted(merged) == sorted(one), label
        for i in one:  # the stored responses, item by item
            assert merged[i] == one[i], (label, i)
        assert _rows(sharded / label / "scored.jsonl") == _rows(single / label / "scored.jsonl"), label
        m1, m2 = (json.loads((d / label / "metrics.json").read_text()) for d in (single, sharded))
        if "ocr" in m1:  # tesseract calls depend on the OCR cache the earlier run filled; the reader itself must match
            assert m2["ocr"].pop("tesseract_calls_this_run") >= 0 and m1["ocr"].pop("tesseract_calls_this_run") >= 0
        assert m2 == m1, label
    summary = (sharded / "tables" / "summary.csv").read_text()
    assert summary == (single / "tables" / "summary.csv").read_text()


def test_two_seed2_shards_merge_to_the_single_process_run(demo_dir, outputs):
    """Notebook 11 (SEED-Bench-2 L3, tiny LLaVA and the demo's generated images) sharded: the same rows and metrics."""
    nb = ROOT / "notebooks" / "11_seed_bench2.ipynb"
    params = [str(ROOT / "params" / "11_seed_bench2" / "demo_tiny_llava.yaml")]
    over = {"data_dir": str(demo_dir), "limit": 16, "batch_size": 1}  # as notebook 10's test: no padding differences
    sharded = launch_shards(nb, params, over, run_id="sharded2", num_shards=2, out=[].append)
    single = run_notebook(nb, params, over, run_id="single2", progress=False)
    one, merged = _rows(single / "predictions.jsonl"), _rows(sharded / "predictions.jsonl")
    assert len(one) == 16 and merged == one
    assert json.loads((sharded / "metrics.json").read_text()) == json.loads((single / "metrics.json").read_text())
    assert (sharded / "tables" / "seed2_per_dimension.csv").read_text() == \
        (single / "tables" / "seed2_per_dimension.csv").read_text().replace("single2", "sharded2")
