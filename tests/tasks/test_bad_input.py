"""Bad input: clear errors naming file, item and field, or one failed item while the run goes on."""
import json
import shutil

import pytest

from mmbench_lib import tasks as benchmarks
from mmbench_lib.pipeline.ranking import rank_items
from mmbench_lib.core.items import DataError
from mmbench_lib.models import RandomChoice
from mmbench_lib.tasks.recipes import get_recipe
from mmbench_lib.core.store import RunStore

seed1 = benchmarks.get("seed")
seed2 = benchmarks.get("seed2")


def _rewrite(src, dst, edit):
    data = json.loads(open(src).read())
    edit(data)
    with open(dst, "w") as f:
        json.dump(data, f)
    return dst


def test_missing_annotation_file(tmp_path):
    with pytest.raises(DataError, match="annotation file not found") as e:
        seed1.load(tmp_path / "SEED-Bench.json")
    assert "SEED-Bench.json" in str(e.value)


def test_malformed_json_names_file_and_line(tmp_path):
    p = tmp_path / "SEED-Bench.json"
    p.write_text('{"questions": [ {"question_id": "1",, } ]}')
    with pytest.raises(DataError, match=r"SEED-Bench.json: not valid JSON .* line 1"):
        seed1.load(p)


def test_missing_choice_field_names_item_and_field(demo, tmp_path):
    d = demo["seed"]
    bad = _rewrite(d["annotation_file"], tmp_path / "SEED-Bench.json", lambda j: j["questions"][4].pop("choice_c"))
    qid = json.loads(open(bad).read())["questions"][4]["question_id"]
    with pytest.raises(DataError) as e:
        seed1.load(bad, d["image_root"])
    assert str(bad) in str(e.value) and repr(qid) in str(e.value) and "'choice_c'" in str(e.value)


def test_unknown_dimension_id(demo, tmp_path):
    d = demo["seed2"]
    bad = _rewrite(d["annotation_file"], tmp_path / "v2.json", lambda j: j["questions"][0].update(question_type_id=31))
    with pytest.raises(DataError, match=r"field 'question_type_id': unknown dimension id 31"):
        seed2.load(bad, d["cc3m_dir"], d["seed_bench_v2_dir"])


def test_unknown_dimension_filter_is_rejected():
    with pytest.raises(ValueError, match="unknown SEED-Bench dimension id 13"):
        seed1.select_dimensions([1, 13])


def _run(items, tmp_path):
    return rank_items(items, RandomChoice(), RunStore(tmp_path / "run"), get_recipe("seed1-ppl"), progress=False)


def test_path_outside_root_and_missing_image_fail_only_their_items(demo, tmp_path):
    d = demo["seed"]

    def edit(j):
        j["questions"][0]["data_id"] = "../../../../etc/hostname"
        j["questions"][1]["data_id"] = "no_such_image"

    bad = _rewrite(d["annotation_file"], tmp_path / "SEED-Bench.json", edit)
    items = seed1.load(bad, d["image_root"], d["video_roots"])
    rows = {r["id"]: r for r in _run(items, tmp_path).rows()}
    assert len(rows) == len(items)
    first, second = rows[items[0].id], rows[items[1].id]
    assert first["status"] == "failed" and "outside its root" in first["error"] and "'data_id'" in first["error"]
    assert second["status"] == "failed" and "not found" in second["error"]
    assert sum(r["status"] == "ok" for r in rows.values()) == len(items) - 2


def test_unreadable_image_and_video_fail_only_their_items(demo, tmp_path, tiny_llava):
    d = demo["seed"]
    root = tmp_path / "copy"
    shutil.copytree(d["image_root"], root / "cc3m")
    shutil.copytree(d["video_roots"]["ssv2"], root / "ssv2")
    items = seed1.load(d["annotation_file"], root / "cc3m", {"ssv2": root / "ssv2"}, dimensions=[1, 10])
    img = next(it for it in items if it.dimension_id == 1)
    vid = next(it for it in items if it.dimension_id == 10)
    open(img.images[0], "wb").write(b"\x89PNG broken")
    open(vid.video.path, "wb").write(b"not a video")
    rows = {r["id"]: r for r in rank_items(items, tiny_llava, RunStore(tmp_path / "run"), get_recipe("seed1-ppl"),
                                           progress=False).rows()}
    assert rows[img.id]["status"] == "failed" and "unreadable image" in rows[img.id]["error"]
    assert rows[vid.id]["status"] == "failed" and "field 'video'" in rows[vid.id]["error"]
    assert sum(r["status"] == "ok" for r in rows.values()) == len(items) - 2


def test_img_marker_count_mismatch_marks_the_item(demo, tmp_path):
    d = demo["seed2"]

    def edit(j):
        q = next(q for q in j["questions"] if q["question_type_id"] == 23)
        q["question"] += " <img>"

    bad = _rewrite(d["annotation_file"], tmp_path / "v2.json", edit)
    items = seed2.load(bad, d["cc3m_dir"], d["seed_bench_v2_dir"], dimensions=[23])
    rows = _run(items, tmp_path).rows()
    assert rows[0]["status"] == "failed" and "<img> markers" in rows[0]["error"]
