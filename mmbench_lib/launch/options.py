"""Options of a sharded launch and their command-line flags (light: ``mmbench --help`` imports it)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field

LAUNCHERS = ("local", "slurm")


class LaunchError(ValueError):
    """A launch that cannot start or finish; the message is one line."""


@dataclass(frozen=True)
class LaunchOptions:
    """How shards are launched. ``gpus_per_shard=None``: local, 1 when GPUs are visible else 0; Slurm, 1.
    ``slurm_options``: other sbatch options by name (``account``, ``qos``, ``constraint``, ``mem`` ...);
    submitit's own parameter names are used as such, anything else goes to ``#SBATCH --<name>``."""

    launcher: str = "local"
    gpus_per_shard: int | None = None
    slurm_partition: str | None = None
    slurm_time: int | None = None  # minutes
    slurm_options: dict = field(default_factory=dict)
    local_timeout_min: int = 7 * 24 * 60  # submitit's local default (2 min) would stop real runs
    max_retries: int = 2
    poll_s: float = 2.0

    def __post_init__(self):
        if self.launcher not in LAUNCHERS:
            raise LaunchError(f"--launcher {self.launcher!r}: must be one of {list(LAUNCHERS)}")
        if self.gpus_per_shard is not None and self.gpus_per_shard < 0:
            raise LaunchError(f"--gpus-per-shard {self.gpus_per_shard}: must be >= 0")
        if self.max_retries < 0:
            raise LaunchError(f"--max-retries {self.max_retries}: must be >= 0")
        if self.slurm_time is not None and self.slurm_time < 1:
            raise LaunchError(f"--slurm-time {self.slurm_time}: minutes, must be >= 1")


def _key_value(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("shards (one papermill execution per shard through submitit, then the merge)")
    g.add_argument("--shards", type=int, metavar="N", help="split the items into N shards run in parallel, then merge")
    g.add_argument("--launcher", choices=LAUNCHERS, default="local",
                   help="local: this machine, one GPU per shard (none on CPU); slurm: one Slurm job per shard")
    g.add_argument("--gpus-per-shard", type=int, metavar="G", help="default: 1 (local: 0 when no GPU is visible)")
    g.add_argument("--slurm-partition", metavar="NAME")
    g.add_argument("--slurm-time", type=int, metavar="MINUTES", help="time limit of each shard's job")
    g.add_argument("--slurm-opt", type=_key_value, action="append", metavar="KEY=VALUE", default=[],
                   help="any other sbatch option, e.g. account=abc, qos=high, mem=64G, cpus_per_task=8 (repeatable)")
    g.add_argument("--max-retries", type=int, default=2, help="resubmissions of a failed shard (default 2)")


def options_from_args(a: argparse.Namespace) -> LaunchOptions:
    return LaunchOptions(launcher=a.launcher, gpus_per_shard=a.gpus_per_shard, slurm_partition=a.slurm_partition,
                         slurm_time=a.slurm_time, slurm_options=dict(a.slurm_opt), max_retries=a.max_retries)


def launch_requested(a: argparse.Namespace) -> bool:
    """``--shards`` given; the other launch flags without it are a mistake (one-line ``LaunchError``)."""
    if a.shards is None:
        given = [flag for flag, value in (("--launcher", a.launcher != "local"), ("--gpus-per-shard", a.gpus_per_shard),
                                          ("--slurm-partition", a.slurm_partition), ("--slurm-time", a.slurm_time),
                                          ("--slurm-opt", a.slurm_opt), ("--max-retries", a.max_retries != 2)) if value]
        if given:
            raise LaunchError(f"{', '.join(given)} only apply with --shards N")
    return a.shards is not None
