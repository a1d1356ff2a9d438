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


GPU_SPEED = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_speed.py"


def test_gpu_speed_quick_on_the_cpu_reports_host_time_agreement_and_tokens():
    """The GPU benchmark's tiny CPU run (CI): both shapes, every path, host ms per question, agreement."""
    proc = subprocess.run([sys.executable, str(GPU_SPEED), "--quick", "--device", "cpu", "--threads", "1",
                           "--questions", "4", "--prompts", "3", "--new-tokens", "4"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["benchmark"] == "gpu_speed" and out["device"] == "cpu" and out["peak_bf16_flops"] is None
    assert set(out["shapes"]) == {"llava15_7b", "qwen2vl_7b"}
    for shape in out["shapes"].values():
        rank = shape["ranking"]
        for bs in (2, 4):
            eng = rank[f"engine_bs{bs}"]
            assert eng["vs_reference"]["argmax_agreement_sum"] == 1.0  # fp32 on the CPU: the reference's picks
            assert eng["vs_reference"]["max_abs_diff_sum_logprob"] < 1e-3
            assert 0 <= eng["host_ms_per_question"] and 0 < eng["device_busy_s"] <= eng["seconds"]
            assert eng["forward_calls"] < rank["reference_bs8"]["forward_calls"]
            assert eng["tokens_per_s"] > 0 and eng["mfu"] is None  # no chip peak on a CPU
        gen = shape["generation"]["new_tokens_4"]
        for path in ("suite_default_policy", "plain_padded_generate", "one_at_a_time"):
            assert gen[path]["new_tokens"] > 0 and gen[path]["host_ms_per_question"] >= 0
        assert gen["suite_default_policy"]["vs_one_at_a_time"]["fraction_identical"] == 1.0  # fp32: exact
        assert gen["plain_padded_generate"]["vs_one_at_a_time"]["first_token_agreement"] == 1.0
