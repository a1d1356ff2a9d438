"""The contract of a task's data (issue 32 item 2): every registered task declares the layouts it reads
(``Task.layouts``) and probes a path itself (``Task.probe``). For every task and every layout it declares,
the demo items are written in that layout (``mmbench_lib.demo.copies.layout_copies``), then

- in process: the probe names the layout, the pre-run check (``preflight.check_data``) passes, and the
  task's loader reads the same questions as from the first layout (a TSV holding a part of them: that part);
- through ``mmbench run`` with the path given explicitly: the pre-run check and a ``--limit 2`` run
  (``random`` ranking for a ranking task, the ``random`` baseline for a generation task: both read every
  item through the task's loader), which must end with 2 scored items and the path in its manifest.

A new task, or a new layout, with no writer in ``demo/copies.py`` fails here."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmbench_lib.demo.copies import layout_copies
from mmbench_lib.pipeline.preflight import check_data
from mmbench_lib.tasks.base import all_tasks

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = {"ranking": "notebooks/10_seed_bench.ipynb", "generation": "notebooks/20_generation.ipynb"}
CASES = [(t.name, lay.key) for t in all_tasks() for lay in t.layouts]
TABLE: dict[tuple[str, str], dict] = {}


@pytest.fixture(scope="module")
def copies(demo, tmp_path_factory):
    return layout_copies(demo, tmp_path_factory.mktemp("layouts"))


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MMBENCH_CACHE", str(tmp_path / "cache"))


def _task(name):
    return next(t for t in all_tasks() if t.name == name)


def _questions(items) -> dict:
    return {it.id: (it.question, tuple(it.choices), it.answer, it.dimension_id) for it in items}


def test_every_task_declares_layouts_with_a_demo_writer(copies):
    for task in all_tasks():
        assert task.layouts and len({x.key for x in task.layouts}) == len(task.layouts), task.name
        missing = [x.key for x in task.layouts if x.key not in copies.get(task.name, {})]
        assert not missing, f"{task.name}: no demo writer for layout(s) {missing} (mmbench_lib/demo/copies.py)"


@pytest.mark.parametrize("name, key", CASES)
def test_probe_and_loader_read_each_layout(name, key, copies, monkeypatch):
    task = _task(name)
    args, env = copies[name][key]
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert task.probe(args[task.data_key], None, args) == key
    check_data(name, {"benchmark": name, **args})  # the pre-run check passes
    items = task.load_items(**args)
    assert items and not [it.id for it in items if it.meta.get("media_error")]
    first_args, first_env = copies[name][task.layouts[0].key]
    for k, v in first_env.items():
        monkeypatch.setenv(k, v)
    want = _questions(task.load_items(**first_args))
    got = _questions(items)
    assert got == {k: want[k] for k in got}, f"{name} {key}: other questions than the {task.layouts[0].key} layout"
    assert len(got) == len(want) or key == "tsv"  # a VLMEvalKit TSV holds a part (SEED: image questions)
    TABLE.setdefault((name, key), {})["pre-run check"] = "ok"


@pytest.mark.slow
@pytest.mark.parametrize("name, key", CASES)
def test_mmbench_run_limit_2_on_each_layout(name, key, copies, tmp_path):
    task = _task(name)
    args, env = copies[name][key]
    outputs = tmp_path / "outputs"
    run_id = f"{name}-{key}"
    cmd = [sys.executable, "-m", "mmbench_lib.cli", "run", NOTEBOOK[task.protocol], "-p", "benchmark", name,
           "--limit", "2", "--run-id", run_id]
    for k, v in args.items():
        cmd += ["-p", k, json.dumps(v) if isinstance(v, dict) else v]
    cmd += ["--model", "random"] if task.protocol == "ranking" else ["-p", "baseline", "random"]
    if "frames_root" in task.layout(key).extra:  # the 2 items scored are then videos read from the frame folders
        cmd += ["-p", "dimensions", "video"]
    full_env = {k: v for k, v in os.environ.items() if k != "MMBENCH_DEBUG"}
    full_env.update(env, PYTHONPATH=str(ROOT), MMBENCH_OUTPUTS=str(outputs), HF_HUB_OFFLINE="1",
                    MMBENCH_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = outputs / run_id if task.protocol == "ranking" else outputs / run_id / "random"
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert metrics["counts"]["items"] == 2, metrics["counts"]
    recorded = manifest["data"] if task.protocol == "ranking" else manifest
    assert recorded[task.data_key] == args[task.data_key]
    TABLE.setdefault((name, key), {})["--limit 2 run"] = f"ok (n={metrics['counts']['items']})"
    print(f"| {name} | {key} | pre-run check ok | --limit 2 run ok, n={metrics['counts']['items']} |")


def test_shared_readers_name_no_benchmark():
    """``tasks/copies/`` holds only shared readers: no string in it is a registered task's name or alias."""
    import ast

    from mmbench_lib.tasks.base import task_names

    names = set(task_names(aliases=True))
    for path in sorted((ROOT / "mmbench_lib" / "tasks" / "copies").glob("*.py")):
        consts = {n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert not consts & names, f"{path.name} names {sorted(consts & names)}"


def test_loader_args_refuse_a_data_path_beside_the_demo_set(demo):
    from mmbench_lib.pipeline.runs import loader_args

    with pytest.raises(ValueError, match="frames_root is given but annotation_file is empty"):
        loader_args("seed", "", demo=demo, frames_root="/data/v1_video", image_root="")
    assert loader_args("seed", "", demo=demo, frames_root="", video_roots={})["annotation_file"] == demo["seed"]["annotation_file"]


def test_seed_v1_image_only_needs_no_video_folders(demo):
    """Issue 35 on-ramp: the full-run params file names video folders this machine lacks; an image-only
    selection never reads them, so they are not checked; a selection with video still is."""
    from mmbench_lib.runner import ParameterError, check_params, notebook_parameters, read_params

    nb = ROOT / NOTEBOOK["ranking"]
    params = read_params([str(ROOT / "params" / "10_seed_bench" / "seed1_full_llava15.yaml")])
    assert not Path(params["video_roots"]["ssv2"]).exists()
    params.update(annotation_file=demo["seed"]["annotation_file"], image_root=demo["seed"]["image_root"])
    known = notebook_parameters(nb)
    for image_only in ("image", [1, 9]):
        check_params(nb.name, {**params, "dimensions": image_only}, known)
    for with_video in ("all", "video", [1, 10]):
        with pytest.raises(ParameterError, match=r"video_roots\['ssv2'\]='/data/ssv2/videos': no such folder"):
            check_params(nb.name, {**params, "dimensions": with_video}, known)
