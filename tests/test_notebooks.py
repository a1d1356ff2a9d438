"""Real papermill runs of the notebooks through `mmbench run`, as a user runs them headless."""
import json
from pathlib import Path

import pytest

from mmbench_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def test_seed2_level3_through_the_llava_code_path(demo_dir, outputs):
    rc = main(["run", str(ROOT / "notebooks/10_seed_bench.ipynb"), "-f", str(ROOT / "params/10_seed_bench/seed2_demo_tiny_llava.yaml"),
               "-p", "data_dir", str(demo_dir), "--run-id", "s2"])
    assert rc == 0
    run = outputs / "s2"
    for f in ("10_seed_bench.ipynb", "params.yaml", "predictions.jsonl", "manifest.json", "metrics.json",
              "figures/per_dimension.png", "figures/per_dimension.svg", "tables/per_dimension.csv", "tables/groups.md"):
        assert (run / f).is_file(), f
    rows = {r["id"]: r for r in _rows(run / "predictions.jsonl")}
    assert len(rows) == 54
    statuses = {r["dimension_id"]: r["status"] for r in rows.values()}
    assert all(statuses[d] == "n/a" for d in (25, 26, 27))  # this model cannot output images
    assert all(statuses[d] == "ok" for d in range(1, 25))  # interleaved, multi-image and video items scored
    metrics = json.loads((run / "metrics.json").read_text())
    groups = {g["group"]: g for g in metrics["groups"]}
    assert groups["L3"]["accuracy_micro"] is None and groups["L2"]["accuracy_micro"] is not None
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["recipe"]["name"] == "llava-chat" and manifest["recipe"]["reduction"] == "mean"
    assert manifest["model"]["adapter"] == "ImageTextToText"
    assert manifest["versions"]["transformers"] and manifest["data_sha256"]["annotation_file"]
    assert "peak_memory" in manifest and manifest["parameters"]["level"] == "L3"


def test_seed1_run_resumes_without_rescoring(demo_dir, outputs):
    args = ["run", str(ROOT / "notebooks/10_seed_bench.ipynb"), "-f", str(ROOT / "params/10_seed_bench/seed1_demo_smollm2.yaml"),
            "-p", "data_dir", str(demo_dir), "--run-id", "s1"]
    assert main(args + ["-p", "limit", "10"]) == 0
    first = _rows(outputs / "s1" / "predictions.jsonl")
    assert len(first) == 10
    assert main(args + ["-p", "limit", "20"]) == 0  # same run id: the first 10 are kept, 10 more scored
    second = _rows(outputs / "s1" / "predictions.jsonl")
    assert [r["id"] for r in second[:10]] == [r["id"] for r in first]
    assert second[:10] == first and len({r["id"] for r in second}) == 20
    metrics = json.loads((outputs / "s1" / "metrics.json").read_text())
    assert metrics["counts"]["items"] == 20 and metrics["model"] == "smollm2" and metrics["reduction"] == "sum"


def test_unknown_parameter_is_an_error(outputs, capsys):
    rc = main(["run", str(ROOT / "notebooks/10_seed_bench.ipynb"), "-p", "modle", "smollm2"])
    assert rc == 2 and "has no parameter(s) ['modle']" in capsys.readouterr().err


def test_seed2_part3_with_generated_images(demo_dir, outputs):
    rc = main(["run", str(ROOT / "notebooks/10_seed_bench.ipynb"), "-f", str(ROOT / "params/10_seed_bench/seed2_demo_part3_generated.yaml"),
               "-p", "data_dir", str(demo_dir), "-p", "generated_dir", str(demo_dir / "seed2" / "generated"), "--run-id", "p3"])
    assert rc == 0
    rows = _rows(outputs / "p3" / "predictions.jsonl")
    assert {r["dimension_id"] for r in rows} == {25, 26, 27} and all(r["status"] == "ok" for r in rows)
    assert all("clip_similarity" in r for r in rows if r["dimension_id"] in (25, 26))
    manifest = json.loads((outputs / "p3" / "manifest.json").read_text())
    assert manifest["image_output"]["clip_model"] == "ViT-S-32" and "does not specify" in manifest["image_output"]["note"]


def test_seed1_video_through_a_vlm(demo_dir, outputs):
    rc = main(["run", str(ROOT / "notebooks/10_seed_bench.ipynb"), "-f", str(ROOT / "params/10_seed_bench/seed1_demo_tiny_llava_video.yaml"),
               "-p", "data_dir", str(demo_dir), "--run-id", "v1video"])
    assert rc == 0
    rows = _rows(outputs / "v1video" / "predictions.jsonl")
    assert {r["dimension_id"] for r in rows} == {10, 11, 12} and all(r["status"] == "ok" for r in rows)
    manifest = json.loads((outputs / "v1video" / "manifest.json").read_text())
    assert manifest["recipe"]["image_size"] == 224 and manifest["model"]["adapter"] == "ImageTextToText"
    groups = {g["group"]: g for g in json.loads((outputs / "v1video" / "metrics.json").read_text())["groups"]}
    assert groups["Video"]["n"] == 9 and "Image" not in groups


def test_seed2_with_a_model_split_over_cpu_and_disk(demo_dir, outputs, tmp_path, monkeypatch):
    """--device-map with some modules on "disk" (accelerate offload): the run records where the model sits."""
    monkeypatch.setenv("MMBENCH_OFFLOAD_DIR", str(tmp_path / "offload"))
    device_map = ("{model.vision_tower: disk, model.multi_modal_projector: cpu, model.language_model.embed_tokens: disk, "
                  "model.language_model.layers.0: cpu, model.language_model.layers.1: disk, "
                  "model.language_model.norm: cpu, model.language_model.rotary_emb: cpu, lm_head: disk}")
    rc = main(["run", str(ROOT / "notebooks/10_seed_bench.ipynb"), "-f", str(ROOT / "params/10_seed_bench/seed2_demo_tiny_llava.yaml"),
               "-p", "data_dir", str(demo_dir), "--limit", "6", "--device-map", device_map, "--run-id", "split"])
    assert rc == 0
    manifest = json.loads((outputs / "split" / "manifest.json").read_text())
    assert manifest["spec"]["model"]["device_map"]["lm_head"] == "disk" and manifest["spec"]["model"]["dtype"] is None
    assert manifest["model"]["device"] == "cpu"
    assert manifest["model"]["placement"]["modules"]["disk"] == [
        "model.vision_tower", "model.language_model.embed_tokens", "model.language_model.layers.1", "lm_head"]
    assert len(_rows(outputs / "split" / "predictions.jsonl")) == 6
    assert all(r["status"] == "ok" for r in _rows(outputs / "split" / "predictions.jsonl"))
