"""MMMU and CMMMU loaders on the demo sets (hub parquet layout, CMMMU official and HF layouts), errors named."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from mmbench_lib.tasks import cmmmu, mmmu
from mmbench_lib.demo.mmmu import MMMU_COLUMNS
from mmbench_lib.core.items import DataError
from mmbench_lib.core.metrics import summarize
from mmbench_lib.tasks.mmmu_parser import subject_from_id

# ``demo`` (conftest.py): the paths ``make_demo`` returned, built once per session


@pytest.fixture(scope="module")
def mmmu_val(demo, tmp_path_factory):
    return mmmu.load(demo["mmmu"]["source"], split="validation", cache_dir=tmp_path_factory.mktemp("mmmu_cache"))


@pytest.fixture(scope="module")
def cmmmu_val(demo):
    return cmmmu.load(demo["cmmmu"]["root"], split="val")


def _by_id(items):
    return {it.id: it for it in items}


# ------------------------------------------------------------------------------------------- MMMU


def test_mmmu_demo_is_in_the_hub_layout(demo):
    root = Path(demo["mmmu"]["source"])
    subjects = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert subjects == sorted(demo["mmmu"]["subjects"])
    assert {mmmu.SUBJECT_TO_DISCIPLINE[s] for s in subjects} == set(mmmu.DISCIPLINES)  # all 6 disciplines
    for s in subjects:
        assert sorted(p.name for p in (root / s).iterdir()) == [
            f"{split}-00000-of-00001.parquet" for split in ("dev", "test", "validation")]
    table = pq.read_table(root / "Art" / "validation-00000-of-00001.parquet")
    assert tuple(table.column_names) == MMMU_COLUMNS
    assert table.schema.field("options").type == pa.string()  # string-encoded list (docs/protocols.md §3.1)
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert features["image_1"] == {"_type": "Image"}


def test_mmmu_parquet_decodes_with_datasets(demo, tmp_path):
    datasets = pytest.importorskip("datasets")
    f = Path(demo["mmmu"]["source"]) / "Computer_Science" / "validation-00000-of-00001.parquet"
    ds = datasets.load_dataset("parquet", data_files={"validation": str(f)}, split="validation", cache_dir=str(tmp_path))
    row = ds[2]
    assert isinstance(row["image_1"], Image.Image) and isinstance(row["image_2"], Image.Image) and row["image_3"] is None
    assert row["question"].startswith("<image 2>")


def test_mmmu_items(mmmu_val):
    items = _by_id(mmmu_val)
    assert len(mmmu_val) == 24
    assert sum(it.question_type == "multiple-choice" for it in mmmu_val) == 20
    assert sum(it.question_type == "short-answer" for it in mmmu_val) == 4
    assert {it.group for it in mmmu_val} == set(mmmu.DISCIPLINES)
    for it in mmmu_val:
        assert it.benchmark == "mmmu" and it.split == "validation"
        assert it.dimension == subject_from_id(it.id)
        assert mmmu.DIMENSIONS[it.dimension_id] == (it.dimension, it.group)
        assert it.difficulty in ("Easy", "Medium", "Hard") and it.image_type and it.meta["subfield"]
        assert len(it.images) == len(it.meta["image_tags"]) and all(Path(p).is_file() for p in it.images)
        assert "media_error" not in it.meta
        if it.question_type == "multiple-choice":
            assert it.answer in it.letters
        else:
            assert it.choices == []
    # open golds: plain strings, and the HF list string parsed (P-M2)
    assert items["validation_Electronics_3"].answer == ["3/4", "0.75"]
    assert items["validation_Electronics_3"].meta["answer_raw"] == "['3/4', '0.75']"
    assert isinstance(items["validation_Art_3"].answer, str)
    # two images, referenced <image 2> first: images follow first appearance
    two = items["validation_Computer_Science_3"]
    assert two.meta["image_tags"] == ["<image 2>", "<image 1>"]
    assert "_image_2-" in Path(two.images[0]).name and "_image_1-" in Path(two.images[1]).name
    # images as options: placeholders stay verbatim, images in question-then-options order
    opt = items["validation_Art_2"]
    assert opt.choices[:2] == ["<image 2>", "<image 3>"] and opt.meta["option_images"] == {"A": "<image 2>", "B": "<image 3>"}
    assert opt.meta["image_tags"] == ["<image 1>", "<image 2>", "<image 3>"]
    assert "<image 1>" in opt.question


def test_mmmu_images_are_png_written_once(demo, tmp_path):
    first = mmmu.load(demo["mmmu"]["source"], subjects=["cs"], cache_dir=tmp_path)
    stamps = {p: Path(p).stat().st_mtime_ns for it in first for p in it.images}
    again = mmmu.load(demo["mmmu"]["source"], subjects=["Computer Science"], cache_dir=tmp_path)
    assert [it.images for it in again] == [it.images for it in first]
    assert {p: Path(p).stat().st_mtime_ns for it in again for p in it.images} == stamps
    for p in stamps:
        with Image.open(p) as img:
            assert img.format == "PNG"


def test_mmmu_splits_and_subject_filters(demo, tmp_path):
    src = demo["mmmu"]["source"]
    dev = mmmu.load(src, split="dev", cache_dir=tmp_path)
    assert len(dev) == 8 and all(it.meta["explanation"] for it in dev)
    test = mmmu.load(src, split="test", subjects=["Math", "phys"], cache_dir=tmp_path)
    assert [it.id for it in test] == ["test_Math_1", "test_Physics_1"]
    assert all(it.answer is None for it in test)  # withheld ("?")
    with pytest.raises(ValueError, match="unknown MMMU subject"):
        mmmu.load(src, subjects=["Astrology"], cache_dir=tmp_path)
    with pytest.raises(DataError, match="Biology.*no validation"):
        mmmu.load(src, subjects=["Biology"], cache_dir=tmp_path)
    with pytest.raises(ValueError, match="split"):
        mmmu.load(src, split="train", cache_dir=tmp_path)


def test_mmmu_hub_code_path(demo, tmp_path, monkeypatch):
    """``source`` as a hub id goes through ``datasets.load_dataset(source, subject, split=...)``."""
    datasets = pytest.importorskip("datasets")
    real = datasets.load_dataset
    calls = []

    def fake(path, name=None, split=None, **kw):
        calls.append((path, name, split))
        f = Path(demo["mmmu"]["source"]) / name / f"{split}-00000-of-00001.parquet"
        return real("parquet", data_files={split: str(f)}, split=split, cache_dir=str(tmp_path / "hf"))

    monkeypatch.setattr(datasets, "load_dataset", fake)
    hub = mmmu.load("MMMU/MMMU", split="validation", subjects=["Art", "Electronics"], cache_dir=tmp_path / "a")
    local = mmmu.load(demo["mmmu"]["source"], split="validation", subjects=["Art", "Electronics"], cache_dir=tmp_path / "b")
    assert calls == [("MMMU/MMMU", "Art", "validation"), ("MMMU/MMMU", "Electronics", "validation")]
    for h, loc in zip(hub, local):
        assert (h.id, h.question, h.choices, h.answer, h.meta["image_tags"]) == (loc.id, loc.question, loc.choices, loc.answer, loc.meta["image_tags"])
        assert [Path(p).read_bytes() for p in h.images] == [Path(p).read_bytes() for p in loc.images]


def test_mmmu_groups_work_with_metrics(mmmu_val):
    rows = [{"id": it.id, "dimension_id": it.dimension_id, "dimension": it.dimension, "status": "ok",
             "correct": it.dimension == "Math", "num_choices": max(len(it.choices), 1)} for it in mmmu_val]
    groups = {g["group"]: g for g in summarize(rows, mmmu.GROUPS, partial=True)["groups"]}
    assert groups["Science"]["n"] == 6 and groups["Science"]["accuracy_micro"] == pytest.approx(0.5)
    assert groups["Overall"]["n"] == 24 and groups["Overall"]["accuracy_micro"] == pytest.approx(0.125)


def _subject_copy(demo, tmp_path, subject="Accounting", split="validation"):
    """A one-subject copy of the MMMU demo and its rows, to corrupt."""
    src = Path(demo["mmmu"]["source"]) / subject / f"{split}-00000-of-00001.parquet"
    dst = tmp_path / "mmmu" / subject / src.name
    dst.parent.mkdir(parents=True)
    table = pq.read_table(src)
    return dst, table, table.to_pylist()


def _write(dst, table, rows):
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), dst)
    return dst.parents[1]


@pytest.mark.parametrize("field, value, message", [
    ("options", "['a', 'b'", "not a Python list literal"),
    ("options", "__import__('os')", "not a Python list literal"),
    ("question_type", "essay", "unknown question_type"),
    ("question", "What is <image 3>?", "placeholder <image 3> has no image"),
    ("answer", "F", "not one of the option letters"),
    ("img_type", "Tables", "not a Python list literal"),
])
def test_mmmu_bad_rows_name_file_item_and_field(demo, tmp_path, field, value, message):
    dst, table, rows = _subject_copy(demo, tmp_path)
    rows[0][field] = value
    root = _write(dst, table, rows)
    with pytest.raises(DataError, match=message) as e:
        mmmu.load(root, cache_dir=tmp_path / "c")
    where = "question" if field == "question" else field
    assert e.value.path == str(dst) and e.value.item_id == "validation_Accounting_1" and e.value.field == where


def test_mmmu_unreadable_image_marks_only_its_item(demo, tmp_path):
    dst, table, rows = _subject_copy(demo, tmp_path)
    rows[1]["image_1"] = {"bytes": b"not an image", "path": None}
    rows[2]["image_1"] = {"bytes": None, "path": "/nonexistent/x.png"}
    items = mmmu.load(_write(dst, table, rows), cache_dir=tmp_path / "c")
    assert "media_error" not in items[0].meta
    assert "cannot decode" in items[1].meta["media_error"] and "image_1" in items[1].meta["media_error"]
    assert "not a file" in items[2].meta["media_error"]


def test_mmmu_duplicate_id_and_bad_source(demo, tmp_path):
    dst, table, rows = _subject_copy(demo, tmp_path)
    rows[1]["id"] = rows[0]["id"]
    with pytest.raises(DataError, match="duplicate id"):
        mmmu.load(_write(dst, table, rows), cache_dir=tmp_path / "c")
    with pytest.raises(DataError, match="local data folder or a hub id"):
        mmmu.load(str(tmp_path / "no" / "such" / "folder"), cache_dir=tmp_path / "c")


# ------------------------------------------------------------------------------------------ CMMMU


def test_cmmmu_official_layout(demo):
    root = Path(demo["cmmmu"]["root"])
    for split in ("dev", "val", "test"):
        folders = sorted(p.name for p in (root / f"cmmmu-data-{split}").iterdir())
        assert folders == sorted(cmmmu.CATEGORY_FOLDER.values())
        for f in folders:
            recs = [json.loads(x) for x in (root / f"cmmmu-data-{split}" / f / f"{f}.jsonl").read_text().splitlines()]
            for r in recs:
                assert isinstance(r["id"], int) and r["type"] in ("选择", "判断", "填空")
                assert ("answer" in r) == (split != "test")
                for name in r["img_list"]:
                    assert (root / f"cmmmu-data-{split}" / f / name).is_file()


def test_cmmmu_items(cmmmu_val):
    items = _by_id(cmmmu_val)
    assert len(cmmmu_val) == 20
    assert [it.meta["category_zh"] for it in cmmmu_val] == sorted(
        (it.meta["category_zh"] for it in cmmmu_val), key=cmmmu.CATEGORY_ORDER.index)  # official category order
    types = {it.meta["type"] for it in cmmmu_val}
    assert types == {"选择", "判断", "填空"}
    for it in cmmmu_val:
        assert it.benchmark == "cmmmu" and it.split == "val"
        assert it.question_type == cmmmu.QUESTION_TYPES[it.meta["type"]]
        assert it.group == cmmmu.CATEGORY_EN[it.meta["category_zh"]]
        assert it.dimension == cmmmu.SUBJECTS[it.meta["category_zh"]][it.meta["subject_zh"]]
        assert cmmmu.DIMENSIONS[it.dimension_id] == (it.dimension, it.group)
        assert all(Path(p).is_file() for p in it.images) and "media_error" not in it.meta
        if it.meta["type"] == "选择":
            assert len(it.choices) == 4 and set(it.answer) <= set("ABCD")
        elif it.meta["type"] == "判断":
            assert it.answer in ("对", "错") and it.choices == []
    multi = [it for it in cmmmu_val if it.answer == "AC"]
    assert len(multi) == 2 and multi[0].choices == ["12", "7", "30", "9"]
    with_option_images = [it for it in cmmmu_val if any(c.startswith("<img=") for c in it.choices)]
    assert len(with_option_images) == 1
    it = with_option_images[0]
    assert [Path(p).name for p in it.images] == [f"q_{it.id}_001.png", f"a_{it.id}_001.png", f"a_{it.id}_002.png"]
    assert it.meta["image_tags"] == [f'<img="{Path(p).name}">' for p in it.images]
    assert items[it.id] is it


def test_cmmmu_hf_layout_matches_official(demo, tmp_path, cmmmu_val):
    hf = cmmmu.load(demo["cmmmu"]["hf_root"], split="validation", cache_dir=tmp_path)
    assert [it.id for it in hf] == [it.id for it in cmmmu_val]
    for a, b in zip(cmmmu_val, hf):
        assert (a.question, a.choices, a.answer, a.question_type, a.dimension, a.group, a.image_type, a.meta["subfield"]) == \
               (b.question, b.choices, b.answer, b.question_type, b.dimension, b.group, b.image_type, b.meta["subfield"])
        assert [Path(p).read_bytes() for p in a.images] == [Path(p).read_bytes() for p in b.images]


def test_cmmmu_splits_and_filters(demo):
    root = demo["cmmmu"]["root"]
    test = cmmmu.load(root, split="test", categories=["science", "商业"])
    assert [it.group for it in test] == ["Business", "Science"]
    assert all(it.answer is None for it in test)
    dev = cmmmu.load(Path(root) / "cmmmu-data-dev")  # a split folder works too
    assert len(dev) == 6 and all(it.meta["analysis"] for it in dev)
    with pytest.raises(ValueError, match="unknown CMMMU category"):
        cmmmu.load(root, categories=["astrology"])


def _cmmmu_copy(demo, tmp_path, folder="business"):
    src = Path(demo["cmmmu"]["root"]) / "cmmmu-data-val" / folder
    dst = tmp_path / "cmmmu" / "cmmmu-data-val" / folder
    shutil.copytree(src, dst)
    path = dst / f"{folder}.jsonl"
    return path, [json.loads(x) for x in path.read_text().splitlines()]


def _save_jsonl(path, recs):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    return path.parents[2]


@pytest.mark.parametrize("field, value, message", [
    ("type", "问答", "unknown type"),
    ("answer", "E", "letters A-D"),
    ("subcategory", "占星", "unknown subcategory"),
    ("category", "科学", "does not match its folder"),
])
def test_cmmmu_bad_records_name_file_item_and_field(demo, tmp_path, field, value, message):
    path, recs = _cmmmu_copy(demo, tmp_path)
    recs[0][field] = value
    root = _save_jsonl(path, recs)
    with pytest.raises(DataError, match=message) as e:
        cmmmu.load(root)
    assert e.value.path == str(path) and e.value.item_id == str(recs[0]["id"]) and e.value.field == field


def test_cmmmu_bad_json_line_and_missing_images(demo, tmp_path):
    path, recs = _cmmmu_copy(demo, tmp_path)
    root = _save_jsonl(path, recs)
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(DataError, match=r"line 4 is not valid JSON"):
        cmmmu.load(root)
    recs[0]["question"] = recs[0]["question"].replace("q_", "missing_q_")
    recs[1]["question"] = '<img="../../../etc/passwd">' + recs[1]["question"]
    _save_jsonl(path, recs)
    items = cmmmu.load(root)
    assert "file not found" in items[0].meta["media_error"]
    assert "outside its root" in items[1].meta["media_error"]
    assert all("media_error" not in it.meta for it in items[2:])


def test_cmmmu_hf_tag_without_image_is_an_error(demo, tmp_path):
    src = Path(demo["cmmmu"]["hf_root"]) / "science" / "val-00000-of-00001.parquet"
    dst = tmp_path / "hf" / "science" / src.name
    dst.parent.mkdir(parents=True)
    table = pq.read_table(src)
    rows = table.to_pylist()
    rows[0]["question"] += '<img="q_nowhere.png">'
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), dst)
    with pytest.raises(DataError, match="has no image") as e:
        cmmmu.load(tmp_path / "hf", cache_dir=tmp_path / "c")
    assert e.value.item_id == str(rows[0]["id"]) and e.value.field == "question"


# -------------------------------------------------------------------------------------------- OCR


def _ocr(path, lang):
    out = subprocess.run(["tesseract", str(path), "-", "-l", lang, "--psm", "6"], capture_output=True, text=True, timeout=60)
    return out.stdout


def test_demo_images_are_legible_to_tesseract(mmmu_val, cmmmu_val, demo):
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract not installed (Debian: tesseract-ocr tesseract-ocr-chi-sim)")
    expr = next(it for it in mmmu_val if it.question.endswith("What is the value of x?"))
    assert expr.choices[expr.answer_index] in _ocr(expr.images[0], "eng")
    chart = next(it for it in mmmu_val if it.question.startswith("According to the bar chart"))
    text = _ocr(chart.images[0], "eng")
    assert all(label in text for label in "PQRS")
    langs = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True).stdout.split()
    if "chi_sim" not in langs:
        pytest.skip("no chi_sim traineddata (Debian: tesseract-ocr-chi-sim): Chinese images not checked")
    if not demo["cmmmu"]["cjk_font"]:
        pytest.skip("the CMMMU demo drew Latin text (pip install cvttf-NotoSansCJK-Regular): Chinese images not checked")
    fill = next(it for it in cmmmu_val if it.meta["type"] == "填空" and not it.answer.isdigit())
    assert fill.answer in _ocr(fill.images[0], "chi_sim").replace(" ", "")


def test_cmmmu_demo_font_is_the_pinned_package_never_a_system_font(monkeypatch):
    """Demo bytes must not depend on the machine's fonts: only the PyPI-pinned font is used."""
    from mmbench_lib.demo import cmmmu as demo_mod

    path = demo_mod.cjk_font_path()
    if path is None:
        pytest.skip("cvttf-NotoSansCJK-Regular not installed: the demo draws Latin text")
    assert "cvttf_NotoSansCJK_Regular" in path and not path.startswith("/usr/share/fonts")
    monkeypatch.setattr(demo_mod, "CJK_FONT_PACKAGE", "no_such_font_package")
    assert demo_mod.cjk_font_path() is None  # absent package: Latin, whatever fonts the system has


def test_cmmmu_demo_without_a_cjk_font_draws_latin(tmp_path, monkeypatch):
    from mmbench_lib.demo import cmmmu as demo_mod

    monkeypatch.setattr(demo_mod, "cjk_font_path", lambda: None)
    paths = demo_mod.make_cmmmu_demo(tmp_path)
    assert paths["cjk_font"] is None
    items = cmmmu.load(paths["root"], split="val")
    assert len(items) == 20
    words = {latin for _zh, latin in demo_mod.CN_WORDS}
    fills = [it for it in items if it.meta["type"] == "填空" and not it.answer.isdigit()]
    assert fills and all(it.answer in words for it in fills)  # the gold is what the image shows
