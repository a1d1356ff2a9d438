"""The reproduction audit's demo inputs: this suite's own run on the MMMU demo set, its responses written as an
lmms-eval sample log and a VLMEvalKit prediction file, and the same responses behind a misleading thinking trace."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from mmbench_lib.demo import ensure_demo
from mmbench_lib.pipeline import audit as audit_mod
from mmbench_lib.pipeline import runs as runs_mod
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.tasks import mmmu_audit


def own_run(out: Path, data_dir="data/demo", model: str = "random", progress: bool = False) -> Path:
    """A generation run of this suite (the Random Choice baseline by default: no model to load) on the MMMU demo
    validation split, in ``out/own_run`` (resumed when there)."""
    folder = Path(out) / "own_run"
    runs_mod.evaluate(RunSpec.from_params("mmmu", folder, source=ensure_demo(data_dir)["mmmu"]["source"], model=model,
                                baseline=model, split="validation", parameters={"demo": True, "model": model},
                                progress=progress))
    return folder


def write_peer_files(run_folder: Path, out: Path) -> dict[str, Path]:
    """The run's responses as ``samples_mmmu_val_demo.jsonl`` (lmms-eval), ``demo_MMMU_DEV_VAL.tsv`` (VLMEvalKit) and
    ``thinking.jsonl`` (each response behind a trace naming a wrong option: :func:`mmmu_audit.misleading_trace`)."""
    items, _ = audit_mod.read_items(run_folder, "mmmu")
    out.mkdir(parents=True, exist_ok=True)
    paths = {"lmms-eval": out / "samples_mmmu_val_demo.jsonl", "vlmevalkit": out / "demo_MMMU_DEV_VAL.tsv",
             "thinking": out / "thinking.jsonl"}
    with open(paths["lmms-eval"], "w", encoding="utf-8") as f:
        for i, (it, pred) in enumerate(zip(items, mmmu_audit.lmms_eval_preds(items))):
            f.write(json.dumps(mmmu_audit.lmms_eval_row(i, it, pred), ensure_ascii=False) + "\n")
    pd.DataFrame([mmmu_audit.vlmevalkit_row(i, it) for i, it in enumerate(items)]).to_csv(paths["vlmevalkit"],
                                                                                          sep="\t", index=False)
    with open(paths["thinking"], "w", encoding="utf-8") as f:
        for it in items:
            f.write(json.dumps({"id": it["id"], "response": mmmu_audit.misleading_trace(it)}, ensure_ascii=False) + "\n")
    return paths
