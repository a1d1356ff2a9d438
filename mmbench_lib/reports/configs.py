"""The run spec a report notebook starts from: one ``RunSpec`` for any benchmark, from the report's parameter cell
through the same one call as the evaluation notebooks (``pipeline.params.notebook_spec``), the task's data given as
the one mapping ``data`` (its own names, checked by :func:`pipeline.params.with_data`). The reports then vary one
thing (the model, the option order) with ``RunSpec.with_params`` and run each variant as an ordinary stored run."""
from __future__ import annotations

from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.pipeline.params import notebook_spec
from mmbench_lib.tasks.protocols import protocol_for


def base_config(values: dict, out, demo: dict | None = None, parameters: dict | None = None, **fixed) -> RunSpec:
    """A ``RunSpec`` in ``out`` of a report notebook's parameters ``values`` (its globals may be given; ``fixed``:
    flat parameters that win, e.g. the model). Empty values (and 0) mean "not given"; with no ``annotation_file``
    / ``source`` in ``data`` the demo set ``demo`` (``demo.ensure_demo``) is used. ``max_new_tokens`` caps the
    generation benchmarks' responses (a ranking run's generated-letter recipe keeps its protocol's default)."""
    values = {**values, **fixed}
    if not protocol_for(values["benchmark"]).generates:
        values.pop("max_new_tokens", None)  # (as before the spec: the report's cap is for the generation benchmarks)
    return notebook_spec(values, out, demo, parameters=parameters)
