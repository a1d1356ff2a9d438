"""A resumed run retries its failed items (a failure is not a result) and says how many; ``-p retry_failed false``
keeps them failed; the failure line names the path it tried (issue 41, item 7). The probe's case: a SEED-2-Plus run
whose items all failed on a wrong ``image_root``, then the corrected command with the same ``--run-id``."""
import json
import shutil

import pytest

from mmbench_lib.cli import main
from mmbench_lib.core.store import RunStore
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig


def _config(demo, folder, image_root, **kw):
    data = {**runs.demo_args("seed2plus", demo), "image_root": str(image_root)}
    return RunConfig("seed2plus", folder, data=data, model="random", progress=False, **kw)


def test_the_run_spec_retries_failed_items_unless_told_to_keep_them(demo, tmp_path):
    (tmp_path / "wrong").mkdir()
    runs.evaluate(_config(demo, tmp_path / "r", tmp_path / "wrong"))
    assert {r["status"] for r in RunStore(tmp_path / "r", readonly=True).rows()} == {"failed"}
    kept = runs.evaluate(_config(demo, tmp_path / "r", demo["seed2plus"]["image_root"], retry_failed=False))
    assert kept["counts"]["failed"] == 12
    fixed = runs.evaluate(_config(demo, tmp_path / "r", demo["seed2plus"]["image_root"]))
    assert fixed["counts"]["failed"] == 0 and fixed["counts"]["scored"] == 12
    assert len(RunStore(tmp_path / "r", readonly=True).rows()) == 12  # retried rows replace, never duplicate


@pytest.mark.slow
def test_failed_then_corrected_resume_ends_with_0_failed(demo, tmp_path, outputs, capfd):
    copy = tmp_path / "s2p"
    shutil.copytree(demo["seed2plus"]["image_root"], copy)
    (tmp_path / "wrong").mkdir()
    ann = copy / "SEED-Bench-2-plus-text-rich.json"
    base = ["run", "notebooks/10_seed_bench.ipynb", "-p", "benchmark", "seed2plus", "-p", "annotation_file", str(ann),
            "--model", "random", "--run-id", "s2p"]
    assert main([*base, "-p", "image_root", str(tmp_path / "wrong")]) == 3
    err = capfd.readouterr().err
    assert "12 of 12 items failed" in err and f"file not found: {tmp_path / 'wrong'}/" in err and "<path>" not in err
    assert main([*base, "-p", "image_root", str(copy), "-p", "retry_failed", "false"]) == 3
    assert "failed 12 (resuming: 12 done before)" in capfd.readouterr().out  # kept failed, as asked
    assert main([*base, "-p", "image_root", str(copy), "-p", "retry_failed", "true"]) == 0
    out = capfd.readouterr().out
    assert "retrying 12 failed item(s); -p retry_failed false keeps them" in out
    assert "took" in out and out.count("failed 0") >= 2
    metrics = json.loads((outputs / "s2p" / "metrics.json").read_text())
    assert metrics["counts"]["failed"] == 0 and metrics["counts"]["scored"] == 12
