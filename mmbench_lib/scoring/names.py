"""Names a run's parameters may give, without importing torch (checked before any kernel starts)."""

#: the log-likelihood reductions that can decide a ranking: ``sum`` (LAVIS reference) or ``mean``
REDUCTIONS = ("sum", "mean")

#: the built-in scorers: name -> (module of this package, class)
BUILTIN_SCORERS = {"reference": ("reference", "ReferenceScorer"), "shared-prefix": ("engine", "SharedPrefixScorer")}
