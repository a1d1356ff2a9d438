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


#: what :func:`demo_runs` runs: ranking models for SEED, baselines for MMMU / CMMMU
DEMO_RUNS = {"seed": ["smollm2", "random"], "seed2": ["smollm2", "random"],
             "mmmu": ["random", "frequent"], "cmmmu": ["random", "frequent"]}


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
            params = {"demo": True, "benchmark": bench, "model": model}
            if bench in ("seed", "seed2"):
                config = RunSpec.from_params(bench, folder, data=runs_mod.demo_args(bench, data, level="L2"), model=model,
                                             recipe="seed1-ppl", reduction="sum", scorer="shared-prefix", parameters=params,
                                             progress=progress)
            else:
                config = RunSpec.from_params(bench, folder, source=data[bench]["source" if bench == "mmmu" else "root"],
                                             model=model, baseline=model, split="validation" if bench == "mmmu" else "val",
                                             parameters=params, progress=progress)
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
    runs_mod.evaluate(RunSpec.from_params("mmmu", out, source=ensure_demo(data_dir)["mmmu"]["source"], model="smollm2",
                                          baseline="none", split="validation", max_new_tokens=max_new_tokens, seed=seed,
                                          parameters={"demo": True, "benchmark": "mmmu", "model": "smollm2"},
                                          progress=progress))
    return out
