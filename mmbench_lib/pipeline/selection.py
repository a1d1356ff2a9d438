"""Which items a run asks for (its *selection*) is part of the run's identity.

A run folder's ``metrics.json`` is computed over the items the run selects; resuming it with a
narrower or different selection (``limit``, ``dimensions``, ``subjects``, ``split``, ``level``,
``part``, ``version``) would rewrite its metrics over another item set while ``predictions.jsonl``
keeps every row. So a resume must ask for the same selection; the one change allowed is a larger
``limit`` (the first N items of the same list are a prefix of the first M > N: the run extends).
"""
from __future__ import annotations

#: the parameters / config fields that choose items (flat, or in a ranking config's ``data``)
SELECTION_KEYS = ("limit", "dimensions", "subjects", "categories", "split", "level", "part", "version")
_ALL = "all"


def _norm(key: str, value):
    if key == "limit":
        return None if value in (0, None) else value
    if key in ("dimensions", "subjects", "categories"):
        if value in (None, "", _ALL, [], ()):
            return _ALL
        if isinstance(value, (list, tuple)):
            return sorted(str(v) for v in value)
        return [str(value)] if key != "dimensions" or isinstance(value, int) else str(value)
    if key in ("level", "part", "version", "split"):
        return value or None
    return value


def selection_of(values: dict) -> dict:
    """The selection fields of a parameters dict or a manifest's ``config`` (its ``data`` filters too),
    normalised: ``limit`` 0 is ``None`` (all), ``"all"``/empty lists are ``"all"``, lists are sorted."""
    data = values.get("data") if isinstance(values.get("data"), dict) else {}
    out = {}
    for key in SELECTION_KEYS:
        if key in values:
            out[key] = _norm(key, values[key])
        elif key in data:
            out[key] = _norm(key, data[key])
    if isinstance(values.get("data"), dict) and values["data"]:
        out.setdefault("dimensions", _ALL)  # a ranking config: no filter given is every dimension
    return out


def selection_change(old: dict, new: dict) -> tuple[str, object, object] | None:
    """The first selection field whose new value is not the old one, as ``(field, old, new)``; a larger
    (or no) ``limit`` is allowed. Only fields both sides record are compared. ``None``: same selection."""
    a, b = selection_of(old), selection_of(new)
    for key in SELECTION_KEYS:
        if key not in a or key not in b or a[key] == b[key]:
            continue
        if key == "limit" and (b[key] is None or (a[key] is not None and b[key] >= a[key])):
            continue  # a wider limit: the same items and more
        return key, a[key], b[key]
    return None


def describe_change(where: str, change: tuple[str, object, object]) -> str:
    key, old, new = change
    show = lambda v: "all" if v is None else v  # noqa: E731 - limit None means every item
    return (f"{where} holds predictions of the selection {key}={show(old)!r}; this run asks for {key}={show(new)!r}, "
            f"which would rewrite its metrics over another item set: use another run id, or the same selection "
            f"to resume (a larger limit extends the run)")


def check_same_selection(where, old_config: dict | None, new_config: dict) -> None:
    """Raise a one-line ``ValueError`` when a store holding rows made with ``old_config`` (its manifest's
    ``config``) is resumed with another selection (``new_config``, ``RunSpec.params()``)."""
    change = selection_change(old_config or {}, new_config)
    if change:
        raise ValueError(describe_change(str(where), change))
