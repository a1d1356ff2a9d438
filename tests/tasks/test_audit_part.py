"""The audit inside the task contract (issue 38 item 5): a typed audit part of ``Task`` (``AuditPart``), its form
checked by ``Task.problems()`` at registration and its content on the audit's first use; auditable benchmarks are
discovered from the registered tasks; a task without a part is not auditable, in one line."""
import pytest

from mmbench_lib.tasks import audits
from mmbench_lib.tasks.base import AuditPart, all_tasks, get_task


def test_every_auditable_task_declares_a_part_that_satisfies_the_contract():
    parts = {t.name: t.audit for t in all_tasks() if t.audit is not None}
    assert set(parts) == set(audits.audited()) >= {"mmmu", "mmmu-pro", "cmmmu", "seed", "seed2", "seed2plus", "mmstar", "mmb"}
    for name, part in parts.items():
        assert part.problems(name) == [] and get_task(name).problems() == []
        assert audits.audit_rules(name) is part.load()


class _RecognisesOnly:
    """A part with its rule set and peer readers that recognises official files it cannot read."""
    BENCHMARK, RULES = "seed", {"official": (len, "")}
    from_lmms_eval = from_vlmevalkit = with_gold = staticmethod(len)

    @staticmethod
    def official_format(path) -> bool:
        return True


RECOGNISES_ONLY = _RecognisesOnly()


@pytest.mark.parametrize("part,name,needle", [
    (AuditPart("mmbench_lib.tasks.mmmu_audit"), "seed", "is for 'mmmu', not 'seed'"),
    (AuditPart("mmbench_lib.tasks.letters"), "mmmu", "lacks RULES"),
    (AuditPart("mmbench_lib.tasks.seed_audit:NOPE"), "seed", "does not load"),
    (AuditPart("tests.tasks.test_audit_part:RECOGNISES_ONLY"), "seed", "recognises official files (official_format) "
                                                                       "but has no reader (read_official)"),
])
def test_a_wrong_part_is_named(part, name, needle):
    assert any(needle in p for p in part.problems(name))


def test_a_missing_module_is_caught_at_registration_without_importing():
    assert AuditPart("mmbench_lib.tasks.no_such_audit").form_problems() == [
        "audit part 'mmbench_lib.tasks.no_such_audit': no module 'mmbench_lib.tasks.no_such_audit'"]


def test_a_task_without_an_audit_part_is_not_auditable_in_one_line(monkeypatch):
    monkeypatch.setattr(audits, "AUDITS", {k: v for k, v in audits.AUDITS.items() if k != "seed2plus"})
    with pytest.raises(ValueError) as e:
        audits.audit_rules("seed2plus")
    assert "seed2plus has no audit part (Task.audit): not auditable" in str(e.value) and "\n" not in str(e.value)
