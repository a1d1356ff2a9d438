"""The run spec (``pipeline.config.RunSpec``): typed parts from flat parameters, one identity for resume, merge
and report reuse, and bad engine options refused by ``mmbench run`` before any folder exists."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import FLAT, RunSpec, run_params
from mmbench_lib.pipeline.params import notebook_spec
from mmbench_lib.reports import configs
from mmbench_lib.reports.subruns import find_same_run as find_ranking_run

ROOT = Path(__file__).resolve().parents[2]


def _seed(demo, out, **kw):
    return RunSpec.from_params("seed", out, **{"data": runs.demo_args("seed", demo), "model": "random", "progress": False,
                                               **kw})


def test_parts_hold_every_flat_parameter_once(demo, tmp_path):
    spec = RunSpec.from_params("mmmu", tmp_path, source=demo["mmmu"]["source"], model="smollm2", limit=3,
                               endpoint={}, rotation=1, clip_model="ViT-S-32")
    assert (spec.task.data["source"], spec.selection.limit, spec.selection.rotation) == (demo["mmmu"]["source"], 3, 1)
    assert spec.judges.clip_model == "ViT-S-32" and spec.model.spec == "smollm2" and spec.task.split == "validation"
    assert set(spec.params()) == {*FLAT, "out_dir", "progress", "retry_failed", "parameters"}
    assert spec.with_params(limit=5).selection.limit == 5 and spec.selection.limit == 3  # frozen: a new spec
    with pytest.raises(ValueError, match=r"^run: unknown parameter\(s\) \['limt'\]"):
        RunSpec.from_params("mmmu", tmp_path, source="x", limt=3)


def test_identity_is_what_decides_the_computation(demo, tmp_path):
    a = _seed(demo, tmp_path / "a")
    same = _seed(demo, tmp_path / "b", progress=True, limit=2, batch_size=2, device="cpu", model_name="shown",
                 parameters={"x": 1}, num_shards=2, shard_index=1)
    assert a.identity() == same.identity() and a.identity_sha256() == same.identity_sha256()
    for change in ({"rotation": 3}, {"permutation_seed": 1}, {"recipe": "qwen-vl-letters"}, {"model": "random:1"},
                   {"data": runs.demo_args("seed", demo, dimensions=[1])}, {"seed": 1}, {"reduction": "mean"}):
        assert _seed(demo, tmp_path / "a", **change).identity() != a.identity(), change


def test_one_mapping_serves_notebooks_and_reports(demo, tmp_path):
    """Notebook 20's parameter cell, the reports' ``base_config`` and the flat constructor give one spec;
    the notebook's empty values take the spec's defaults (max_new_tokens: the protocol's 16)."""
    cell = {"benchmark": "mmmu", "source": "", "split": "", "subjects": "all", "model": "smollm2", "model_name": "",
            "endpoint_url": "", "api_key_env": "OPENAI_API_KEY", "concurrency": 32, "engine_options": {},
            "baseline": "all", "prompt_mode": "official", "max_new_tokens": 0, "batch_size": 8, "backend": "auto",
            "batch_policy": {}, "device": "auto", "dtype": "auto", "revision": "", "trust_remote_code": False,
            "device_map": None, "max_memory": None, "processor_kwargs": {}, "system_prompt": "",
            "chat_template_kwargs": {}, "stop_strings": [], "limit": 0, "seed": 0, "shard_index": 0, "num_shards": 1}
    nb = notebook_spec(cell, tmp_path, demo)
    flat = RunSpec.from_params("mmmu", tmp_path, source=demo["mmmu"]["source"], model="smollm2")
    report = configs.base_config({"benchmark": "mmmu", "data": {}, "model": "smollm2"}, tmp_path, demo)
    assert nb.to_dict() == flat.to_dict() == report.to_dict()
    assert nb.generation.max_new_tokens == 16 and nb.generation.scorer == "shared-prefix"


def test_report_reuse_needs_the_whole_identity(demo, tmp_path):
    """A CircularEval rotation run is not reused as the original order (issue 35: report 50 read ``rot-3``)."""
    rotated = _seed(demo, tmp_path / "runs" / "rot-3", recipe="qwen-vl-letters", rotation=3, limit=4)
    runs.evaluate(rotated)
    ids = [r["id"] for r in runs.RunStore(rotated.out_dir, readonly=True).rows()]
    plain = _seed(demo, tmp_path / "new", recipe="qwen-vl-letters", limit=4)
    assert find_ranking_run(plain, ids, root=tmp_path / "runs") is None
    assert find_ranking_run(rotated.with_params(out_dir=tmp_path / "x"), ids, root=tmp_path / "runs") == rotated.out_dir
    man = runs.RunStore(rotated.out_dir, readonly=True).manifest()  # a run before the identity: its option order
    old = {**{k: v for k, v in man.items() if k not in ("spec", "identity")}, "config": run_params(man)}
    (Path(rotated.out_dir) / "manifest.json").write_text(__import__("json").dumps(old))
    assert find_ranking_run(plain, ids, root=tmp_path / "runs") is None


def test_resume_refuses_another_identity(demo, tmp_path):
    runs.evaluate(_seed(demo, tmp_path / "r", limit=2))
    with pytest.raises(ValueError, match=r"selection\.seed 0 \(this call: 1\)"):
        runs.evaluate(_seed(demo, tmp_path / "r", limit=2, seed=1))
    runs.evaluate(_seed(demo, tmp_path / "r", limit=3))  # a larger limit extends the same run


@pytest.mark.parametrize("value, why", [
    ("{max_retries: -1}", "model.engine_options.max_retries: a whole number >= 0, got -1"),
    ("{timeout: soon}", "model.engine_options.timeout: a number of seconds > 0, got 'soon'"),
    ("{base_url: 'file:///etc'}", "model.engine_options.base_url: an http:// or https:// URL"),
])
def test_mmbench_run_refuses_bad_engine_options_before_the_run_folder(tmp_path, value, why):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MMBENCH_OUTPUTS": str(tmp_path / "outputs"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "mmbench_lib.cli", "run", "notebooks/20_generation.ipynb",
                           "--model", "openai:m", "-p", "endpoint_url", "http://127.0.0.1:9/v1", "-p", "engine_options",
                           value, "--run-id", "x"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("mmbench: error:")]
    assert proc.returncode == 2 and len(errors) == 1 and why in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "outputs" / "x").exists()
