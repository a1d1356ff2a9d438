"""Copies checked against what the data says, and reads that cannot hang or blow up (issue 35, "Copies not
checked against what the data says" and "Unbounded reads"): each case is one line naming file, item and
field (exit 2 before anything runs when the pre-run check can see it), or a per-item mark with
``MMBENCH_KEEP_GOING=1``; never a silently scored item, a hang or a traceback."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from mmbench_lib.core.items import DataError
from mmbench_lib.demo import copies as dc
from mmbench_lib.pipeline.preflight import BadValue, check_values
from mmbench_lib.tasks import seed1, seed2

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def v1(demo, tmp_path_factory):
    return dc.seed1_copies(demo["seed"], tmp_path_factory.mktemp("v1"))


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MMBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MMBENCH_KEEP_GOING", raising=False)


def _png(color) -> bytes:
    import io

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buf, format="PNG")
    return buf.getvalue()


def _rows(parquet) -> list[dict]:
    return pq.read_table(parquet).to_pylist()


def _write(path: Path, rows: list[dict], like) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(like)), path)
    return path


def _cli(args, tmp_path, timeout=120):
    env = {k: v for k, v in os.environ.items() if k != "MMBENCH_DEBUG"}
    env.update(PYTHONPATH=str(ROOT), MMBENCH_OUTPUTS=str(tmp_path / "outputs"), HF_HUB_OFFLINE="1",
               MMBENCH_CACHE=str(tmp_path / "cache"))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mmbench_lib.cli", "run", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("mmbench: error:")]
    print(f"exit {proc.returncode} after {time.perf_counter() - start:.1f} s: {errors}")
    return proc, errors


# --------------------------------------------------------------------------------------- SEED v1 frame counts
@pytest.mark.parametrize("n", [1, 3, 12])
def test_frame_folder_with_another_count_than_8_is_refused_or_marked(n, demo, v1, tmp_path, monkeypatch):
    frames = tmp_path / "v1_video"
    shutil.copytree(v1["frames_official"], frames)
    folder = next(p for p in sorted((frames / "task10" / "ssv2_8_frame").iterdir()))
    for f in folder.iterdir():
        f.unlink()
    for k in range(1, n + 1):
        (folder / f"{k}.png").write_bytes(_png((k, 0, 0)))
    d = demo["seed"]
    with pytest.raises(DataError, match=rf"item '{folder.name}', field 'frames': expected the 8 frames the protocol "
                                        rf"samples per video .*found {n}"):
        seed1.load(d["annotation_file"], d["image_root"], frames_root=frames, dimensions="video")
    monkeypatch.setenv("MMBENCH_KEEP_GOING", "1")
    items = seed1.load(d["annotation_file"], d["image_root"], frames_root=frames, dimensions="video")
    marked = {it.id: it.meta.get("media_error") for it in items if it.meta.get("media_error")}
    assert list(marked) == [folder.name] and f"found {n}" in marked[folder.name]


@pytest.mark.parametrize("n", [1, 3, 12])
def test_hub_parquet_video_row_with_another_count_than_8_is_refused(n, v1, tmp_path):
    rows = _rows(v1["parquet_file"])
    video = next(r for r in rows if int(r["question_type_id"]) >= 10)
    video["image"] = [{"bytes": _png((k, 1, 1)), "path": None} for k in range(n)]
    path = _write(tmp_path / "hub" / "data" / "test-00000-of-00001.parquet", rows, v1["parquet_file"])
    with pytest.raises(DataError, match=rf"^{path}, item '{video['question_id']}', field 'frames': .*found {n}"):
        seed1.load(path)  # the copy is named, not the cache its frames were written to


@pytest.mark.parametrize("n", [1, 3, 12])
def test_tsv_video_row_with_another_count_than_8_is_refused(n, tmp_path):
    import base64

    images = [base64.b64encode(_png((k, 2, 2))).decode() for k in range(n)]
    cell = images[0] if n == 1 else repr(images)
    tsv = dc._write_tsv(tmp_path / "SEEDBench_IMG.tsv", ["index", "question", "A", "B", "C", "D", "answer", "category", "image"],
                        [{"index": "77", "question": "What happens?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A",
                          "category": "Action Recognition", "image": cell}])
    with pytest.raises(DataError, match=rf"SEEDBench_IMG.tsv, item '77', field 'frames': .*found {n}"):
        seed1.load(tsv)


# --------------------------------------------------------------------------------------- cache keyed by the source
def test_parquet_rewritten_in_place_never_reads_the_old_cache(v1, tmp_path):
    rows = _rows(v1["parquet_file"])
    path = _write(tmp_path / "copy.parquet", rows, v1["parquet_file"])
    before = seed1.load(path)
    video = next(it for it in before if it.dimension_id >= 10)
    assert len(video.frames) == 8
    row = next(r for r in rows if r["question_id"] == video.id)
    row["image"] = row["image"][:3]  # before: frames 1-3 rewritten, 4-8 left from the old copy, scored as 8 frames
    image_row = next(r for r in rows if int(r["question_type_id"]) < 10)
    image_row["image"] = [{"bytes": _png((0, 200, 0)), "path": None}]
    time.sleep(0.01)
    _write(path, rows, v1["parquet_file"])
    with pytest.raises(DataError, match=rf"item '{video.id}', field 'frames': .*found 3"):
        seed1.load(path)
    after = seed1.load(path, dimensions="image")
    img = next(it for it in after if it.id == image_row["question_id"])
    with Image.open(img.images[0]) as im:
        assert im.convert("RGB").getpixel((0, 0)) == (0, 200, 0)  # the new image, not the cached old one


# --------------------------------------------------------------------------------------- shared data_id
def test_two_rows_sharing_a_data_id_with_different_images_name_both(v1, tmp_path):
    rows = _rows(v1["parquet_file"])
    a, b = [r for r in rows if int(r["question_type_id"]) < 10][:2]
    b["data_id"] = a["data_id"]
    b["image"] = [{"bytes": _png((9, 9, 9)), "path": None}]
    path = _write(tmp_path / "dup.parquet", rows, v1["parquet_file"])
    with pytest.raises(DataError, match=rf"rows '{a['question_id']}' and '{b['question_id']}' share data_id "
                                        rf"'{a['data_id']}' with different image bytes"):
        seed1.load(path)
    b["image"] = a["image"]  # the same image under the same name: one file, both questions read it
    _write(path, rows, v1["parquet_file"])
    items = {it.id: it for it in seed1.load(path)}
    assert items[a["question_id"]].images == items[b["question_id"]].images


def test_seed2_rows_sharing_a_data_id_entry_with_different_images_name_both(demo, tmp_path):
    w = dc.seed2_copies(demo["seed2"], tmp_path / "s2")
    f = Path(w["parquet_folder"]) / "data" / "test-00000-of-00001.parquet"
    rows = _rows(f)
    a, b = [r for r in rows if len(r["data_id"]) == 1][:2]
    b["data_id"] = a["data_id"]
    b["image"] = [{"bytes": _png((7, 7, 7)), "path": None}]
    _write(f, rows, f)
    with pytest.raises(DataError, match=rf"rows '{a['question_id']}' and '{b['question_id']}' share data_id"):
        seed2.load(w["parquet_folder"])


# --------------------------------------------------------------------------------------- demo set + a data path
def test_frames_root_with_the_demo_set_is_refused_not_dropped(v1, tmp_path):
    with pytest.raises(BadValue, match="is given but annotation_file is empty, so the demo set would be read") as e:
        check_values({"benchmark": "seed", "annotation_file": "", "frames_root": v1["frames_official"], "model": "random"})
    assert e.value.name == "frames_root"
    proc, errors = _cli(["notebooks/10_seed_bench.ipynb", "--model", "random", "-p", "frames_root", v1["frames_official"]],
                        tmp_path)
    assert proc.returncode == 2 and len(errors) == 1 and "frames_root" in errors[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "outputs").exists() or not any((tmp_path / "outputs").iterdir())


# --------------------------------------------------------------------------------------- unbounded reads
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("notebook, name", [("notebooks/10_seed_bench.ipynb", "annotation_file"),
                                            ("notebooks/20_generation.ipynb", "source")])
def test_fifo_as_data_does_not_hang_the_pre_run_check(notebook, name, tmp_path):
    fifo = tmp_path / "data.fifo"
    os.mkfifo(fifo)
    args = [notebook, "-p", name, str(fifo)] + (["--model", "random"] if name == "annotation_file" else [])
    proc, errors = _cli(args, tmp_path, timeout=60)  # before: blocked in open() for ever
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr
    assert "data.fifo: expected a data file, found a FIFO" in errors[0] and "Traceback" not in proc.stderr


def test_deeply_nested_tsv_image_cell_is_one_line_not_evaluated(tmp_path):
    deep = "[" * 200_000 + "]" * 200_000
    tsv = dc._write_tsv(tmp_path / "SEEDBench_IMG.tsv", ["index", "question", "A", "B", "C", "D", "answer", "category", "image"],
                        [{"index": "1", "question": "q", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A",
                          "category": "Scene Understanding", "image": deep}])
    with pytest.raises(DataError, match=r"item '1', field 'image': expected one base64 image or a flat list of quoted "
                                        r"base64 strings, found '\[\[\[.*\(400,000 characters\)"):
        seed1.load(tsv)
    evil = "[__import__('os').system('touch " + str(tmp_path / "pwned") + "')]"
    tsv2 = dc._write_tsv(tmp_path / "x" / "SEEDBench_IMG.tsv", ["index", "question", "A", "B", "C", "D", "answer", "category",
                                                                "image"],
                         [{"index": "1", "question": "q", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A",
                           "category": "Scene Understanding", "image": evil}])
    with pytest.raises(DataError, match="field 'image': expected one base64 image or a flat list"):
        seed1.load(tsv2)
    assert not (tmp_path / "pwned").exists()
    proc, errors = _cli(["notebooks/10_seed_bench.ipynb", "--model", "random", "-p", "annotation_file", tsv], tmp_path)
    assert proc.returncode == 2 and len(errors) == 1 and "field 'image'" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr


def test_deeply_nested_segment_cell_is_one_line(v1, tmp_path):
    rows = _rows(v1["parquet_file"])
    video = next(r for r in rows if r.get("segment"))
    video["segment"] = "[" * 200_000 + "]" * 200_000
    path = _write(tmp_path / "seg.parquet", rows, v1["parquet_file"])
    with pytest.raises(DataError, match=rf"item '{video['question_id']}', field 'segment': segment is not a \[start, end\] list"):
        seed1.load(path)


def test_oversized_tsv_cell_is_one_line(tmp_path, monkeypatch):
    from mmbench_lib.tasks.copies import tables

    monkeypatch.setattr(tables, "MAX_CELL", 1000)
    tsv = dc._write_tsv(tmp_path / "SEEDBench_IMG.tsv", ["index", "question", "A", "B", "C", "D", "answer", "category", "image"],
                        [{"index": "1", "question": "q", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A",
                          "category": "Scene Understanding", "image": "A" * 5000}])
    with pytest.raises(DataError, match="SEEDBench_IMG.tsv: expected a VLMEvalKit TSV, found a row it cannot read"):
        seed1.load(tsv)
