"""SEED-Bench-2-Plus: the official JSON and a parquet copy give the same items; bad input names
file, item and field; per-category and per-subtype tallies."""
from __future__ import annotations

import io
import json

import pytest

from mmbench_lib.core.items import DataError
from mmbench_lib.core.metrics import summarize
from mmbench_lib.tasks import get_task
from mmbench_lib.tasks import seed2plus as S


def _png(colour):
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(buf, format="PNG")
    return buf.getvalue()


def _questions():
    rows = []
    for i, (cat, sub, ans) in enumerate([("chart", "tree diagram", "D"), ("map", "road map", "A"),
                                          ("web", "Amazon", "B"), ("chart", "gantt chart", "C")]):
        rows.append({"question_id": str(i), "question": f"Q{i}?", "choice_A": "a", "choice_B": "b", "choice_C": "c",
                     "choice_D": "d", "answer": ans, "data_id": f"text_rich/{i}.png", "question_image_type": cat,
                     "question_image_subtype": sub, "data_source": "SEED-Bench v2 plus", "level": "L1",
                     "version": "v2+"})
    return rows


@pytest.fixture
def official(tmp_path):
    root = tmp_path / "s2p"
    (root / "text_rich").mkdir(parents=True)
    for i in range(4):
        (root / "text_rich" / f"{i}.png").write_bytes(_png((60 * i, 0, 0)))
    ann = root / S.ANNOTATION_FILE
    ann.write_text(json.dumps(_questions()))
    return ann


def test_official_json(official):
    items = S.load(official)
    assert [it.dimension for it in items] == ["Charts", "Maps", "Webs", "Charts"]
    assert items[0].meta["subtype"] == "tree diagram" and items[0].image_type == ["tree diagram"] and items[0].answer == "D"
    assert items[0].images[0].endswith("text_rich/0.png") and "media_error" not in items[0].meta
    assert [it.id for it in S.load(official, dimensions=[2, 3])] == ["1", "2"]
    assert [it.id for it in S.load(official, subtypes=["gantt chart"])] == ["3"]


def test_object_with_questions_list(official):
    official.write_text(json.dumps({"questions": _questions()}))
    assert len(S.load(official)) == 4


def test_parquet_copy_matches_json(official, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{**q, "image": {"bytes": _png((60 * i, 0, 0)), "path": None}} for i, q in enumerate(_questions())]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "test-00000.parquet")
    a = S.load(official)
    b = S.load(tmp_path / "test-00000.parquet", cache_dir=tmp_path / "cache")
    assert [(x.id, x.choices, x.answer, x.dimension, x.meta["subtype"]) for x in a] == \
           [(x.id, x.choices, x.answer, x.dimension, x.meta["subtype"]) for x in b]
    from PIL import Image

    with Image.open(a[2].images[0]) as ia, Image.open(b[2].images[0]) as ib:
        assert ia.convert("RGB").tobytes() == ib.convert("RGB").tobytes()


def test_lower_case_choice_key_is_named(official):
    qs = _questions()
    qs[1]["choice_b"] = qs[1].pop("choice_B")
    official.write_text(json.dumps(qs))
    with pytest.raises(DataError, match=r"item '1'.*choice_b.*upper|lower case.*'choice_B'"):
        S.load(official)


def test_bad_answer_and_category(official):
    qs = _questions()
    qs[0]["answer"] = "E"
    official.write_text(json.dumps(qs))
    with pytest.raises(DataError, match=r"item '0'.*answer"):
        S.load(official)
    qs = _questions()
    qs[2]["question_image_type"] = "table"
    official.write_text(json.dumps(qs))
    with pytest.raises(DataError, match=r"item '2'.*question_image_type"):
        S.load(official)


def test_image_path_escape_is_marked(official):
    qs = _questions()
    qs[0]["data_id"] = "../../etc/passwd"
    official.write_text(json.dumps(qs))
    items = S.load(official)
    assert "media_error" in items[0].meta


def test_task_registered_and_tables(official):
    t = get_task("seed2-plus")
    assert t.name == "seed2plus" and t.protocol == "ranking" and not t.problems()
    items = S.load(official)
    rows = [{"id": it.id, "dimension_id": it.dimension_id, "dimension": it.dimension, "image_type": it.image_type,
             "status": "ok", "correct": c, "num_choices": 4} for it, c in zip(items, [True, False, True, False])]
    sub = S.per_subtype(rows)
    assert sub[("Charts", "tree diagram")]["accuracy"] == 1.0 and sub[("Charts", "gantt chart")]["n"] == 1
    summary = summarize(rows, S.GROUPS, intervals=False)
    groups = {g["group"]: g for g in summary["groups"]}
    assert groups["Overall"]["accuracy_micro"] == 0.5 and groups["Overall"]["n"] == 4
    assert groups["Charts"]["n"] == 2 and groups["Charts"]["accuracy"] == 0.5 and groups["Webs"]["accuracy"] == 1.0
