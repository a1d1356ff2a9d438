"""Every copy of a benchmark gives the same items: the demo sets written in each copy users hold
(``mmbench_lib.demo.copies``) and read back through the task loaders (``mmbench_lib.tasks.copies``)."""
from __future__ import annotations

import io
import shutil

import numpy as np
import pytest
from PIL import Image

from mmbench_lib.core.items import DataError
from mmbench_lib.core.video import read_video_frames
from mmbench_lib.demo import copies as dc
from mmbench_lib.tasks import cmmmu, mmmu, seed1, seed2


@pytest.fixture(scope="module")
def written(demo, tmp_path_factory):
    out = tmp_path_factory.mktemp("copies")
    return {"seed": dc.seed1_copies(demo["seed"], out / "seed"), "seed2": dc.seed2_copies(demo["seed2"], out / "seed2"),
            "mmmu": dc.mmmu_copies(demo["mmmu"], out / "mmmu"), "cmmmu": dc.cmmmu_copies(demo["cmmmu"], out / "cmmmu")}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MMBENCH_CACHE", str(tmp_path / "cache"))


def _pixels(path) -> bytes:
    with Image.open(path) as im:
        return im.convert("RGB").tobytes() + repr(im.size).encode()


def _video_pixels(item) -> list[bytes]:
    if item.frames:
        return [_pixels(f) for f in item.frames]
    frames = read_video_frames(item.video.path, item.video.rule, item.video.segment)
    return [_pixels(io.BytesIO(dc._png(f.convert("RGB")))) for f in frames]


def _view(items, data_fields=True) -> list[tuple]:
    """What must agree whichever copy is read: text, options, gold, groups and every image's pixels."""
    out = []
    for it in items:
        media = _video_pixels(it) if (it.video is not None or it.frames) else [_pixels(p) for p in it.images]
        out.append((it.id, it.split, it.question, list(it.choices), it.answer, it.dimension_id, it.dimension, it.group,
                    it.level, it.question_type, tuple(media), tuple(_pixels(p) for p in it.choice_images),
                    it.meta.get("media_error")))
    return out


def test_seed1_every_copy_same_items(demo, written):
    d, w = demo["seed"], written["seed"]
    official = seed1.load(d["annotation_file"], d["image_root"], d["video_roots"])
    assert any(it.video for it in official) and not any(it.meta.get("media_error") for it in official)
    want = _view(official)
    for source in (w["parquet_folder"], w["parquet_file"]):  # merged folder and the parquet file itself
        assert _view(seed1.load(source)) == want, source
    for frames in (w["frames_official"], w["frames_official_parent"], w["frames_flat"]):
        got = seed1.load(d["annotation_file"], d["image_root"], frames_root=frames)
        assert all(len(it.frames) == 8 for it in got if it.dimension_id >= 10), frames
        assert _view(got) == want, frames
    image_only = [v for v, it in zip(want, official) if it.dimension_id <= 9]
    assert _view(seed1.load(w["tsv"])) == image_only


def test_seed2_every_copy_same_items(demo, written):
    d, w = demo["seed2"], written["seed2"]
    kw = {"level": "L3"}
    official = seed2.load(d["annotation_file"], d["cc3m_dir"], d["seed_bench_v2_dir"], **kw)
    want = _view(official)
    assert _view(seed2.load(w["parquet_folder"], **kw)) == want
    tsv_want = [v for v, it in zip(want, official) if it.dimension_id <= 24]
    assert _view(seed2.load(w["tsv"], **kw)) == tsv_want


@pytest.mark.parametrize("split", ["dev", "validation", "test"])
def test_mmmu_every_copy_same_items(demo, written, split, monkeypatch):
    w = written["mmmu"]
    want = _view(mmmu.load(demo["mmmu"]["source"], split=split))
    assert _view(mmmu.load(w["merged"], split=split)) == want
    monkeypatch.setenv("HF_HUB_CACHE", w["hub_cache"])
    assert _view(mmmu.load(w["hub_id"], split=split)) == want
    if split != "test":
        assert _view(mmmu.load(w["tsv"], split=split)) == want
    sub = mmmu.load(w["merged"], split=split, subjects=["Art", "phys"])
    assert {it.dimension for it in sub} == {"Art", "Physics"}


@pytest.mark.parametrize("split", ["dev", "val", "test"])
def test_cmmmu_every_copy_same_items(demo, written, split, monkeypatch):
    w = written["cmmmu"]
    want = _view(cmmmu.load(demo["cmmmu"]["root"], split=split))
    assert _view(cmmmu.load(demo["cmmmu"]["hf_root"], split=split)) == want
    assert _view(cmmmu.load(w["merged"], split=split)) == want
    monkeypatch.setenv("HF_HUB_CACHE", w["hub_cache"])
    assert _view(cmmmu.load(w["hub_id"], split=split)) == want
    if split == "val":
        assert _view(cmmmu.load(w["tsv"], split=split)) == want


def test_official_frames_found_where_the_flat_rule_failed(demo, written):
    """Before: frames_root=<official v1_video> gave every video question 'no pre-extracted frame folder',
    because only ``<frames_root>/<question_id>/`` was looked at."""
    d = demo["seed"]
    got = seed1.load(d["annotation_file"], d["image_root"], frames_root=written["seed"]["frames_official"], dimensions="video")
    assert got and all("media_error" not in it.meta for it in got)


def test_same_predictions_from_two_copies(demo, written, tmp_path):
    """One run (random baseline ranking, and MMMU generation's random baseline) per copy: same predictions."""
    from mmbench_lib.core.store import RunStore
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.runs import evaluate

    def preds(cfg):
        evaluate(cfg)
        return {r["id"]: (r.get("pred"), r.get("parsed_pred"), r.get("correct")) for r in RunStore(cfg.out_dir, readonly=True).rows()}

    d = demo["seed"]
    a = preds(RunConfig(benchmark="seed", out_dir=tmp_path / "a", model="random", progress=False,
                        data={"annotation_file": d["annotation_file"], "image_root": d["image_root"], "video_roots": d["video_roots"]}))
    b = preds(RunConfig(benchmark="seed", out_dir=tmp_path / "b", model="random", progress=False,
                        data={"annotation_file": written["seed"]["parquet_folder"]}))
    assert a == b and len(a) == 36
    c = preds(RunConfig(benchmark="mmmu", out_dir=tmp_path / "c", baseline="random", progress=False,
                        source=demo["mmmu"]["source"], split="validation"))
    e = preds(RunConfig(benchmark="mmmu", out_dir=tmp_path / "e", baseline="random", progress=False,
                        source=written["mmmu"]["merged"], split="validation"))
    assert c == e and len(c) == 24


def test_wrong_copies_fail_in_one_line(demo, written, tmp_path):
    bad = tmp_path / "bad.parquet"
    shutil.copy(written["mmmu"]["merged_file"], bad)
    with pytest.raises(DataError, match=r"bad.parquet.*expected the lmms-eval SEED parquet.*missing \['question_id'"):
        seed1.load(bad)
    junk = tmp_path / "SEED-Bench.bin"
    junk.write_bytes(b"\x00\xff\x10garbage")
    with pytest.raises(DataError, match="expected the SEED annotation JSON, a hub parquet file or a VLMEvalKit TSV"):
        seed2.load(junk)
    with pytest.raises(DataError, match=r"expected the merged hub CMMMU parquet.*missing \['type'"):
        cmmmu.load(written["mmmu"]["merged"], split="dev")
