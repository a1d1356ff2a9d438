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


#: what :func:`demo_runs` runs: ranking models for SEED, baselines for MMMU / CMMMU
DEMO_RUNS = {"seed": ["smollm2", "random"], "seed2": ["smollm2", "random"],
             "mmmu": ["random", "frequent"], "cmmmu": ["random", "frequent"]}


#: the flat parameters of a ranking task's demo runs besides its data: the quickstart's recipe, summed
#: log-likelihood, the shared-prefix engine
RANKING = {"recipe": "seed1-ppl", "reduction": "sum", "scorer": "shared-prefix"}


def demo_spec(bench: str, model: str, demo: dict, out, **params) -> RunSpec:
    """One demo run's spec: ``model`` on ``bench``'s demo set (``demo``: ``ensure_demo``'s paths) in ``out``. A ranking
    task's set at level L2 under :data:`RANKING`; a generation task's validation split, ``model`` naming the baseline.
    ``params``: flat parameters that win (e.g. ``baseline``, ``seed``); the run records ``demo``, benchmark, model."""
    task = get_task(bench)
    if protocol_for(bench).generates:
        setting = {**task.demo_args(demo, split=task.validation_split), "baseline": model}
    else:
        setting = {"data": task.demo_args(demo, level="L2"), **RANKING}
    return RunSpec.from_params(bench, out, model=model, parameters={"demo": True, "benchmark": bench, "model": model},
                               **{**setting, **params})


def demo_runs(benchmarks: Sequence[str], data_dir="data/demo", run_id: str = "demo_runs",
              progress: bool = False, reuse: bool = True) -> list[Path]:
    """Run folders of the demo sets (built if missing) to show as our rows: SmolLM2 (text only,
    ``seed1-ppl``, summed log-likelihood) and Random Choice on SEED v1 and SEED-2 (level L2, as the
    quickstart runs them: neither model outputs images), the Random and Frequent Choice baselines on the
    MMMU and CMMMU validation splits. A finished run in ``outputs/`` of the same identity (the quickstart's,
    ``reports.subruns.find_same_run``) is used as it is when ``reuse``; a second call resumes: nothing is
    scored twice."""
    data = ensure_demo(data_dir)
    root = runs_mod.run_dir(run_id)
    out = []
    for bench in benchmarks:
        for model in DEMO_RUNS[bench]:
            folder = root / f"{bench}__{model}"
            config = demo_spec(bench, model, data, folder, progress=progress)
            same = subruns.find_same_run(config, [it.id for it in config.select(runs_mod.load_items(
                bench, config.task.load_args()))]) if reuse else None
            if same is not None and same.resolve() != folder.resolve():
                print(f"{bench} {model}: reusing {reader.run_key(same)} (the same run: model, recipe, data, selection)",
                      flush=True)
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
