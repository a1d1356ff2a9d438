"""One module per benchmark: field names, dimension/subject tables, prompts, groups."""
from __future__ import annotations

from importlib import import_module

MODULES = {"seed": "seed1", "seed1": "seed1", "seed2": "seed2", "mmmu": "mmmu", "cmmmu": "cmmmu"}


def get(name: str):
    """The benchmark module for ``seed``/``seed1``, ``seed2``, ``mmmu`` or ``cmmmu``."""
    try:
        return import_module(f"{__name__}.{MODULES[name]}")
    except KeyError:
        raise ValueError(f"unknown benchmark {name!r}; known: {sorted(MODULES)}") from None
