"""One shard as a submitit job: the notebook executed headless into the shard's own folder
``<run>/shards/<k>-of-<n>/``, resuming from the shard's store.

The job is :class:`submitit.helpers.Checkpointable`: when Slurm pre-empts it or its time runs out,
submitit requeues the same call, and the call resumes (finished items are never scored again).
"""
from __future__ import annotations

import time
from pathlib import Path

from submitit.helpers import Checkpointable

from mmbench_lib.core.store import RunLockedError, RunStore
from mmbench_lib.pipeline.runs import run_dir
from mmbench_lib.runner import run_notebook


def wait_for_store(folder: Path, shard: tuple[int, int], timeout_s: float = 60.0) -> None:
    """Wait until no process holds the shard's store: the kernel of a killed attempt ends on its own
    (within about a second, when it sees its parent gone) and releases the lock then."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            RunStore(folder, shard=shard).close()
            return
        except RunLockedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


class ShardJob(Checkpointable):
    """``ShardJob(notebook, params, run_id, k, n)()`` runs shard ``k`` of ``n``; returns its folder.
    ``timeout``: papermill's per-cell timeout in seconds (none by default)."""

    def __init__(self, notebook: str, params: dict, run_id: str, shard_index: int, num_shards: int,
                 timeout: int | None = None):
        self.notebook, self.params, self.run_id, self.timeout = str(notebook), dict(params), run_id, timeout
        self.shard = (shard_index, num_shards)

    def __call__(self) -> str:
        folder = run_dir(self.run_id, shard=self.shard)
        wait_for_store(folder, self.shard)
        overrides = {**self.params, "shard_index": self.shard[0], "num_shards": self.shard[1]}
        return str(run_notebook(self.notebook, overrides=overrides, run_id=self.run_id, timeout=self.timeout,
                                progress=False))
