"""The run config a report notebook starts from: one ``RunConfig`` for any benchmark, from the same
parameters the evaluation notebooks take (``10_seed_bench`` for SEED / SEED-2 by answer ranking,
``20_generation`` for MMMU / CMMMU by generation). The reports then vary one thing (the model, the
option order) with ``dataclasses.replace`` and run each variant as an ordinary stored run."""
from __future__ import annotations

from mmbench_lib.core import manifest
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig, protocol_of
from mmbench_lib.tasks.base import get_task
from mmbench_lib.tasks.recipes import DEFAULT_RECIPE


def base_config(benchmark: str, out, demo: dict | None = None, *, annotation_file: str = "", image_root: str = "",
                video_roots: dict | None = None, frames_root: str = "", dimensions="all", cc3m_dir: str = "",
                seed_bench_v2_dir: str = "", level: str = "L2", part: str = "all", source: str = "", split: str = "",
                subjects="all", model: str = "smollm2", recipe: str = DEFAULT_RECIPE, reduction: str = "",
                scorer: str = "shared-prefix", max_new_tokens: int = 16, batch_size: int = 8, device: str = "auto",
                limit: int = 0, seed: int = 0, parameters: dict | None = None, settings: dict | None = None) -> RunConfig:
    """A ``RunConfig`` for ``benchmark`` in ``out``. Empty strings mean "not given": with no
    ``annotation_file`` (SEED) or ``source`` (MMMU / CMMMU) the demo set ``demo`` (``demo.ensure_demo``)
    is used. Ranking fields apply to SEED / SEED-2, generation fields to MMMU / CMMMU. ``settings``: the
    model settings (``runs.model_settings``: dtype, revision, trust_remote_code, device, device_map, max_memory)."""
    common = {"model": model, "batch_size": batch_size, "device": device, "limit": limit, "seed": seed,
              "parameters": dict(parameters or {}), **(settings or {})}
    if protocol_of(benchmark) == "ranking":
        args = runs.loader_args(benchmark, annotation_file, demo=None if annotation_file else demo,
                                image_root=image_root, video_roots=video_roots or {}, frames_root=frames_root,
                                dimensions=dimensions, cc3m_dir=cc3m_dir, seed_bench_v2_dir=seed_bench_v2_dir,
                                level=level, part=part)
        return RunConfig(benchmark, out, data=args, recipe=recipe, reduction=reduction or None, scorer=scorer, **common)
    data_source = str(manifest.resolve(source)) if source and manifest.resolve(source).exists() else source
    if not data_source:
        if demo is None:
            raise ValueError(f"{benchmark}: give source, or a demo set to fall back on")
        task = get_task(benchmark)
        data_source = demo[task.name][task.demo_source_key]
    return RunConfig(benchmark, out, source=data_source, split=split or None, subjects=subjects,
                     max_new_tokens=max_new_tokens, **common)
