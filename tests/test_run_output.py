"""What a user sees from `mmbench run` in a terminal (a real subprocess, a real papermill kernel): item
progress lines streamed while the notebook runs, the results table at the end, results.json, and an
executed notebook whose outputs hold the same text lines, not a widget bar frozen at 0%."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
PROGRESS = re.compile(r"^seed random: (\d+)/(\d+) items \((\d+)%\), ")
WIDGET = "application/vnd.jupyter.widget-view+json"


def test_mmbench_run_streams_progress_and_ends_with_the_results_table(demo_dir, tmp_path):
    env = {**os.environ, "MMBENCH_OUTPUTS": str(tmp_path), "PYTHONPATH": str(ROOT)}
    for name in ("MMBENCH_PROGRESS", "PYTHONUNBUFFERED"):  # the runner sets the first for its kernel, flushes itself
        env.pop(name, None)
    cmd = [sys.executable, "-m", "mmbench_lib.cli", "run", "notebooks/10_seed_bench.ipynb",
           "-f", "params/10_seed_bench/seed1_demo_smollm2.yaml", "-p", "model", "random", "-p", "batch_size", "4",
           "-p", "data_dir", str(demo_dir), "--run-id", "live"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = tmp_path / "live"
    lines, live = [], []
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if PROGRESS.match(line):  # the executed notebook is published only after the last cell
            live.append(not (run / "10_seed_bench.ipynb").exists())
    err = proc.stderr.read()
    assert proc.wait(timeout=600) == 0, err
    progress = [m for m in map(PROGRESS.match, lines) if m]
    total = int(progress[0][2])
    assert total > 20 and [int(m[1]) for m in progress][0] == 0 and int(progress[-1][1]) == total
    assert len(progress) >= 4 and all(live), (lines, live)  # several lines, each reached the terminal before the end
    assert "Executing" not in err  # no per-cell bar redrawn with carriage returns into a pipe

    header = next(i for i, line in enumerate(lines) if line.startswith("|run"))
    assert header > max(lines.index(m.string.rstrip("\n")) for m in progress)
    cells = [c.strip() for c in lines[header + 2].strip("|").split("|")]
    assert cells[:7] == ["live", "seed", "All", "random", "demo data", "ranking (seed1-ppl, sum)", ""] and cells[7] == str(total)
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert results["runs"][0]["metrics"] == metrics and cells[8] == f"{100 * results['runs'][0]['summary']['accuracy']:.1f}"

    nb = json.loads((run / "10_seed_bench.ipynb").read_text(encoding="utf-8"))
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    text = "".join("".join(o.get("text", "")) for o in outputs if o["output_type"] == "stream")
    assert f"seed random: {total}/{total} items (100%)" in text and "seed random: 0/" in text
    assert not any(WIDGET in o.get("data", {}) for o in outputs)

    groups = (run / "tables" / "groups.csv").read_text(encoding="utf-8").splitlines()
    header_cells = groups[0].split(",")
    assert header_cells[:4] == ["run", "benchmark", "model", "group"]
    assert {tuple(r.split(",")[1:3]) for r in groups[1:]} == {("seed", "random")}
