"""Which benchmarks a reproduction audit (``mmbench audit``) can re-score, and with which readers and rules."""
from __future__ import annotations

from types import ModuleType
from typing import Any

from mmbench_lib.tasks import cmmmu_audit, mmmu, mmmu_audit, mmmu_pro_audit, seed_audit
from mmbench_lib.tasks.base import get_task

#: benchmark -> module (or object: one module may serve several benchmarks) with ``RULES``, ``from_lmms_eval``,
#: ``from_vlmevalkit``, ``with_gold``
AUDITS: dict[str, ModuleType | Any] = {mmmu.BENCHMARK: mmmu_audit, mmmu_pro_audit.BENCHMARK: mmmu_pro_audit,
                                       cmmmu_audit.BENCHMARK: cmmmu_audit, **seed_audit.AUDITS}


def audit_rules(benchmark: str) -> ModuleType | Any:
    """The audit module of ``benchmark`` (a name or alias); ValueError naming the ones supported."""
    name = get_task(benchmark).name
    if name not in AUDITS:
        raise ValueError(f"the audit supports {', '.join(sorted(AUDITS))}, not {benchmark!r}")
    return AUDITS[name]


def audited() -> list[str]:
    return sorted(AUDITS)
