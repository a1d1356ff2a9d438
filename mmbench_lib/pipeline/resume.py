"""The one resume guard of both protocols: a run folder holding rows is continued only with what made them.

The folder's manifest is read as a run record (``core.record.from_manifest``; older manifests upgraded) and compared
with the call's through the one comparison, ``core.record.differences``: first what each wrote it was made with
(benchmark, model, recipe (ranking), generation settings, option order, the path video items took), then the
``RunSpec.identity()`` (recorded by runs since the spec; older runs' flat config upgraded to the spec it describes,
:func:`upgraded`). Ranking and generation runs call :func:`check_same_run`; any
difference is refused with one line naming each difference. (``mmbench run`` checks the notebook's parameters
against the folder's ``params.yaml`` before the kernel starts, ``runner.check_resume``; this is the check of the run
itself.)
"""
from __future__ import annotations

from mmbench_lib.core.record import RunRecord, call_record, differences, from_manifest
from mmbench_lib.core.store import RunStore
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.tasks.recipes import Recipe


def identity(man: dict) -> dict:
    """What a manifest (or a call's manifest fields) records its rows were made with
    (``core.record.RunRecord.made``; a recipe recorded before a field existed had its default)."""
    return from_manifest(man).made(Recipe().to_dict())


def upgraded(rec: RunRecord, out_dir=None) -> RunRecord:
    """``rec`` with its ``RunSpec.identity()``: recorded (runs since the spec), or that of the spec its flat config
    describes (older runs: a field the config did not record has the spec's default, as it had then). A config this
    version no longer reads as a spec is a ``ValueError`` naming why."""
    if rec.spec_identity is not None:
        return rec
    if not rec.params:
        raise ValueError("no recorded config")
    try:
        spec = RunSpec.from_params(**{**rec.params, "out_dir": out_dir or rec.params.get("out_dir") or "."})
    except (ValueError, TypeError, KeyError) as e:
        raise ValueError(f"recorded config ({' '.join(str(e).split())})") from None
    return from_manifest({**rec.raw, "identity": spec.identity()})


#: how resume words a difference users see (the rest: ``field old (this call: new)``)
_WORDING = {"recipe": "recipe {old} (this call: {new})", "generation": "generation {old} (this call: {new})",
            "options": "option order {old} (this call: {new})",
            "video_input": "video items went in as {old!r} (this call: {new!r}; use video_input={old!r} to resume)"}


def _words(name: str, old, new) -> str | None:
    if name == "video_input" and (new in (None, "none") or old in (None, new, "none")):
        return None  # a run without video items took no path
    return _WORDING.get(name, name + " {old!r} (this call: {new!r})").format(old=old, new=new)


def check_same_run(store: RunStore, now: dict, spec_identity: dict | None = None) -> None:
    """Refuse to add rows made otherwise to ``store``: ``now`` is what the call makes its rows with (the keys of
    :func:`identity`; generation runs give no recipe), ``spec_identity`` the call's ``RunSpec.identity()``,
    compared with the one the manifest records (an older run's flat config upgraded, :func:`upgraded`). A store
    without rows is free."""
    old = from_manifest(store.manifest())
    if not old.raw or not store.rows():
        return
    call = call_record(now, spec_identity)
    diff = differences(old, call, (), over="made", word=_words, recipe_defaults=Recipe().to_dict())
    if not diff and spec_identity is not None:
        try:
            old = upgraded(old, store.dir)
        except ValueError:  # a config of an earlier version: what it wrote it was made with was compared above
            pass
        else:
            diff = differences(old, call, (), over="spec", where=False, word=_words)
    if diff:
        raise ValueError(f"{store.dir} holds a run of benchmark {old.benchmark!r}, model {old.model.get('name')!r} "
                         f"made with other settings: {'; '.join(diff)}. Use another run_id, or the same settings to "
                         f"resume.")
