"""The demo runs of any task, from the task itself (``Task.demo_args``, its protocol and splits): what notebook 40
shows as "ours" for every benchmark its tables hold, so adding a benchmark adds nothing to the notebook.

A ranking task: SmolLM2 (text only, ``seed1-ppl``, summed log-likelihood) and Random Choice on its demo set, the
filters of its ``data_defaults`` that select something (SEED-2: level L2; ``all`` selects nothing); a generation
task: the Random Choice baseline and, where the task has a validation split to learn from, Frequent Choice, on
that split (else its default split). SEED v1, SEED-2, MMMU and CMMMU get the runs :func:`demo.runs.demo_runs` makes
(the same folders and identity: a finished one is reused, never rerun).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mmbench_lib.analysis import reader
from mmbench_lib.demo import ensure_demo
from mmbench_lib.pipeline import runs as runs_mod
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.reports import subruns
from mmbench_lib.tasks.base import get_task

#: the models of a task's demo runs, by its protocol (generation: baselines, no model to load)
MODELS = {"ranking": ("smollm2", "random"), "generation": ("random", "frequent")}


def models(task) -> list[str]:
    """The demo runs' models of ``task``: Frequent Choice only where a validation split holds its answers."""
    return [m for m in MODELS[task.protocol] if m != "frequent" or task.validation_split]


def demo_spec(task, data: dict, model: str, folder: Path, progress: bool = False) -> RunSpec:
    """The spec of ``model``'s demo run of ``task`` (module doc) in ``folder``; ``data``: ``ensure_demo``'s paths."""
    params = {"demo": True, "benchmark": task.name, "model": model}
    if task.protocol == "ranking":
        filters = {k: v for k, v in task.data_defaults.items() if v != "all"}
        return RunSpec.from_params(task.name, folder, data=task.demo_args(data, **filters), model=model,
                                   recipe="seed1-ppl", reduction="sum", scorer="shared-prefix", parameters=params,
                                   progress=progress)
    split = task.validation_split or task.default_split
    return RunSpec.from_params(task.name, folder, source=task.demo_args(data, split=split)["source"], model=model,
                               baseline=model, split=split, parameters=params, progress=progress)


def task_demo_runs(benchmarks: Sequence[str], data_dir="data/demo", run_id: str = "demo_runs",
                   progress: bool = False, reuse: bool = True) -> list[Path]:
    """Run folders of the demo runs of ``benchmarks`` (module doc), ``outputs/<run_id>/<benchmark>__<model>``; a
    finished run of the same identity elsewhere in ``outputs/`` is used as it is when ``reuse``
    (``reports.subruns.find_same_run``); a second call resumes: nothing is scored twice."""
    data = ensure_demo(data_dir)
    root = runs_mod.run_dir(run_id)
    out = []
    for bench in benchmarks:
        task = get_task(bench)
        for model in models(task):
            config = demo_spec(task, data, model, root / f"{task.name}__{model}", progress)
            ids = [it.id for it in config.select(runs_mod.load_items(task.name, config.task.load_args()))]
            same = subruns.find_same_run(config, ids) if reuse else None
            if same is not None and same.resolve() != config.out_dir.resolve():
                print(f"{task.name} {model}: reusing {reader.run_key(same)} (the same run: model, recipe, data, "
                      "selection)", flush=True)
                out.append(same)
                continue
            runs_mod.evaluate(config)
            out.append(Path(config.out_dir))
    return out
