"""One rule for relative paths (docs/cli.md "Paths"): taken from the directory the command ran in, made absolute
once before the checks and passed so to the notebook; and ``--device`` checked against the machine."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mmbench_lib.pipeline import preflight
from mmbench_lib.pipeline.preflight import BadValue, absolute_paths, check_device

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo" / "seed"


def _cli(cwd, tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if k != "MMBENCH_DEBUG"}
    env.update(PYTHONPATH=str(ROOT), MMBENCH_OUTPUTS=str(tmp_path / "outputs"), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "mmbench_lib.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_absolute_paths_from_the_given_directory(tmp_path):
    (tmp_path / "ckpt").mkdir()
    got = absolute_paths({"annotation_file": "d/SEED-Bench.json", "video_roots": {"ssv2": "v/ssv2", "x": ""},
                          "responses": ["a.jsonl", "/abs/b.jsonl"], "generated_dir": "demo", "source": "MMMU/MMMU",
                          "model": "vlm:ckpt", "models": ["smollm2", "vlm:llava-hf/llava-1.5-7b-hf", "causal:./m"],
                          "runs": ["my-run-id", "./outputs/r"], "data_dir": "~/d", "limit": 3}, tmp_path)
    assert got["annotation_file"] == str(tmp_path / "d/SEED-Bench.json")
    assert got["video_roots"] == {"ssv2": str(tmp_path / "v/ssv2"), "x": ""}
    assert got["responses"] == [str(tmp_path / "a.jsonl"), "/abs/b.jsonl"]
    assert got["generated_dir"] == "demo" and got["source"] == "MMMU/MMMU"  # a name and a hub id stay
    assert got["model"] == f"vlm:{tmp_path / 'ckpt'}"  # a local folder found from the directory
    assert got["models"] == ["smollm2", "vlm:llava-hf/llava-1.5-7b-hf", f"causal:{tmp_path / 'm'}"]
    assert got["runs"] == ["my-run-id", str(tmp_path / "outputs/r")]  # a run id stays; a path is made absolute
    assert got["data_dir"] == str(Path("~/d").expanduser()) and got["limit"] == 3


def test_relative_data_paths_from_another_directory_run_to_the_end(tmp_path):
    """Run from a directory other than the repository with relative data paths: the checks and the notebook (its
    kernel starts in the repository) read the same files, and the run ends with its metrics."""
    work = tmp_path / "elsewhere"
    (work / "mydata" / "cc3m").mkdir(parents=True)
    data = json.loads((DEMO / "SEED-Bench.json").read_text(encoding="utf-8"))
    keep = [q for q in data["questions"] if q["question_type_id"] == 1][:2]
    for q in keep:
        shutil.copy(DEMO / "cc3m" / q["data_id"], work / "mydata" / "cc3m" / q["data_id"])
    (work / "mydata" / "SEED-Bench.json").write_text(json.dumps({**data, "questions": keep}), encoding="utf-8")
    (work / "p.yaml").write_text("annotation_file: mydata/SEED-Bench.json\nimage_root: mydata/cc3m\n", encoding="utf-8")
    proc = _cli(work, tmp_path, "run", str(ROOT / "notebooks/10_seed_bench.ipynb"), "-f", "p.yaml", "--model", "random",
                "-p", "dimensions", "[1]", "--run-id", "elsewhere")
    assert proc.returncode == 0, proc.stderr[-2000:]
    folder = tmp_path / "outputs" / "elsewhere"
    params = (folder / "params.yaml").read_text(encoding="utf-8")
    assert f"annotation_file: {work / 'mydata/SEED-Bench.json'}" in params  # passed absolute
    metrics = json.loads(next(folder.rglob("metrics.json")).read_text(encoding="utf-8"))
    assert metrics["counts"]["items"] == 2
    # a missing relative path is refused by the checks, naming where it was looked for, before any folder exists
    proc = _cli(work, tmp_path, "run", str(ROOT / "notebooks/10_seed_bench.ipynb"), "-p", "annotation_file",
                "nothere.json", "--model", "random", "--run-id", "never")
    errors = [line for line in proc.stderr.splitlines() if line.startswith("mmbench: error:")]
    assert proc.returncode == 2 and len(errors) == 1 and str(work / "nothere.json") in errors[0], proc.stderr
    assert not (tmp_path / "outputs" / "never").exists()


def test_an_accelerator_the_machine_lacks_is_refused(monkeypatch):
    monkeypatch.setattr(preflight, "_accelerators", lambda: (0, False))
    for device, needle in (("cuda", "no CUDA device"), ("cuda:1", "no CUDA device"), ("mps", "no Apple MPS")):
        with pytest.raises(BadValue, match=needle):
            check_device(device)
    monkeypatch.setattr(preflight, "_accelerators", lambda: (1, False))
    check_device("cuda:0")
    with pytest.raises(BadValue, match=r"has 1 CUDA device\(s\), cuda:0 to cuda:0"):
        check_device("cuda:1")
    check_device("cpu")
    check_device("auto")


def test_device_probe_matches_torch():
    """The subprocess probe (no torch in this process) answers what torch answers here."""
    import torch

    assert preflight._accelerators() == (torch.cuda.device_count(), bool(torch.backends.mps.is_available()))


def test_cuda_without_a_gpu_is_one_line_before_torch(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    proc = _cli(ROOT, tmp_path, "run", "notebooks/10_seed_bench.ipynb", "--device", "cuda:1", "--model", "random")
    errors = [line for line in proc.stderr.splitlines() if line.startswith("mmbench: error:")]
    assert proc.returncode == 2 and len(errors) == 1 and "device='cuda:1'" in errors[0] and "no CUDA device" in errors[0]
    assert not (tmp_path / "outputs").exists()
