"""The two evaluation protocols as objects, so code outside ``tasks/`` asks a protocol instead of comparing names.

- ``ranking`` (SEED v1 / SEED-2 / SEED-2-Plus, SEED-Bench §4: each option's likelihood, the best one taken;
  notebooks 10/11): a run's data is its loader's keyword arguments (``annotation_file``, filters).
- ``generation`` (MMMU §4.1, CMMMU §4.1, MMMU-Pro §3: a response generated, then read by the official parser;
  notebook 20): a run's data is ``source`` (hub id or local folder), ``subjects`` and ``cache_dir``; the split
  is the run's own field.

``max_new_tokens`` is the protocol's default cap when neither the run nor its prompt mode sets one: 16 for
generation (notebook 20 and docs/protocols.md §5, "official (default): 16"), 32 for a ranking recipe that
generates a letter (lmms-eval-gen / vlmevalkit-gen, as the library had it); neither changes a parity result.
"""
from __future__ import annotations

from dataclasses import dataclass

from mmbench_lib.tasks.base import get_task


@dataclass(frozen=True)
class Protocol:
    name: str
    generates: bool  # a response is generated per item (else each option is ranked)
    max_new_tokens: int
    #: the run data keys of this protocol (``None``: the task loader's own keyword arguments)
    data_keys: tuple[str, ...] | None
    #: the data key a user must give (generation: the source), and the notebook parameter that names it
    required: tuple[str, str]

    def check_data(self, task, data: dict) -> str | None:
        """Why ``data`` (a run's one data dict) cannot load ``task``'s items, as ``"<key>: why"``, or ``None``."""
        if self.data_keys is None:
            if not data:
                return f"{task.name} needs its loader's arguments (annotation_file, ...)"
            unknown = sorted(set(data) - set(task.data_parameters()))
            return f"{task.name}'s loader takes no {unknown} (it takes {list(task.data_parameters())})" if unknown else None
        unknown = sorted(set(data) - set(self.data_keys))
        if unknown:
            return f"{task.name} reads {list(self.data_keys)} (and the split), not {unknown}"
        key = self.required[0]
        if data.get(key) is None or not str(data.get(key)).strip():
            return f"{key}: {task.name} needs a hub id or a local folder"
        return None


RANKING = Protocol("ranking", False, 32, None, ("annotation_file", "annotation_file"))
GENERATION = Protocol("generation", True, 16, ("source", "subjects", "cache_dir"), ("source", "source"))
PROTOCOL_OBJECTS = {p.name: p for p in (RANKING, GENERATION)}


def protocol_for(benchmark) -> Protocol:
    """The protocol object of a benchmark name (or alias, or task)."""
    return PROTOCOL_OBJECTS[get_task(benchmark).protocol]
