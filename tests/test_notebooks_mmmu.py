"""Real papermill runs of the MMMU / CMMMU notebooks through `mmbench run`, as a user runs them headless."""
import json
from pathlib import Path

import pytest

from mmbench_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _has_tesseract(lang):
    from mmbench_lib.pipeline.ocr import OCRUnavailable, check_tesseract

    try:
        check_tesseract(lang)
        return True
    except OCRUnavailable:
        return False


def _check_run(run, notebook, labels):
    for f in (notebook, "params.yaml", "tables/summary.csv", "tables/discipline.md", "tables/difficulty.csv",
              "tables/image_type.csv", "tables/question_type.csv", "figures/per_discipline.png", "figures/per_discipline.svg"):
        assert (run / f).is_file(), f
    for label in labels:
        for f in ("predictions.jsonl", "scored.jsonl", "metrics.json", "manifest.json"):
            assert (run / label / f).is_file(), (label, f)


def test_mmmu_notebook_runs_the_four_baselines(demo_dir, outputs):
    rc = main(["run", str(ROOT / "notebooks/20_generation.ipynb"), "-f", str(ROOT / "params/20_generation/mmmu_demo_baselines.yaml"),
               "-p", "data_dir", str(demo_dir), "-p", "max_new_tokens", "4", "-p", "limit", "6", "--run-id", "m"])
    assert rc == 0
    labels = ["random", "frequent", "smollm2"] + (["smollm2+ocr"] if _has_tesseract("eng") else [])
    _check_run(outputs / "m", "20_generation.ipynb", labels)
    metrics = {lb: json.loads((outputs / "m" / lb / "metrics.json").read_text()) for lb in labels}
    assert all(m["overall"]["n"] == 6 for m in metrics.values())  # limit 6: Art 1-3, Accounting 1-3
    # frequent answers come from the whole validation split: Art C/Robot, Accounting A/"6" -> Art_1,3, Acc_1,2 right
    assert metrics["frequent"]["overall"]["correct"] == 4
    assert metrics["smollm2"]["max_new_tokens"] == 4
    assert set(metrics["smollm2"]["per_discipline"]) == {"Art and Design", "Business"}


def test_cmmmu_notebook_runs_the_four_baselines(demo_dir, outputs):
    rc = main(["run", str(ROOT / "notebooks/20_generation.ipynb"), "-f", str(ROOT / "params/20_generation/cmmmu_demo_baselines.yaml"),
               "-p", "data_dir", str(demo_dir), "-p", "max_new_tokens", "4", "-p", "limit", "6", "--run-id", "c"])
    assert rc == 0
    labels = ["random", "frequent", "smollm2"] + (["smollm2+ocr"] if _has_tesseract("chi_sim") else [])
    _check_run(outputs / "c", "20_generation.ipynb", labels)
    m = json.loads((outputs / "c" / "smollm2" / "metrics.json").read_text())
    assert m["overall"]["n"] == 6 and set(m["per_question_type"]) == {"multiple-choice", "true-false", "fill-in-the-blank"}
