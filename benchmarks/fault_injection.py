"""Fault injection for the sharded launcher: kill shards at random points over N launches of the SEED demo.

    PYTHONPATH=$PWD python benchmarks/fault_injection.py [--launches 10] [--limit 8] [--seed 0] [--out DIR]

One reference run in one process (``mmbench run notebooks/10_seed_bench.ipynb -f
params/10_seed_bench/seed1_demo_smollm2.yaml``, ``limit`` items, batch size 1), then ``--launches``
launches of the same run as ``--shards 2 --launcher local``, each with 1-3 random kills (SIGKILL): a
shard's kernel or its papermill process after a random number of stored items (0 too: killed while
loading), or the merge's kernel. Every launch must end in one of two ways:

* exit 0 and a merged ``predictions.jsonl`` equal item for item (prediction, scores, status) to the
  reference, with ``metrics.json`` equal to the reference's;
* a non-zero exit whose last line is one ``mmbench: error: ...`` line, with no merged result at the
  top of the run folder (never a silent partial result); the same command run again, without
  kills, must then end in the first way (resumed from the stores).

Prints one line per launch and a last line ``N/N launches ended as required``; exit 1 otherwise.
Bounded: each launch has a 900 s timeout.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks" / "10_seed_bench.ipynb"
PARAMS = ROOT / "params" / "10_seed_bench" / "seed1_demo_smollm2.yaml"
TIMEOUT = 900


def mmbench(*args) -> list[str]:
    return [sys.executable, "-m", "mmbench_lib.cli", "run", str(NB), "-f", str(PARAMS), *args]


def rows(path: Path) -> dict:
    return {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def metrics(path: Path) -> dict:
    m = json.loads(path.read_text(encoding="utf-8"))
    return {k: m.get(k) for k in ("per_dimension", "groups", "counts")}


def stored(folder: Path, k: int) -> int:
    p = folder / "shards" / f"{k}-of-2" / f"predictions.shard-0{k}-of-02.jsonl"
    return p.read_bytes().count(b"\n") if p.is_file() else 0


def shard_kernel(folder: Path, k: int) -> psutil.Process | None:
    lock = folder / "shards" / f"{k}-of-2" / f"run.shard-0{k}-of-02.lock"
    try:
        return psutil.Process(int(lock.read_text().split()[1]))
    except (OSError, ValueError, IndexError, psutil.Error):
        return None


def merge_kernel(launcher: psutil.Process) -> psutil.Process | None:
    """The merge's kernel: a kernel started by the launcher process itself (the shards' run under submitit)."""
    try:
        kids = launcher.children()
        return next((p for p in kids if "ipykernel" in " ".join(p.cmdline())), None)
    except psutil.Error:
        return None


def inject(proc: subprocess.Popen, folder: Path, plan: list[tuple], log: list[str]) -> None:
    """Carry out ``plan``: ``("shard", k, after_items, "kernel" | "papermill")`` or ``("merge",)``, in order."""
    launcher = psutil.Process(proc.pid)
    for step in plan:
        deadline = time.monotonic() + TIMEOUT
        while proc.poll() is None and time.monotonic() < deadline:
            if step[0] == "shard":
                _, k, after, what = step
                kernel = shard_kernel(folder, k)
                if kernel is not None and kernel.is_running() and stored(folder, k) >= after:
                    try:
                        victim = kernel if what == "kernel" else kernel.parent()
                        victim.send_signal(signal.SIGKILL)
                        log.append(f"killed shard {k} {what} after {stored(folder, k)} stored items")
                    except (psutil.Error, AttributeError):
                        continue
                    time.sleep(3)  # let the launcher see it before the next step looks for a new kernel
                    break
            else:
                kernel = merge_kernel(launcher)
                if kernel is not None:
                    try:
                        kernel.send_signal(signal.SIGKILL)
                        log.append("killed the merge's kernel")
                    except psutil.Error:
                        continue
                    break
            time.sleep(0.05)


def random_plan(rng: random.Random, per_shard: list[int]) -> list[tuple]:
    plan = []
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.2:
            plan.append(("merge",))
        else:
            k = rng.randrange(2)
            plan.append(("shard", k, rng.randint(0, max(per_shard[k] - 1, 0)), rng.choice(["kernel", "papermill"])))
    merges = [s for s in plan if s[0] == "merge"]
    return [s for s in plan if s[0] != "merge"] + merges[:1]  # the merge comes last, once


def check(folder: Path, ref_rows: dict, ref_metrics: dict) -> str | None:
    """Why the launch's merged result is not the reference's (``None``: equal)."""
    if not (folder / "predictions.jsonl").is_file():
        return "no merged predictions.jsonl"
    if rows(folder / "predictions.jsonl") != ref_rows:
        return "merged predictions differ from the single-process run"
    if metrics(folder / "metrics.json") != ref_metrics:
        return "merged metrics differ from the single-process run"
    return None


def run(cmd, env) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=10)
    ap.add_argument("--limit", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="outputs folder (default: a temporary one)")
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    out = Path(a.out or tempfile.mkdtemp(prefix="mmbench-faults-"))
    env = {**os.environ, "MMBENCH_OUTPUTS": str(out), "HF_HUB_OFFLINE": "1"}
    common = ["-p", "limit", str(a.limit), "-p", "batch_size", "1", "-p", "data_dir", str(out / "demo")]
    t0 = time.monotonic()
    ref = run(mmbench(*common, "--run-id", "single"), env)
    if ref.returncode != 0:
        print(f"reference run failed: {ref.stderr.strip().splitlines()[-1:]}")
        return 1
    ref_rows, ref_metrics = rows(out / "single" / "predictions.jsonl"), metrics(out / "single" / "metrics.json")
    from mmbench_lib.pipeline.shards import shard_of

    per_shard = [sum(shard_of(i, 2) == k for i in ref_rows) for k in range(2)]
    print(f"reference: {len(ref_rows)} items in one process ({time.monotonic() - t0:.0f} s); shards hold {per_shard}")
    ok = 0
    for i in range(a.launches):
        t = time.monotonic()
        folder = out / f"launch{i}"
        plan = random_plan(rng, per_shard)
        cmd = mmbench(*common, "--run-id", folder.name, "--shards", "2", "--launcher", "local")
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        log: list[str] = []
        try:
            inject(proc, folder, plan, log)
            stdout, stderr = proc.communicate(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
        kills = "; ".join(log) or "no kill landed (the run ended first)"
        if proc.returncode == 0:
            why = check(folder, ref_rows, ref_metrics)
            verdict = "merge equals the single-process run" if why is None else f"WRONG: exit 0 but {why}"
            ok += why is None
        else:
            err = [ln for ln in stderr.strip().splitlines() if ln.strip()]
            last = err[-1] if err else ""
            one_line = last.startswith("mmbench: error: ") and not any("Traceback" in ln for ln in err)
            silent = (folder / "metrics.json").is_file() and check(folder, ref_rows, ref_metrics) is not None
            again = run(cmd, env)
            resumed = again.returncode == 0 and check(folder, ref_rows, ref_metrics) is None
            good = one_line and not silent and resumed
            ok += good
            verdict = (f"exit {proc.returncode}, one line: {last[:160]!r}; rerun without kills: "
                       f"{'merge equals the single-process run' if resumed else 'WRONG: ' + (again.stderr.strip().splitlines() or ['?'])[-1][:160]}"
                       + ("" if one_line else " WRONG: not one line") + (" WRONG: partial result left" if silent else ""))
        print(f"launch {i}: {kills} -> {verdict} ({time.monotonic() - t:.0f} s)", flush=True)
    print(f"{ok}/{a.launches} launches ended as required ({time.monotonic() - t0:.0f} s in all)")
    return 0 if ok == a.launches else 1


if __name__ == "__main__":
    sys.exit(main())
