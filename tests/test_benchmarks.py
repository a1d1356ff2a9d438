"""The speed benchmark still runs and reports what it promises (no timing is asserted)."""
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "likelihood_speed.py"


def _run(*args):
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_quick_run_reports_speed_and_agreement():
    out = _run("--quick", "--no-memory")
    assert set(out["workloads"]) == {"text_smollm2", "vlm_tiny_llava_336", "vlm_smollm2_llava_336"}
    for name in ("text_smollm2", "vlm_tiny_llava_336", "vlm_smollm2_llava_336"):
        w = out["workloads"][name]
        assert w["prediction_agreement"] == 1.0 and w["max_abs_diff_sum_logprob"] < 1e-3
        assert w["engine_forward_tokens"] < w["reference_forward_tokens"]
        assert w["engine_forward_calls"] < w["reference_forward_calls"]
        assert w["reference_qps"] > 0 and w["engine_qps"] > 0 and w["theoretical_ratio"] > 1
    vlm = out["workloads"]["vlm_smollm2_llava_336"]  # the real SmolLM2 behind a 576-token image prefix
    assert vlm["prefix_tokens_avg"] > 576 and vlm["vision_tower_params"] > 0
    assert {"ratio_engine_over_reference", "choices_per_question", "choice_tokens_avg"} <= set(vlm)


def test_memory_probe_reports_a_peak_above_the_loaded_model():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--probe", "vlm_tiny_llava_336", "reference", "2"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["baseline_mb"] > 100 and res["peak_above_baseline_mb"] > 10  # full-vocabulary logits per choice
