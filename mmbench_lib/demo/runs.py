"""Runs on the demo sets that the figure notebooks and the error-analysis notebook show as "ours".

Reporting modules read runs; this module makes them (it sits above the reporting layers)."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mmbench_lib.analysis import reader
from mmbench_lib.demo import ensure_demo
from mmbench_lib.pipeline import runs as runs_mod
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.reports import subruns
from mmbench_lib.tasks.base import get_task
from mmbench_lib.tasks.protocols import protocol_for


#: the models of a task's demo runs, by its protocol (generation: baselines, no model to load)
MODELS = {"ranking": ("smollm2", "random"), "generation": ("random", "frequent")}

#: the flat parameters of a ranking task's demo runs besides its data: the quickstart's recipe, summed
#: log-likelihood, the shared-prefix engine
RANKING = {"recipe": "seed1-ppl", "reduction": "sum", "scorer": "shared-prefix"}


def models(task) -> list[str]:
    """The demo runs' models of ``task``: Frequent Choice only where a validation split holds its answers."""
    return [m for m in MODELS[task.protocol] if m != "frequent" or task.validation_split]


def demo_spec(bench: str, model: str, demo: dict, out, **params) -> RunSpec:
    """One demo run's spec: ``model`` on ``bench``'s demo set (``demo``: ``ensure_demo``'s paths) in ``out``. A ranking
    task's set with the filters of its ``data_defaults`` that select something (SEED-2: level L2) under
    :data:`RANKING`; a generation task's validation split (else its default split), ``model`` naming the baseline.
    ``params``: flat parameters that win (e.g. ``baseline``, ``seed``); the run records ``demo``, benchmark, model."""
    task = get_task(bench)
    if protocol_for(bench).generates:
        split = task.validation_split or task.default_split
        setting = {**task.demo_args(demo, split=split), "baseline": model}
    else:
        filters = {k: v for k, v in task.data_defaults.items() if v != "all"}
        setting = {"data": task.demo_args(demo, **filters), **RANKING}
    return RunSpec.from_params(bench, out, model=model, parameters={"demo": True, "benchmark": bench, "model": model},
                               **{**setting, **params})


def demo_runs(benchmarks: Sequence[str], data_dir="data/demo", run_id: str = "demo_runs",
              progress: bool = False, reuse: bool = True) -> list[Path]:
    """Run folders of the demo sets (built if missing) to show as our rows, from the tasks themselves (adding a
    benchmark adds nothing here or to notebook 40): a ranking task's SmolLM2 (text only, ``seed1-ppl``, summed
    log-likelihood; neither model outputs images) and Random Choice, a generation task's Random and (with a
    validation split) Frequent Choice baselines, ``outputs/<run_id>/<benchmark>__<model>``. A finished run in
    ``outputs/`` of the same identity (the quickstart's, ``reports.subruns.find_same_run``) is used as it is when
    ``reuse``; a second call resumes: nothing is scored twice."""
    data = ensure_demo(data_dir)
    root = runs_mod.run_dir(run_id)
    out = []
    for bench in benchmarks:
        task = get_task(bench)
        for model in models(task):
            folder = root / f"{task.name}__{model}"
            config = demo_spec(task.name, model, data, folder, progress=progress)
            same = subruns.find_same_run(config, [it.id for it in config.select(runs_mod.load_items(
                task.name, config.task.load_args()))]) if reuse else None
            if same is not None and same.resolve() != folder.resolve():
                print(f"{task.name} {model}: reusing {reader.run_key(same)} (the same run: model, recipe, data, "
                      "selection)", flush=True)
                out.append(same)
                continue
            runs_mod.evaluate(config)
            out.append(folder)
    return out


#: run id of the error-analysis demo (a SmolLM2 generation run; the name changed when the demo stopped
#: tagging a random-baseline run, so an old folder is never resumed with another model)
ERROR_DEMO_RUN = "error_analysis_demo_smollm2"


def demo_run(data_dir="data/demo", seed: int = 0, max_new_tokens: int = 16, progress: bool = False):
    """``outputs/error_analysis_demo_smollm2``: SmolLM2-135M-Instruct (embedded, text only: the papers'
    blind LLM) answering the MMMU demo validation split by greedy generation, parsed by the official
    rules: a real model's wrong answers to analyse (a random baseline's errors are all "extraction")."""
    out = runs_mod.run_dir(ERROR_DEMO_RUN)
    runs_mod.evaluate(demo_spec("mmmu", "smollm2", ensure_demo(data_dir), out, baseline="none",
                                max_new_tokens=max_new_tokens, seed=seed, progress=progress))
    return out
