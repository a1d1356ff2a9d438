"""Rescore model outputs saved in the official formats, with the official scorers (``mmbench score-responses``).

Each task scores its own official files: ``Task.score_official`` (MMMU ``tasks/mmmu_official.py``, CMMMU
``tasks/cmmmu_official.py``, MMMU-Pro, MMStar); a task naming another's ``official_output`` format is scored by that
task (``Task.format_owner``). This module keeps the generic part: which tasks are scorable, what ``--responses`` and
``--answers`` are, the ``--out`` folder, the written files and the printed table. ``score_mmmu_outputs`` and
``score_cmmmu_outputs`` are the tasks' scorers under their former names.

More: docs/modules.md, ``mmbench_lib/pipeline/rescoring.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

from mmbench_lib.core.outdir import check_out
from mmbench_lib.core.store import write_json_atomic
from mmbench_lib.tasks.base import all_tasks, get_task
from mmbench_lib.tasks.cmmmu_official import score_outputs as score_cmmmu_outputs  # noqa: F401 (former name)
from mmbench_lib.tasks.mmmu_official import MMMU_QUESTION_TYPES, MMMU_VARIANTS  # noqa: F401 (former names)
from mmbench_lib.tasks.mmmu_official import score_outputs as score_mmmu_outputs  # noqa: F401 (former name)

__all__ = ["score_responses", "scorable", "format_help", "write_outputs", "print_table"]


def format_help(task) -> tuple[str, str]:
    """What ``--responses`` and ``--answers`` are for the task's format (its format owner's words)."""
    return task.format_owner().official_output_help


def score_responses(benchmark: str, responses, answers=None, questions=None, **kw) -> tuple[list[dict], dict]:
    """Score official-format responses of ``benchmark`` with its official scorer (``Task.score_official``)."""
    task = get_task(benchmark)
    if task.format_owner() is None:
        raise ValueError(f"score-responses supports {', '.join(t.name for t in scorable())}, not {benchmark!r}")
    rows, summary = task.score_official(responses, answers, questions, **kw)
    return rows, {"benchmark": task.name, **summary}


def scorable() -> list:
    """The tasks whose official response files can be rescored here."""
    return [t for t in all_tasks() if t.format_owner() is not None]


def check_out_folder(out, writes=("predictions.jsonl", "summary.json"), suggest: str = "rescored") -> Path:
    """``--out``: a folder that exists or can be made, holding no run and none of the files written there
    (``core.outdir.check_out``: one line naming a fresh folder instead); checked before any work."""
    return check_out(out, writes, suggest)


def write_outputs(rows: list[dict], summary: dict, out) -> tuple[Path, Path]:
    """``out/predictions.jsonl`` (one row per item) and ``out/summary.json``."""

    out = check_out_folder(out)
    out.mkdir(parents=True, exist_ok=True)
    pred = out / "predictions.jsonl"
    with open(pred, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    write_json_atomic(out / "summary.json", summary)
    return pred, out / "summary.json"


def print_table(summary: dict) -> None:
    """The official-style table (name, number of items, accuracy x100) and the counts."""
    print(f"{'':40s} {'num':>6s} {'acc':>6s}")
    for name, v in summary["official"].items():
        num = v.get("num", v.get("entries_num"))
        acc = v["acc"]
        print(f"{name:40s} {num:6d} {100 * acc:6.1f}")
    print("counts: " + ", ".join(f"{k} {v}" for k, v in summary["counts"].items()))
    for w in summary.get("warnings", []):
        print(f"warning: {w}")
