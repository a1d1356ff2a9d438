"""The reproduction audit's demo inputs: this suite's own run on a benchmark's demo set, its responses written as an
lmms-eval sample log and a VLMEvalKit prediction file, and the same responses behind a misleading thinking trace.

What a benchmark's audit module (``tasks/audits.py``) gives the demo: ``DEMO_FILTERS`` (the demo data's filters,
e.g. the split), ``DEMO_RUN`` (more ``RunSpec.from_params`` keywords of the own run), ``DEMO_FILES`` (the peer files' names),
``lmms_eval_rows(items)``, ``vlmevalkit_rows(items)`` and ``misleading_trace(item)``."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from mmbench_lib.demo import ensure_demo
from mmbench_lib.pipeline import audit as audit_mod
from mmbench_lib.pipeline import runs as runs_mod
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.pipeline.params import demo_args
from mmbench_lib.tasks.audits import audit_rules
from mmbench_lib.tasks.protocols import protocol_for


def own_run(out: Path, data_dir="data/demo", model: str = "random", progress: bool = False,
            benchmark: str = "mmmu") -> Path:
    """A run of this suite (the Random Choice baseline by default: no model to load) on ``benchmark``'s demo set
    (its audit module's ``DEMO_FILTERS`` and ``DEMO_RUN``), in ``out/own_run`` (resumed when there)."""
    rules, folder = audit_rules(benchmark), Path(out) / "own_run"
    data = demo_args(rules.BENCHMARK, ensure_demo(data_dir), **rules.DEMO_FILTERS)
    # generation tasks take the loader's keywords flat and the baseline by name; ranking tasks a data dict and the
    # baseline as the model
    how = {**data, "baseline": model} if protocol_for(rules.BENCHMARK).generates else {"data": data}
    runs_mod.evaluate(RunSpec.from_params(rules.BENCHMARK, folder, **how, model=model,
                                          **rules.DEMO_RUN, parameters={"demo": True, "model": model},
                                          progress=progress))
    return folder


def write_peer_files(run_folder: Path, out: Path, benchmark: str = "mmmu") -> dict[str, Path]:
    """The run's responses as the benchmark's lmms-eval sample log and VLMEvalKit file (``DEMO_FILES``) and
    ``thinking.jsonl`` (each response behind a trace naming a wrong option: ``misleading_trace``)."""
    rules = audit_rules(benchmark)
    items, _ = audit_mod.read_items(run_folder, benchmark)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"lmms-eval": out / rules.DEMO_FILES["lmms-eval"], "vlmevalkit": out / rules.DEMO_FILES["vlmevalkit"],
             "thinking": out / "thinking.jsonl"}
    with open(paths["lmms-eval"], "w", encoding="utf-8") as f:
        for row in rules.lmms_eval_rows(items):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    pd.DataFrame(rules.vlmevalkit_rows(items)).to_csv(paths["vlmevalkit"], sep="\t", index=False)
    with open(paths["thinking"], "w", encoding="utf-8") as f:
        for it in items:
            f.write(json.dumps({"id": it["id"], "response": rules.misleading_trace(it)}, ensure_ascii=False) + "\n")
    return paths
