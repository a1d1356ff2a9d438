"""Which benchmarks a reproduction audit (``mmbench audit``) can re-score, and with which readers and rules."""
from __future__ import annotations

from types import ModuleType

from mmbench_lib.tasks import mmmu, mmmu_audit, mmmu_pro_audit
from mmbench_lib.tasks.base import get_task

#: benchmark -> module with ``RULES``, ``from_lmms_eval``, ``from_vlmevalkit``, ``with_gold``
AUDITS: dict[str, ModuleType] = {mmmu.BENCHMARK: mmmu_audit, mmmu_pro_audit.BENCHMARK: mmmu_pro_audit}


def audit_rules(benchmark: str) -> ModuleType:
    """The audit module of ``benchmark`` (a name or alias); ValueError naming the ones supported."""
    name = get_task(benchmark).name
    if name not in AUDITS:
        raise ValueError(f"the audit supports {', '.join(sorted(AUDITS))}, not {benchmark!r}")
    return AUDITS[name]


def audited() -> list[str]:
    return sorted(AUDITS)
