"""Data problems found before the run folder exists: ``mmbench run`` takes a cheap look at the data
(``preflight.check_data`` -> ``tasks.copies.probe``); a wrong file, layout or columns is one line naming
the file, what was expected and what was found, exit 2, and no folder under outputs/."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmbench_lib.demo import copies as dc
from mmbench_lib.pipeline.preflight import BadValue, check_values

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def written(demo, tmp_path_factory):
    out = tmp_path_factory.mktemp("copies")
    return {"seed": dc.seed1_copies(demo["seed"], out / "seed"), "mmmu": dc.mmmu_copies(demo["mmmu"], out / "mmmu"),
            "cmmmu": dc.cmmmu_copies(demo["cmmmu"], out / "cmmmu")}


def _wrong_cases(written, tmp_path):
    empty = tmp_path / "not_cmmmu"
    empty.mkdir()
    (empty / "readme.json").write_text("{}")
    return {
        "seed": (["notebooks/10_seed_bench.ipynb", "-p", "benchmark", "seed", "--model", "random", "-p", "annotation_file",
                  written["mmmu"]["merged_file"]], r"expected the lmms-eval SEED parquet with columns .*missing \['question_id'"),
        "seed2": (["notebooks/11_seed_bench2.ipynb", "--model", "random", "-p", "annotation_file", written["mmmu"]["tsv"]],
                  r"MMMU_DEV_VAL.tsv, item '0', field 'category': expected a dimension name in 'category', found '\w+'"),
        "mmmu": (["notebooks/20_generation.ipynb", "-p", "benchmark", "mmmu", "--split", "dev", "-p", "source",
                  written["cmmmu"]["merged"]], r"expected the merged hub MMMU parquet with columns .*missing \['options'"),
        "cmmmu": (["notebooks/20_generation.ipynb", "-p", "benchmark", "cmmmu", "-p", "source", str(empty)],
                  r"not_cmmmu: expected the CMMMU official layout .*; found \['readme.json'\]"),
    }


@pytest.mark.parametrize("benchmark", ["seed", "seed2", "mmmu", "cmmmu"])
def test_wrong_data_is_one_line_exit_2_and_no_run_folder(benchmark, written, tmp_path):
    args, pattern = _wrong_cases(written, tmp_path)[benchmark]
    outputs = tmp_path / "outputs"
    env = {k: v for k, v in os.environ.items() if k != "MMBENCH_DEBUG"}
    env.update(PYTHONPATH=str(ROOT), MMBENCH_OUTPUTS=str(outputs), HF_HUB_OFFLINE="1")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mmbench_lib.cli", "run", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    errors = [line for line in proc.stderr.splitlines() if line.startswith("mmbench: error:")]
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    import re

    assert re.search(pattern, errors[0]), errors[0]
    assert not outputs.exists() or not any(outputs.iterdir())
    print(f"{benchmark}: {took:.1f} s: {errors[0]}")


def test_every_copy_passes_the_check(demo, written):
    check_values({"benchmark": "seed", "annotation_file": written["seed"]["parquet_folder"], "model": "random"}, "ranking")
    check_values({"benchmark": "seed", "annotation_file": written["seed"]["tsv"], "model": "random"}, "ranking")
    for source in (written["mmmu"]["merged"], written["mmmu"]["tsv"], demo["mmmu"]["source"]):
        check_values({"benchmark": "mmmu", "source": source, "split": "", "baseline": "random"}, "generation")
    for source in (written["cmmmu"]["merged"], demo["cmmmu"]["root"], demo["cmmmu"]["hf_root"], written["cmmmu"]["tsv"]):
        check_values({"benchmark": "cmmmu", "source": source, "split": "val", "baseline": "random"}, "generation")
    with pytest.raises(BadValue, match="annotation file not found"):
        check_values({"benchmark": "seed", "annotation_file": str(Path(written["seed"]["tsv"]).with_name("nope.json")),
                      "model": "random"}, "ranking")
