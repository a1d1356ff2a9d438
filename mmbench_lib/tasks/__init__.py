"""One module per benchmark, each registering a :class:`~mmbench_lib.tasks.base.Task` (the contract:
``tasks/base.py``); helpers shared by them (parsers, recipes, options, letters)."""
from __future__ import annotations

from mmbench_lib.tasks.base import (  # noqa: F401 - the registry is the package's interface
    GenerationTask, Task, UnknownTask, all_tasks, canonical_name, get_task, is_task, load_items, register_task,
    task_names,
)


def get(name: str):
    """The module of the task registered as ``name`` (kept for older callers; use :func:`get_task`)."""
    return get_task(name).module
