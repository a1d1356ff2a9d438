"""Multi-modal gain (MG) and multi-modal leakage (ML) of one vision model, from three runs on the same items.

MMStar (Chen et al., NeurIPS 2024, arXiv 2403.20330) §4.3, Eq. 1-2: MG = S_wv - S_ov and ML = max(0, S_ov - S_t),
where S_wv is the model's score **with** the images, S_ov the same model's score **without** them (the images'
tokens removed, as the paper does for most models, A.1) and S_t the score of its LLM base without images (the
repository README writes S_v, S_wv, S_t for the same three). Here they are named plainly: ``with images``,
``without images``, ``LLM base``. Each difference is paired item by item (Newcombe's interval,
``core.uncertainty.compare_runs``); ML's interval is that of S_ov - S_t clipped at 0 like ML itself.

More: docs/modules.md, ``mmbench_lib/reports/gain.py``.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from mmbench_lib.analysis.reader import load_run
from mmbench_lib.core.uncertainty import SCORED, accuracy_ci, compare_runs
from mmbench_lib.models import load_adapter
from mmbench_lib.pipeline.runs import evaluate
from mmbench_lib.reports import subruns
from mmbench_lib.tasks.base import canonical_name, get_task

RUNS = ("with images", "without images", "LLM base")


class WithoutImages:
    """A vision model with the images withheld: every request reaches it with no image (``sees_images`` False,
    so the pipeline sends none and only checks the media), everything else is the model's own."""

    sees_images = False

    def __init__(self, adapter):
        self._adapter = adapter
        self.name = f"{adapter.name} (images withheld)"

    def __getattr__(self, key):
        return getattr(self._adapter, key)


def three_runs(config, model: str, llm_base: str, out_dir, adapters: dict | None = None) -> dict[str, Path]:
    """Run ``config``'s items three ways, each an ordinary stored, resumable run under ``out_dir``: ``model`` with
    the images (``gain__with_images``), the same loaded model with them withheld (``gain__without_images``) and
    the text-only ``llm_base`` (``gain__llm_base``); returns ``{name: folder}`` in :data:`RUNS` order."""
    adapters = dict(adapters or {})
    out = {}
    for name, spec, blind in ((RUNS[0], model, False), (RUNS[1], model, True), (RUNS[2], llm_base, False)):
        folder = Path(out_dir) / f"gain__{name.replace(' ', '_').lower()}"
        cfg = config.with_params(out_dir=folder, model=spec, baseline="none",
                                 parameters={**config.parameters, "gain_run": name})
        with subruns.step(f"MG/ML run {len(out) + 1} of 3: {spec} {name}"):
            adapter = adapters.get(spec) or load_adapter(spec, **cfg.adapter_options())
            adapters[spec] = adapter
            if name == RUNS[0] and not getattr(adapter, "sees_images", False):
                raise ValueError(f"model {spec!r} does not see images: MG needs a vision model (vlm:<id>, tiny-llava)")
            if name == RUNS[2] and getattr(adapter, "sees_images", False):
                raise ValueError(f"llm_base {spec!r} sees images: the LLM base answers from the text alone")
            evaluate(cfg, WithoutImages(adapter) if blind else adapter)
        out[name] = folder
    return out


def _scored(folder) -> tuple[str, pd.DataFrame]:
    run = load_run(folder)
    df = run.samples
    df = df[(df["status"] == SCORED) & df["correct"].notna()].drop_duplicates("id", keep="last")
    return canonical_name(run.benchmark), df


def gain_leakage(runs: dict[str, str | Path]) -> pd.DataFrame:
    """MG and ML per metric group of the benchmark (MMStar: the six core capabilities and Overall) on the items
    all three runs scored: ``group, n, with images %, without images %, LLM base %`` (each with its interval),
    ``MG``, ``MG low``, ``MG high``, ``ML``, ``ML low``, ``ML high`` (points). ``runs``: :data:`RUNS` -> folder.
    ValueError naming the run when the runs are of different benchmarks or share no item."""
    missing = [k for k in RUNS if k not in runs]
    if missing:
        raise ValueError(f"MG/ML needs the runs {list(RUNS)}; missing {missing}")
    loaded = {k: _scored(runs[k]) for k in RUNS}
    benches = {b for b, _ in loaded.values()}
    if len(benches) != 1:
        raise ValueError(f"MG/ML runs of different benchmarks: {', '.join(f'{k}: {b}' for k, (b, _) in loaded.items())}")
    task = get_task(next(iter(benches)))
    common = set.intersection(*(set(df["id"]) for _b, df in loaded.values()))
    if not common:
        raise ValueError("the three MG/ML runs share no scored item")
    frames = {k: df[df["id"].isin(common)] for k, (_b, df) in loaded.items()}
    rows = []
    for group, ids in task.groups.items():
        sub = {k: df[df["dimension_id"].isin(ids)].to_dict("records") for k, df in frames.items()}
        if not sub[RUNS[0]]:
            continue
        row = {"group": group, "n": len(sub[RUNS[0]])}
        for k in RUNS:
            ci = accuracy_ci(sub[k])
            row.update({f"{k} %": ci["accuracy"], f"{k} low": ci["low"], f"{k} high": ci["high"]})
        mg = compare_runs(sub[RUNS[1]], sub[RUNS[0]])  # with - without
        leak = compare_runs(sub[RUNS[2]], sub[RUNS[1]])  # without - LLM base
        row.update({"MG": mg["difference"], "MG low": mg["low"], "MG high": mg["high"],
                    "ML": max(0.0, leak["difference"]), "ML low": max(0.0, leak["low"]),
                    "ML high": max(0.0, leak["high"])})
        rows.append(row)
    return pd.DataFrame(rows)
