"""Answer ranking's likelihood arithmetic, by scorer name (SEED-Bench §3.4, SEED-Bench-2 §3.4).

``reference`` runs one forward pass per choice; ``shared-prefix`` (``engine``) reads each prefix
once and gives the same log-likelihoods. ``clip_judge`` scores SEED-2's image outputs. Scorers work
on a transformers model and ``Prepared`` tensors; the adapters in ``mmbench_lib.models`` call them.

The names (``REDUCTIONS``, ``scorer_names()``) import no torch, so parameters are checked in
well under a second; the scorers themselves are imported on first use.
"""
from mmbench_lib.scoring.names import BUILTIN_SCORERS, REDUCTIONS

#: scorers added by ``register_scorer`` (name -> class)
_REGISTERED: dict = {}

#: public names of the torch-backed modules, imported on first access
_LAZY = {"SharedPrefixScorer": "engine", "ReferenceScorer": "reference", "Prepared": "reference",
         "choice_scores": "reference", "extend_inputs": "reference", "pick": "reference"}


def register_scorer(name: str, cls) -> None:
    _REGISTERED[name] = cls


def scorer_names() -> list[str]:
    """Every scorer name a run may give (built-in and registered), without importing torch."""
    return sorted({*BUILTIN_SCORERS, *_REGISTERED})


def _scorer_class(name: str):
    if name in _REGISTERED:
        return _REGISTERED[name]
    module, cls = BUILTIN_SCORERS[name]
    return getattr(_module(module), cls)


def get_scorer(name: str = "reference"):
    if name not in scorer_names():
        raise ValueError(f"unknown scorer {name!r}; available: {scorer_names()}")
    return _scorer_class(name)()


def _module(name: str):
    if name == "engine":
        from mmbench_lib.scoring import engine
        return engine
    from mmbench_lib.scoring import reference
    return reference


def __getattr__(name: str):
    if name == "SCORERS":  # scorers by the name a run's ``scorer`` parameter gives (imports torch)
        return {n: _scorer_class(n) for n in scorer_names()}
    if name in _LAZY:
        return getattr(_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["REDUCTIONS", "SCORERS", "Prepared", "ReferenceScorer", "SharedPrefixScorer", "choice_scores",
           "extend_inputs", "get_scorer", "pick", "register_scorer", "scorer_names"]
