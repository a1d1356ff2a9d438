"""Answer ranking's likelihood arithmetic, by scorer name (SEED-Bench §3.4, SEED-Bench-2 §3.4).

``reference`` runs one forward pass per choice; ``shared-prefix`` (``engine``) reads each prefix
once and gives the same log-likelihoods. ``clip_judge`` scores SEED-2's image outputs. Scorers work
on a transformers model and ``Prepared`` tensors; the adapters in ``mmbench_lib.models`` call them.
"""
from mmbench_lib.scoring.engine import SharedPrefixScorer
from mmbench_lib.scoring.reference import REDUCTIONS, Prepared, ReferenceScorer, choice_scores, extend_inputs, pick

#: scorers by the name a run's ``scorer`` parameter gives (``register_scorer`` adds one)
SCORERS = {"reference": ReferenceScorer, "shared-prefix": SharedPrefixScorer}


def register_scorer(name: str, cls) -> None:
    SCORERS[name] = cls


def get_scorer(name: str = "reference"):
    try:
        return SCORERS[name]()
    except KeyError:
        raise ValueError(f"unknown scorer {name!r}; available: {sorted(SCORERS)}") from None


__all__ = ["REDUCTIONS", "SCORERS", "Prepared", "ReferenceScorer", "SharedPrefixScorer", "choice_scores",
           "extend_inputs", "get_scorer", "pick", "register_scorer"]
