"""The one resume guard of both protocols: a run folder holding rows is continued only with what made them.

``identity(manifest)`` reads, from a run's manifest, what decides the meaning of a stored row: benchmark,
model, recipe (ranking), generation settings, option order and the path video items took. Ranking and
generation runs call :func:`check_same_run` with the identity of the call; any difference is refused with
one line naming each difference. (``mmbench run`` checks the notebook's parameters against the folder's
``params.yaml`` before the kernel starts, ``runner.check_resume``; this is the check of the run itself.)
"""
from __future__ import annotations

from mmbench_lib.core.store import RunStore
from mmbench_lib.tasks.recipes import Recipe


def identity(man: dict) -> dict:
    """The fields of a manifest that decide what a stored row means (missing fields as runs before them had)."""
    recipe = man.get("recipe")
    if isinstance(recipe, dict):  # a run recorded before a recipe field existed had its default
        recipe = {**Recipe().to_dict(), **recipe}
    video = man.get("video_input")
    generation = man.get("generation")
    if isinstance(generation, dict) and "baseline" in generation:  # generation runs before prompt modes: official
        generation = {**generation, "prompt_mode": generation.get("prompt_mode", "official")}
    return {"benchmark": man.get("benchmark"), "model": (man.get("model") or {}).get("name"), "recipe": recipe,
            "generation": generation, "options": man.get("options"),
            # runs before this field put video frames in as images
            "video_input": (video or {}).get("used", "frames") if "recipe" in man else None}


_WORDING = {"recipe": "recipe {old} (this call: {new})", "generation": "generation {old} (this call: {new})",
            "options": "option order {old} (this call: {new})",
            "video_input": "video items went in as {old!r} (this call: {new!r}; use video_input={old!r} to resume)"}


def differences(old: dict, now: dict) -> list[str]:
    """What ``now`` changes of ``old`` (both :func:`identity` dicts), worded for one line."""
    out = []
    for key, new in now.items():
        was = old.get(key)
        if key == "video_input" and (new in (None, "none") or was in (None, new, "none")):
            continue  # a run without video items took no path
        if was != new:
            out.append(_WORDING.get(key, key + " {old!r} (this call: {new!r})").format(old=was, new=new))
    return out


#: identity fields that say where the data is, not what it is (a run folder may be resumed from another checkout)
WHERE = ("task.data.", "judges.generated_dir")


def spec_changes(old: dict, new: dict, prefix: str = "", where: bool = True) -> list[str]:
    """The dotted fields of two ``RunSpec.identity()`` dicts that differ, worded ``field old -> new``;
    ``where=False`` leaves out the paths of the data (:data:`WHERE`; their contents are hashed elsewhere)."""
    out = []
    for key in sorted(set(old) | set(new)):
        name, a, b = prefix + str(key), old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict) and a and b and name != "selection.options":
            out += spec_changes(a, b, name + ".", where)
        elif a != b and (where or not (name.startswith(WHERE) and isinstance(a, str) and isinstance(b, str)
                                       and ("/" in a or "/" in b))):
            out.append(f"{name} {a!r} (this call: {b!r})")
    return out


def check_same_run(store: RunStore, now: dict, spec_identity: dict | None = None) -> None:
    """Refuse to add rows made otherwise to ``store``: ``now`` is the call's identity (the keys of
    :func:`identity` it decides; generation runs give no recipe), ``spec_identity`` the call's
    ``RunSpec.identity()``, compared with the one the manifest records (runs since the spec). A store without
    rows is free."""
    old_man = store.manifest()
    if not old_man or not store.rows():
        return
    old = identity(old_man)
    diff = differences(old, now)
    if not diff and spec_identity is not None and isinstance(old_man.get("identity"), dict):
        diff = spec_changes(old_man["identity"], spec_identity, where=False)
    if diff:
        raise ValueError(f"{store.dir} holds a run of benchmark {old['benchmark']!r}, model {old['model']!r} made with "
                         f"other settings: {'; '.join(diff)}. Use another run_id, or the same settings to resume.")
