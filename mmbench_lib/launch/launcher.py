"""``mmbench run NOTEBOOK -f PARAMS --shards N --launcher local|slurm``: one papermill execution per
shard through submitit, then the merge.

More: docs/modules.md, ``mmbench_lib/launch/launcher.py``.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

import yaml
from submitit.core.utils import FailedJobError

from mmbench_lib.core.paths import validate_run_id
from mmbench_lib.core.yaml_limits import load as load_yaml
from mmbench_lib.launch.executors import make_executors
from mmbench_lib.launch.job import ShardJob
from mmbench_lib.launch.options import LaunchError, LaunchOptions
from mmbench_lib.launch.progress import ProgressLine, ShardCounter
from mmbench_lib.pipeline.runs import make_run_id, run_dir
from mmbench_lib.core.paths import check_outputs_root, run_folder
from mmbench_lib.core.store import PREDICTIONS, shard_dir
from mmbench_lib.runner import (RunInterrupted, check_param_values, check_params, check_resume, notebook_parameters,
                                read_params, run_notebook)

SHARD_PARAMS = ("shard_index", "num_shards", "merge_shards")


def _prepare(notebook, param_files, overrides, run_id, num_shards) -> tuple[Path, dict]:
    """The notebook's absolute path and the checked parameters (``run_id`` set): the same checks as an
    unsharded ``mmbench run`` (names, types, values) before any shard is submitted."""
    nb = Path(notebook).resolve()
    if not nb.is_file():
        raise FileNotFoundError(f"notebook not found: {notebook}")
    if not isinstance(num_shards, int) or num_shards < 2:
        raise LaunchError(f"--shards {num_shards}: must be >= 2 (without --shards the run is one process)")
    params = read_params(param_files, overrides)
    known = notebook_parameters(nb)
    missing = [p for p in SHARD_PARAMS if p not in known]
    if missing:
        raise LaunchError(f"{nb.name} cannot be sharded: it has no parameter(s) {missing} (10_seed_bench.ipynb has them)")
    given = [p for p in SHARD_PARAMS if p in params]
    if given:
        raise LaunchError(f"--shards sets {given} itself; leave them out of the parameters")
    check_params(nb.name, {**params, "num_shards": num_shards}, known)
    check_param_values(nb.name, params, known)
    params["run_id"] = validate_run_id(run_id or params.get("run_id") or make_run_id(nb.stem))
    check_launch_resume(nb, params, num_shards, known)
    return nb, params


def check_launch_resume(nb: Path, params: dict, n: int, known: dict) -> None:
    """A launch into an existing run folder resumes it only as it was split: a run sharded (or merged)
    another number of ways is refused in one line, and so is any shard folder (and the merged folder)
    made with other settings or another selection (``runner.check_resume``); all before any submission."""
    top = run_folder(check_outputs_root(), params["run_id"])
    stem = Path(PREDICTIONS).stem
    others = sorted({p.parent.name.rpartition("-of-")[2] for p in top.glob(f"shards/*-of-*/{stem}*.jsonl")
                     if p.stat().st_size} - {str(n)})
    if others:
        raise LaunchError(f"run {params['run_id']} was sharded {others[0]} ways ({top / 'shards'}); --shards {n} "
                          f"would score new shards that cannot merge with it: resume with --shards {others[0]}, "
                          f"or use another --run-id")
    check_resume(top, nb, {**params, "merge_shards": True, "num_shards": n}, known)
    for k in range(n):
        check_resume(shard_dir(top, (k, n)), nb, shard_params(params, k, n), known)


def shard_params(params: dict, k: int, n: int) -> dict:
    return {**params, "shard_index": k, "num_shards": n}


def shard_finished(folder: Path, counter: ShardCounter, params: dict) -> bool:
    """A shard that ran to its end with these very parameters (so it needs no new submission)."""
    try:
        saved = load_yaml((folder / "params.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    total = counter.total()
    return saved == params and total is not None and counter.done() >= total and any(folder.glob("metrics.shard-*.json"))


def _reason(err: Exception) -> str:
    """One line for a failed shard's job."""
    if not isinstance(err, FailedJobError):  # no result at all: the process was killed
        return "its process ended without a result (killed, out of memory or pre-empted)"
    trace = str(err).split("You can check full logs")[0]  # submitit's text: the job's traceback, then log paths
    lines = [ln.strip() for ln in trace.splitlines() if ln.strip().strip("-")]
    return " ".join(lines[-1].split())[:300] if lines else type(err).__name__


