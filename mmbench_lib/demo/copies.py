"""The demo sets written again in every other copy users hold (the tasks read them, ``Task.layouts``):
the merged lmms-eval hub parquet, the same as a cached hub id, the VLMEvalKit TSV, and for SEED v1
the official pre-extracted frames (``v1_video/task<dim>/<source>_8_frame/<question_id>/1..8.png``) and
a flat folder of symlinks to them. Each writer takes the official demo's paths and returns the
loader arguments of each copy, so a test can read every copy and compare the items.
"""
from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from mmbench_lib.core.video import read_video_frames
from mmbench_lib.demo import mmstar
from mmbench_lib.tasks import cmmmu, mmmu, seed1, seed2

SEED_FIELDS = ("question_id", "question", "choice_a", "choice_b", "choice_c", "choice_d", "answer",
               "question_type_id", "data_type", "data_id", "segment")
SEED2_FIELDS = ("data_source", "level", "subpart", "version")
V1_FRAMES = seed1.FRAME_FOLDERS


def _png(img) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _write_tsv(path: Path, columns: list[str], rows: list[dict]) -> str:
    """A tab-separated file as pandas writes VLMEvalKit's (a cell with a tab, newline or quote is quoted)."""
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r[c] for c in columns])
    return str(path)


def hub_cache(cache_root: Path, repo_id: str, files: dict[str, Path]) -> str:
    """Put files in a Hugging Face hub cache laid out as ``huggingface_hub`` does
    (``datasets--<owner>--<name>/refs/main`` and ``snapshots/<commit>/...``); returns the cache root."""
    repo = cache_root / f"datasets--{repo_id.replace('/', '--')}"
    commit = "0" * 40
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    for rel, src in files.items():
        dest = repo / "snapshots" / commit / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(Path(src).read_bytes())
    return str(cache_root)


# ------------------------------------------------------------------------------------------------ SEED v1 / SEED-2
def _seed_questions(annotation_file) -> list[dict]:
    return json.loads(Path(annotation_file).read_text(encoding="utf-8"))["questions"]


def _v1_frames(paths: dict, qid: str) -> list[bytes]:
    """The 8 frames the official rule selects from a demo video (what ``v1_video`` ships)."""

    item = next(it for it in seed1.load(paths["annotation_file"], paths["image_root"], paths["video_roots"], dimensions="video")
                if it.id == qid)
    return [_png(f.convert("RGB")) for f in read_video_frames(item.video.path, item.video.rule, item.video.segment)]


def _write_seed_parquet(path: Path, rows: list[dict], fields, list_data_id: bool) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    types = {"question_type_id": pa.int64(), "data_id": pa.list_(pa.string()) if list_data_id else pa.string()}
    schema = pa.schema([pa.field(f, types.get(f, pa.string())) for f in fields] + [pa.field("image", image)])
    data = {f: [r.get(f) for r in rows] for f in fields}
    data["image"] = [[{"bytes": b, "path": None} for b in r["image"]] for r in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pydict(data, schema=schema), path)


def seed1_copies(paths: dict, out: Path) -> dict:
    """SEED v1 demo as the lmms-eval parquet, the VLMEvalKit TSV (image questions, as
    ``SEEDBench_IMG.tsv``), the official frames folder and a flat folder of symlinks to it."""

    out = Path(out)
    rows, tsv = [], []
    for q in _seed_questions(paths["annotation_file"]):
        dim = int(q["question_type_id"])
        if dim in V1_FRAMES:
            frames = _v1_frames(paths, q["question_id"])
            for k, data in enumerate(frames, 1):
                target = out / "v1_video" / f"task{dim}" / V1_FRAMES[dim] / q["question_id"] / f"{k}.png"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            link = out / "frames_flat" / q["question_id"]
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.is_symlink():
                link.symlink_to(target.parent.resolve(), target_is_directory=True)
            images = frames
        else:
            images = [(Path(paths["image_root"]) / q["data_id"]).read_bytes()]
            tsv.append({"index": q["question_id"], "question": q["question"], **{c: q[f"choice_{c.lower()}"] for c in "ABCD"},
                        "answer": q["answer"], "category": seed1.DIMENSIONS[dim][0], "image": _b64(images[0])})
        row = {f: q.get(f) for f in SEED_FIELDS}
        row["segment"] = json.dumps(q["segment"]) if "segment" in q else None
        rows.append({**row, "image": images})
    _write_seed_parquet(out / "hub" / "data" / "test-00000-of-00001.parquet", rows, SEED_FIELDS, False)
    return {
        "parquet_folder": str(out / "hub"), "parquet_file": str(out / "hub" / "data" / "test-00000-of-00001.parquet"),
        "tsv": _write_tsv(out / "SEEDBench_IMG.tsv", ["index", "question", "A", "B", "C", "D", "answer", "category", "image"], tsv),
        "frames_official": str(out / "v1_video"), "frames_official_parent": str(out), "frames_flat": str(out / "frames_flat"),
    }


