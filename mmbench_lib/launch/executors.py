"""Where a shard runs: submitit's local executor (one machine, its GPUs split among the shards through
``CUDA_VISIBLE_DEVICES``, none on CPU) or its Slurm executor (one job per shard, partition, time, GPUs
and any other sbatch option passed through)."""
from __future__ import annotations

import os
from pathlib import Path

import submitit

from mmbench_lib.launch.options import LaunchError, LaunchOptions


def visible_gpus() -> list[int]:
    """The GPU indices this machine offers the shards: ``CUDA_VISIBLE_DEVICES`` when set, else all."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        try:
            return [int(x) for x in env.split(",") if x.strip()]
        except ValueError:
            raise LaunchError(f"CUDA_VISIBLE_DEVICES={env!r}: the local launcher needs GPU indices, not UUIDs") from None
    try:
        import torch
    except ImportError:
        return []
    return list(range(torch.cuda.device_count()))


def shard_gpus(num_shards: int, gpus_per_shard: int | None, gpus: list[int]) -> list[tuple[int, ...]]:
    """The GPUs of each shard on one machine: disjoint slices of ``gpus`` (none on CPU)."""
    per = (1 if gpus else 0) if gpus_per_shard is None else gpus_per_shard
    if num_shards * per > len(gpus):
        raise LaunchError(f"{num_shards} shards x {per} GPU(s) need {num_shards * per} GPUs; {len(gpus)} visible "
                          f"({gpus}); use fewer shards or --gpus-per-shard 0 for CPU")
    return [tuple(gpus[k * per:(k + 1) * per]) for k in range(num_shards)]


def local_executor(folder: Path, gpus: tuple[int, ...], options: LaunchOptions) -> submitit.LocalExecutor:
    ex = submitit.LocalExecutor(folder=folder)
    ex.update_parameters(timeout_min=options.local_timeout_min, gpus_per_node=len(gpus), visible_gpus=gpus,
                         stderr_to_stdout=True)
    return ex


def slurm_parameters(name: str, options: LaunchOptions) -> dict:
    """submitit ``SlurmExecutor`` parameters for one shard job."""
    valid = submitit.SlurmExecutor._valid_parameters()
    params = {"job_name": name, "nodes": 1, "ntasks_per_node": 1, "stderr_to_stdout": True,
              "gpus_per_node": 1 if options.gpus_per_shard is None else options.gpus_per_shard}
    if options.slurm_partition:
        params["partition"] = options.slurm_partition
    if options.slurm_time:
        params["time"] = options.slurm_time
    extra = {}
    for key, value in options.slurm_options.items():
        key = key.replace("-", "_")
        if key in valid:
            params[key] = value
        else:
            extra[key] = value
    if extra:
        params["additional_parameters"] = {**params.get("additional_parameters", {}), **extra}
    return params


def slurm_executor(folder: Path, name: str, options: LaunchOptions) -> submitit.SlurmExecutor:
    try:
        ex = submitit.SlurmExecutor(folder=folder)
    except RuntimeError as e:
        raise LaunchError(f"--launcher slurm: {e}") from None
    ex.update_parameters(**slurm_parameters(name, options))
    return ex


def make_executors(folders: list[Path], name: str, options: LaunchOptions):
    """One executor per shard, logging into that shard's ``submitit/`` folder."""
    if options.launcher == "slurm":
        return [slurm_executor(f, name, options) for f in folders]
    gpus = shard_gpus(len(folders), options.gpus_per_shard, visible_gpus())
    return [local_executor(f, g, options) for f, g in zip(folders, gpus)]