class _Shards:
    """The submitted jobs of one launch, their attempts and states."""

    def __init__(self, nb: Path, params: dict, n: int, options: LaunchOptions, out, timeout: int | None = None):
        self.nb, self.params, self.n, self.options, self.out, self.timeout = nb, params, n, options, out, timeout
        self.folders = [run_dir(params["run_id"], shard=(k, n)) for k in range(n)]
        self.counters = {k: ShardCounter(f, (k, n)) for k, f in enumerate(self.folders)}
        self.executors = make_executors([f / "submitit" for f in self.folders], f"mmbench-{params['run_id']}", options)
        self.jobs, self.attempts, self.states, self.errors = {}, {}, {}, {}

    def submit(self, k: int) -> None:
        with _output_to(self.folders[k] / "submitit" / "controller.log", self.options.launcher == "local"):
            job = self.executors[k].submit(ShardJob(str(self.nb), self.params, self.params["run_id"], k, self.n,
                                                    self.timeout))
        if self.options.launcher == "local":
            job._results_timeout_s = 2  # submitit waits 15 s for a slow cluster file system; none here
        self.jobs[k], self.states[k] = job, "running"
        self.attempts[k] = self.attempts.get(k, 0) + 1

    def start(self) -> None:
        for k in range(self.n):
            if shard_finished(self.folders[k], self.counters[k], shard_params(self.params, k, self.n)):
                self.states[k] = "done earlier"
            else:
                self.submit(k)
        self.out(f"submitted {len(self.jobs)} of {self.n} shards ({self.options.launcher}); "
                 f"logs in {self.folders[0].parent}/<k>-of-{self.n}/submitit/")

    def check(self, k: int) -> None:
        """Look at a running shard once: done, or failed and resubmitted, or failed for good."""
        job = self.jobs[k]
        if self.states[k] != "running" or not job.done():
            return
        err = job.exception()
        if err is None:
            self.states[k] = "done"
            return
        why = _reason(err)
        if self.attempts[k] > self.options.max_retries:
            self.states[k], self.errors[k] = "failed", f"{why} (log: {job.paths.stdout})"
            self.out(f"shard {k}-of-{self.n} failed for good after {self.attempts[k]} attempt(s): {why}")
            return
        stored = self.counters[k].done()
        self.submit(k)
        self.out(f"shard {k}-of-{self.n} failed ({why}); resubmitted (attempt {self.attempts[k]} of "
                 f"{self.options.max_retries + 1}), it resumes after its {stored} stored items")

    def wait(self) -> None:
        line = ProgressLine(self.counters, self.n, self.out)
        while True:
            for k in list(self.jobs):
                self.check(k)
            line.update(self.states, self.attempts)
            if all(s != "running" for s in self.states.values()):
                return
            time.sleep(self.options.poll_s)

    def cancel(self, grace_s: float = 5.0) -> None:
        """Cancel the running shards. A terminal's Ctrl-C reached the local controllers too and they are stopping
        their shards: they get ``grace_s`` to end before a cancel (a second SIGINT would cut their clean-up)."""
        running = [k for k in self.jobs if self.states.get(k) == "running"]
        if self.options.launcher == "local":
            deadline = time.monotonic() + grace_s
            try:
                while time.monotonic() < deadline and not all(self.jobs[k].done() for k in running):
                    time.sleep(0.2)
            except KeyboardInterrupt:  # Ctrl-C again: cancel now
                pass
        for k in running:
            if not self.jobs[k].done():
                self.jobs[k].cancel(check=False)


@contextlib.contextmanager
def _output_to(path: Path, redirect: bool = True):
    """While a local shard's controller process starts, this process's stdout and stderr point at ``path``: the
    controller inherits them, so what it prints (a ``KeyboardInterrupt`` traceback when Ctrl-C reaches it with
    this process) goes to the shard's log, not over the terminal."""
    if not redirect:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(log, 1)
        os.dup2(log, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (log, *saved):
            os.close(fd)


def launch_shards(notebook, param_files: list[str] | None = None, overrides: dict | None = None,
                  run_id: str | None = None, num_shards: int = 2, options: LaunchOptions | None = None,
                  timeout: int | None = None, out=None) -> Path:
    """Run ``notebook`` as ``num_shards`` shards (see the module doc) and merge them; returns the run folder.

    From a notebook: ``launch_shards("notebooks/10_seed_bench.ipynb", overrides={"model": "smollm2"},
    num_shards=2)``. Raises ``LaunchError`` (one line) when a shard fails more than ``max_retries`` times;
    the other shards run to their end first, and the same call later resumes every shard from its store.
    """
    options = options or LaunchOptions()
    out = out or (lambda line: print(line, flush=True))
    nb, params = _prepare(notebook, param_files, overrides, run_id, num_shards)
    shards = _Shards(nb, params, num_shards, options, out, timeout)
    try:
        shards.start()
        shards.wait()
    except KeyboardInterrupt:  # one line in the command (the shards cancelled, the run id to resume with)
        shards.cancel()
        raise RunInterrupted(run_folder(check_outputs_root(), params["run_id"]), params["run_id"]) from None
    if shards.errors:
        k, why = sorted(shards.errors.items())[0]
        raise LaunchError(f"shard {k}-of-{num_shards} failed ({shards.attempts[k]} attempt(s)), not merged: {why}; "
                          f"the same command resumes every shard from its store")
    folder = run_notebook(nb, overrides={**params, "merge_shards": True, "num_shards": num_shards},
                          run_id=params["run_id"], timeout=timeout, progress=False)
    return folder