def seed2_copies(paths: dict, out: Path) -> dict:
    """SEED-2 demo as the lmms-eval parquet (``data_id`` a list, one image per entry) and the
    VLMEvalKit TSV (``SEEDBench2.tsv``: dimensions 1-24, images as a base64 list)."""

    out = Path(out)
    roots = {"cc3m": Path(paths["cc3m_dir"]), "SEED-Bench v2": Path(paths["seed_bench_v2_dir"])}
    rows, tsv = [], []
    for q in _seed_questions(paths["annotation_file"]):
        ids = q["data_id"] if isinstance(q["data_id"], list) else [q["data_id"]]
        images = [(roots[q["data_source"]] / rel).read_bytes() for rel in ids]
        row = {f: q.get(f) for f in SEED_FIELDS + SEED2_FIELDS}
        row.update(data_id=ids, segment=None)
        rows.append({**row, "image": images})
        dim = int(q["question_type_id"])
        if dim <= 24:
            tsv.append({"index": q["question_id"], "question": q["question"], **{c: q[f"choice_{c.lower()}"] for c in "ABCD"},
                        "answer": q["answer"], "category": seed2.DIMENSIONS[dim][0],
                        "image": _b64(images[0]) if len(images) == 1 else repr([_b64(b) for b in images])})
    _write_seed_parquet(out / "hub" / "data" / "test-00000-of-00001.parquet", rows, SEED_FIELDS + SEED2_FIELDS, True)
    return {"parquet_folder": str(out / "hub"),
            "tsv": _write_tsv(out / "SEEDBench2.tsv", ["index", "question", "A", "B", "C", "D", "answer", "category", "image"], tsv)}


