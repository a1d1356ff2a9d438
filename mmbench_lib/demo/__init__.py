"""Small, deterministic demo sets in the exact official layouts of SEED-Bench v1, SEED-Bench-2, MMMU
and CMMMU, every image and video drawn procedurally so each answer can be checked from the pixels.

``make_demo(out_dir)`` writes every set and ``out_dir/README.md``; ``make_seed_demo``,
``make_mmmu_demo`` and ``make_cmmmu_demo`` write one benchmark's (builders in ``seed1``, ``seed2``,
``mmmu``, ``cmmmu``; shared helpers in ``draw``); ``ensure_demo`` builds them once into a folder.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from mmbench_lib.core.manifest import resolve
from mmbench_lib.demo import cmmmu, mmmu, mmmu_pro, mmstar, seed1, seed2, seed2plus
from mmbench_lib.demo import mmbench as mmbench_demo
from mmbench_lib.demo.cmmmu import make_cmmmu_demo
from mmbench_lib.demo.draw import SEED
from mmbench_lib.demo.mmmu import make_mmmu_demo

__all__ = ["DEMO_VERSION", "SEED", "ensure_demo", "make_cmmmu_demo", "make_demo", "make_mmmu_demo", "make_seed_demo"]

DEMO_VERSION = 6  # bump when the generator's output changes

README_HEAD = """# mmbench demo data

Small, procedurally drawn demo sets in the exact official layouts, written by
`mmbench_lib.demo.make_demo`. Every question has a right answer that can be read off the
pixels (shapes to count, colours, positions, rendered words, motion, colour cycles), and the
files are byte-for-byte deterministic for a given seed.

"""


def make_seed_demo(out_dir, seed: int = SEED) -> dict:
    """Write the SEED-Bench v1 (36 questions) and SEED-Bench-2 (54 questions) demo sets.

    Returns ``{"seed": {annotation_file, image_root, video_roots, video_codecs},
    "seed2": {annotation_file, cc3m_dir, seed_bench_v2_dir, generated_dir}}`` (strings).
    """
    out = Path(out_dir)
    v1_paths, v1_records = seed1.make_seed1(out / "seed", random.Random(seed))
    v2_paths = seed2.make_seed2(out / "seed2", random.Random(seed + 1), v1_records, v1_paths)
    return {"seed": v1_paths, "seed2": v2_paths}


def make_demo(out_dir, seed: int = SEED) -> dict:
    """Write every demo set under ``out_dir`` plus ``out_dir/README.md``; returns their paths by benchmark."""
    out = Path(out_dir)
    paths = make_seed_demo(out, seed)
    paths["mmmu"] = make_mmmu_demo(out / "mmmu", seed + 2)
    paths["cmmmu"] = make_cmmmu_demo(out / "cmmmu", seed + 3)
    paths["mmmu-pro"] = mmmu_pro.make_mmmu_pro_demo(out / "mmmu-pro", seed + 4)
    paths["seed2plus"] = seed2plus.make_seed2plus_demo(out / "seed2plus", seed + 5)
    paths["mmstar"] = mmstar.make_mmstar_demo(out / "mmstar", seed + 6)
    paths["mmb"] = mmbench_demo.make_mmbench_demo(out / "mmbench", seed + 7)
    readme = (README_HEAD + seed1.readme(paths["seed"]) + seed2.README + mmmu.README + cmmmu.readme(paths["cmmmu"])
              + mmmu_pro.README + seed2plus.README + mmstar.README + mmbench_demo.README)
    (out / "README.md").write_text(readme, encoding="utf-8")
    # the stamp that marks these files as the demo sets (runs on them are labelled "demo data": analysis.results)
    (out / "paths.json").write_text(json.dumps({"version": DEMO_VERSION, "paths": paths}, indent=2, default=str),
                                    encoding="utf-8")
    return paths


def ensure_demo(data_dir="data/demo", force: bool = False) -> dict:
    """The demo sets under ``data_dir`` (relative paths are from the repository root), built
    if missing or made by another generator version; returns their paths by benchmark."""
    out = resolve(data_dir)
    stamp = out / "paths.json"
    if stamp.is_file() and not force:
        saved = json.loads(stamp.read_text(encoding="utf-8"))
        if saved.get("version") == DEMO_VERSION and Path(saved["paths"]["seed"]["annotation_file"]).is_file():
            return saved["paths"]
    paths = make_demo(out)
    stamp.write_text(json.dumps({"version": DEMO_VERSION, "paths": paths}, indent=2, default=str), encoding="utf-8")
    return json.loads(json.dumps(paths, default=str))
