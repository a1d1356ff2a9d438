"""Which benchmarks a reproduction audit (``mmbench audit``) can re-score: the tasks with an audit part
(``Task.audit``, checked by ``Task.problems()``), discovered the way tasks are. A task without one is not auditable."""
from __future__ import annotations

from typing import Any

from mmbench_lib.tasks.base import all_tasks, get_task


class _Audits(dict):
    """benchmark -> its loaded audit part (module or object with ``RULES``, ``from_lmms_eval``, ``from_vlmevalkit``,
    ``with_gold``), filled from the registered tasks on first use."""

    def _fill(self) -> None:
        if not self.get("__filled__"):
            for t in all_tasks():
                if t.audit is not None:
                    bad = t.audit.problems(t.name)
                    if bad:
                        raise TypeError(f"task {t.name!r}: {'; '.join(bad)}")
                    dict.__setitem__(self, t.name, t.audit.load())
            dict.__setitem__(self, "__filled__", True)

    def _parts(self) -> dict:
        self._fill()
        return {k: v for k, v in dict.items(self) if k != "__filled__"}

    def __getitem__(self, k):
        return self._parts()[k]

    def __contains__(self, k) -> bool:
        return k in self._parts()

    def __iter__(self):
        return iter(self._parts())

    def __len__(self) -> int:
        return len(self._parts())

    def items(self):
        return self._parts().items()

    def keys(self):
        return self._parts().keys()

    def values(self):
        return self._parts().values()


AUDITS: dict[str, Any] = _Audits()


def audit_rules(benchmark: str) -> Any:
    """The audit part of ``benchmark`` (a name or alias); ValueError, one line, for a task without one."""
    name = get_task(benchmark).name
    if name not in AUDITS:
        raise ValueError(f"{name} has no audit part (Task.audit): not auditable; the audit supports "
                         f"{', '.join(audited())}")
    return AUDITS[name]


def audited() -> list[str]:
    return sorted(AUDITS)
