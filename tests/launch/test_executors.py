"""Where shards run: submitit's real local executor (GPUs split through CUDA_VISIBLE_DEVICES) and the
sbatch file its real Slurm executor writes from our options; launch errors are one line."""
import os
import signal
from pathlib import Path

import pytest

from mmbench_lib.cli import main
from mmbench_lib.launch.executors import local_executor, shard_gpus, slurm_executor
from mmbench_lib.launch.options import LaunchError, LaunchOptions

ROOT = Path(__file__).resolve().parents[2]


def _visible_devices():
    return os.environ.get("CUDA_VISIBLE_DEVICES")


@pytest.mark.parametrize("gpus, expected", [((), ""), ((3,), "3"), ((0, 1), "0,1")])
def test_a_local_shard_sees_only_its_gpus(tmp_path, gpus, expected):
    job = local_executor(tmp_path, gpus, LaunchOptions()).submit(_visible_devices)
    assert job.result() == expected  # read inside the job's own process


def test_gpus_are_split_disjointly_or_refused():
    assert shard_gpus(2, None, [4, 5, 6]) == [(4,), (5,)]
    assert shard_gpus(2, 2, [0, 1, 2, 3]) == [(0, 1), (2, 3)]
    assert shard_gpus(3, None, []) == [(), (), ()]  # CPU: no GPU for any shard
    with pytest.raises(LaunchError, match=r"3 shards x 1 GPU\(s\) need 3 GPUs; 2 visible"):
        shard_gpus(3, 1, [0, 1])


def test_slurm_options_reach_the_sbatch_file(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"  # submitit looks for srun on PATH before it accepts a Slurm executor
    bin_dir.mkdir()
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    options = LaunchOptions(launcher="slurm", slurm_partition="gpu", slurm_time=240, gpus_per_shard=2,
                            slurm_options={"account": "vlm", "cpus_per_task": "8", "reservation": "eval"})
    ex = slurm_executor(tmp_path / "submitit", "mmbench-run1", options)
    text = ex._make_submission_file_text("python -m submitit.core._submit x", "uid")
    for line in ("#SBATCH --partition=gpu", "#SBATCH --time=240", "#SBATCH --gpus-per-node=2", "#SBATCH --account=vlm",
                 "#SBATCH --cpus-per-task=8", "#SBATCH --reservation=eval", "#SBATCH --job-name=mmbench-run1",
                 "#SBATCH --ntasks-per-node=1"):
        assert line in text.splitlines(), line


def test_slurm_launcher_off_a_cluster_is_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no srun
    with pytest.raises(LaunchError, match="--launcher slurm: Could not detect \"srun\""):
        slurm_executor(tmp_path, "x", LaunchOptions(launcher="slurm"))


@pytest.mark.parametrize("args, message", [
    (["notebooks/30_error_analysis.ipynb", "--shards", "2"],
     "30_error_analysis.ipynb cannot be sharded: it has no parameter(s) ['shard_index', 'num_shards', 'merge_shards']"),
    (["notebooks/10_seed_bench.ipynb", "--shards", "1"], "--shards 1: must be >= 2"),
    (["notebooks/10_seed_bench.ipynb", "--shards", "2", "-p", "shard_index", "1"],
     "--shards sets ['shard_index'] itself"),
    (["notebooks/10_seed_bench.ipynb", "--shards", "2", "-p", "modle", "x"], "has no parameter(s) ['modle']"),
    (["notebooks/10_seed_bench.ipynb", "--shards", "2", "--max-retries", "-1"], "--max-retries -1: must be >= 0"),
    (["notebooks/10_seed_bench.ipynb", "--launcher", "slurm", "--slurm-time", "60"],
     "--launcher, --slurm-time only apply with --shards N"),
])
def test_bad_launches_are_refused_before_anything_runs(args, message, outputs, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not any(outputs.iterdir())  # no run folder, no job


def _fails():
    raise ValueError("the model spec names no model")


def _dies():
    os.kill(os.getpid(), signal.SIGKILL)  # the job's own process, before it can write a result


def test_a_failed_shard_is_summed_up_in_one_line(tmp_path):
    from mmbench_lib.launch.launcher import _reason

    job = local_executor(tmp_path, (), LaunchOptions()).submit(_fails)
    assert _reason(job.exception()) == "ValueError: the model spec names no model"
    killed = local_executor(tmp_path, (), LaunchOptions()).submit(_dies)
    killed._results_timeout_s = 0
    assert _reason(killed.exception()) == "its process ended without a result (killed, out of memory or pre-empted)"
