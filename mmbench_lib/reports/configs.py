"""The run spec a report notebook starts from: one ``RunSpec`` for any benchmark, from the same
parameters the evaluation notebooks take (``10_seed_bench`` for SEED / SEED-2 by answer ranking,
``20_generation`` for MMMU / CMMMU by generation; ``pipeline.params.notebook_spec``). The reports then vary
one thing (the model, the option order) with ``RunSpec.with_params`` and run each variant as an ordinary
stored run."""
from __future__ import annotations

from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.pipeline.params import notebook_spec
from mmbench_lib.tasks.protocols import protocol_for
from mmbench_lib.tasks.recipes import DEFAULT_RECIPE


def base_config(benchmark: str, out, demo: dict | None = None, *, annotation_file: str = "", image_root: str = "",
                video_roots: dict | None = None, frames_root: str = "", dimensions="all", cc3m_dir: str = "",
                seed_bench_v2_dir: str = "", level: str = "L2", part: str = "all", source: str = "", split: str = "",
                subjects="all", model: str = "smollm2", recipe: str = DEFAULT_RECIPE, reduction: str = "",
                scorer: str = "", max_new_tokens: int = 0, batch_size: int = 8, device: str = "auto",
                limit: int = 0, seed: int = 0, parameters: dict | None = None, settings: dict | None = None) -> RunSpec:
    """A ``RunSpec`` for ``benchmark`` in ``out``. Empty strings (and 0) mean "not given": the spec's default;
    with no ``annotation_file`` (SEED) or ``source`` (MMMU / CMMMU) the demo set ``demo`` (``demo.ensure_demo``)
    is used. ``max_new_tokens`` caps the generation benchmarks' responses (a ranking run's generated-letter
    recipe keeps its protocol's default). ``settings``: the model settings (``runs.model_settings``)."""
    values = {k: v for k, v in locals().items() if k not in ("out", "demo", "parameters", "settings", "device")}
    if not protocol_for(benchmark).generates:
        values.pop("max_new_tokens")  # (as before the spec: the report's cap is for the generation benchmarks)
    return notebook_spec(values, out, demo, parameters=parameters, **{"device": device, **(settings or {})})