# ------------------------------------------------------------------------------------------------ MMMU / CMMMU
def _merge(files_by_split: dict[str, list[Path]], out: Path) -> dict[str, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    written = {}
    for split, files in files_by_split.items():
        table = pa.concat_tables([pq.read_table(f) for f in files])
        target = out / "data" / f"{split}-00000-of-00001.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, target)
        written[f"data/{target.name}"] = target
    return written


def mmmu_copies(paths: dict, out: Path) -> dict:
    """MMMU demo as the merged lmms-eval parquet (``lmms-lab/MMMU``), that copy in a hub cache, and
    ``MMMU_DEV_VAL.tsv`` (dev + validation)."""
    import ast

    import pyarrow.parquet as pq


    out, src = Path(out), Path(paths["source"])
    subjects = [s for s in mmmu.SUBJECTS if (src / s).is_dir()]
    merged = _merge({sp: [f for s in subjects for f in sorted((src / s).glob(f"{sp}-*.parquet"))]
                     for sp in ("dev", "validation", "test")}, out / "merged")
    tsv = []
    for split in ("dev", "validation"):
        for rec in pq.read_table(merged[f"data/{split}-00000-of-00001.parquet"]).to_pylist():
            opts = ast.literal_eval(rec["options"])
            k_max = max([k for k in range(1, 8) if rec.get(f"image_{k}") is not None], default=0)
            images = [_b64(rec[f"image_{k}"]["bytes"]) for k in range(1, k_max + 1)]
            tsv.append({"index": len(tsv), "id": rec["id"], "question": rec["question"],
                        **{chr(65 + i): o for i, o in enumerate(opts)}, "answer": rec["answer"],
                        "category": mmmu.parser.subject_from_id(rec["id"]), "split": split,
                        "image": images[0] if len(images) == 1 else repr(images)})
    cols = ["index", "id", "question", *"ABCDEFGHI", "answer", "category", "split", "image"]
    return {"merged": str(out / "merged"), "merged_file": str(merged["data/validation-00000-of-00001.parquet"]),
            "hub_cache": hub_cache(out / "hf_cache", "lmms-lab/MMMU", merged), "hub_id": "lmms-lab/MMMU",
            "tsv": _write_tsv(out / "MMMU_DEV_VAL.tsv", cols, tsv)}


def cmmmu_copies(paths: dict, out: Path) -> dict:
    """CMMMU demo as the merged lmms-eval parquet (``lmms-lab/CMMMU``), that copy in a hub cache,
    and ``CMMMU_VAL.tsv`` (val; images in tag order)."""
    import pyarrow.parquet as pq


    out, hf = Path(out), Path(paths["hf_root"])
    folders = [cmmmu.CATEGORY_FOLDER[c] for c in cmmmu.CATEGORY_ORDER if (hf / cmmmu.CATEGORY_FOLDER[c]).is_dir()]
    merged = _merge({sp: [f for c in folders for f in sorted((hf / c).glob(f"{sp}-*.parquet"))]
                     for sp in ("dev", "val", "test")}, out / "merged")
    tsv = []
    for rec in pq.read_table(merged["data/val-00000-of-00001.parquet"]).to_pylist():
        options = [rec.get(f"option{i}") or "" for i in range(1, 5)] if rec["type"] == "选择" else []
        by_name = {rec.get(f"image_{i}_filename"): rec.get(f"image_{i}") for i in range(1, 6)}
        images = [_b64(by_name[t]["bytes"]) for t in cmmmu.image_tags(rec["question"], options)]
        tsv.append({**{k: rec.get(k) for k in ("id", "question", "type", "option1", "option2", "option3", "option4",
                                               "answer", "category", "subcategory")},
                    "index": len(tsv), "image": images[0] if len(images) == 1 else repr(images)})
    cols = ["index", "id", "question", "type", "option1", "option2", "option3", "option4", "answer", "category",
            "subcategory", "image"]
    return {"merged": str(out / "merged"), "hub_cache": hub_cache(out / "hf_cache", "lmms-lab/CMMMU", merged),
            "hub_id": "lmms-lab/CMMMU", "tsv": _write_tsv(out / "CMMMU_VAL.tsv", cols, tsv)}


# ------------------------------------------------------------------------------------------------ MMMU-Pro / SEED-2-Plus
def mmmu_pro_copies(paths: dict, out: Path) -> dict:
    """MMMU-Pro demo (the hub layout, one folder per setting) held in a hub cache as ``MMMU/MMMU_Pro``."""
    src = Path(paths["source"])
    files = {str(f.relative_to(src)): f for f in sorted(src.glob("*/*.parquet"))}
    return {"hub_cache": hub_cache(Path(out) / "hf_cache", "MMMU/MMMU_Pro", files), "hub_id": "MMMU/MMMU_Pro"}


# ------------------------------------------------------------------------------------------------ every declared layout
def layout_copies(paths: dict, out: Path) -> dict[str, dict[str, tuple[dict, dict]]]:
    """For every registered task, every layout it declares (``Task.layouts``): ``task -> layout key -> (loader
    arguments, environment)``, the demo items written in that layout (the environment names the hub cache of a
    ``hub`` layout). A declared layout with no writer here is missing from the result (the contract test says so)."""
    out = Path(out)
    s1 = seed1_copies(paths["seed"], out / "seed")
    s2 = seed2_copies(paths["seed2"], out / "seed2")
    mm = mmmu_copies(paths["mmmu"], out / "mmmu")
    cm = cmmmu_copies(paths["cmmmu"], out / "cmmmu")
    pro = mmmu_pro_copies(paths["mmmu-pro"], out / "mmmu-pro")
    d1, d2, dp = paths["seed"], paths["seed2"], paths["seed2plus"]
    return {
        "seed": {"official": ({k: d1[k] for k in ("annotation_file", "image_root", "video_roots")}, {}),
                 "frames": ({"annotation_file": d1["annotation_file"], "image_root": d1["image_root"],
                             "frames_root": s1["frames_official"]}, {}),
                 "parquet": ({"annotation_file": s1["parquet_folder"]}, {}),
                 "tsv": ({"annotation_file": s1["tsv"]}, {})},
        "seed2": {"official": ({k: d2[k] for k in ("annotation_file", "cc3m_dir", "seed_bench_v2_dir")}, {}),
                  "parquet": ({"annotation_file": s2["parquet_folder"]}, {}),
                  "tsv": ({"annotation_file": s2["tsv"]}, {})},
        "seed2plus": {"official": ({"annotation_file": dp["annotation_file"], "image_root": dp["image_root"]}, {}),
                      "parquet": ({"annotation_file": dp["parquet"]}, {})},
        "mmmu": {"per-config": ({"source": paths["mmmu"]["source"]}, {}), "merged": ({"source": mm["merged"]}, {}),
                 "hub": ({"source": mm["hub_id"]}, {"HF_HUB_CACHE": mm["hub_cache"]}), "tsv": ({"source": mm["tsv"]}, {})},
        "cmmmu": {"official": ({"source": paths["cmmmu"]["root"]}, {}), "per-config": ({"source": paths["cmmmu"]["hf_root"]}, {}),
                  "merged": ({"source": cm["merged"]}, {}), "hub": ({"source": cm["hub_id"]}, {"HF_HUB_CACHE": cm["hub_cache"]}),
                  "tsv": ({"source": cm["tsv"]}, {})},
        "mmb": {"tsv": ({"annotation_file": paths["mmb"]["annotation_file"]}, {}),
                "parquet": ({"annotation_file": paths["mmb"]["parquet"]}, {})},
        "mmmu-pro": {"per-config": ({"source": paths["mmmu-pro"]["source"]}, {}),
                     "hub": ({"source": pro["hub_id"]}, {"HF_HUB_CACHE": pro["hub_cache"]})},
        "mmstar": {"parquet": ({"annotation_file": paths["mmstar"]["annotation_file"]}, {}),
                   "tsv": ({"annotation_file": mmstar.write_tsv(paths["mmstar"], out / "mmstar")}, {})},
    }
