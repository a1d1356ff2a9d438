"""Nothing lost, nothing escapes: the run store, the path policy, strict loaders and media checks."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mmbench_lib import tasks as benchmarks
from mmbench_lib.core.items import DataError, Item, VideoClip
from mmbench_lib.core.media import MediaError, check_media, load_visual_inputs
from mmbench_lib.core.paths import PathEscape, inside, safe_name, validate_run_id
from mmbench_lib.core.store import RunLockedError, RunStore
from mmbench_lib.models import RandomChoice
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.ranking import rank_items
from mmbench_lib.tasks.recipes import get_recipe

seed1, seed2 = benchmarks.get("seed"), benchmarks.get("seed2")
mmmu, cmmmu = benchmarks.get("mmmu"), benchmarks.get("cmmmu")
REPO = Path(__file__).resolve().parents[1]


def _rows(n):
    return [{"id": f"q{i}", "status": "ok", "prediction": "A"} for i in range(n)]


def _store_with(tmp_path, bad_line: bytes, at: int = 2, n: int = 5):
    """A predictions file of ``n`` valid rows with ``bad_line`` inserted before row ``at``."""
    with RunStore(tmp_path) as s:
        s.append(_rows(n))
    path = s.predictions_path
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:at] + [bad_line] + lines[at:]))
    return path, b"".join(lines)


# --- run store ---------------------------------------------------------------------------------

@pytest.mark.parametrize("bad, reason", [
    (b'{"id": "q9", "status": "o\n', "not valid JSON"),  # torn line in the middle
    (b'[1, 2, 3]\n', "not a JSON object"),
    (b'"just a string"\n', "not a JSON object"),
    (b'{"id": "q7", "x": "\x00\x00"}\n', "NUL bytes"),
])
def test_bad_line_anywhere_is_quarantined_and_later_rows_kept(tmp_path, bad, reason):
    path, valid = _store_with(tmp_path, bad)
    with pytest.warns(UserWarning, match=rf"line 3 quarantined .*{reason}"):
        store = RunStore(tmp_path)
    assert [r["id"] for r in store.rows()] == [f"q{i}" for i in range(5)]  # rows after the bad line kept
    assert path.read_bytes() == valid
    q = [json.loads(x) for x in store.quarantine_path.read_text().splitlines()]
    assert len(q) == 1 and q[0]["line"] == 3 and reason in q[0]["reason"]
    assert q[0]["raw"].encode("utf-8", "backslashreplace") .startswith(bad.rstrip(b"\n")[:5])
    store.close()
    assert len(RunStore(tmp_path).rows()) == 5  # reopens cleanly, nothing more to quarantine


def test_torn_last_line_is_quarantined(tmp_path):
    path, valid = _store_with(tmp_path, b"", n=3)
    path.write_bytes(valid + b'{"id": "q3", "sta')
    with pytest.warns(UserWarning, match="line 4 quarantined .*no newline"):
        store = RunStore(tmp_path)
    assert path.read_bytes() == valid and len(store.rows()) == 3
    assert json.loads(store.quarantine_path.read_text())["raw"] == '{"id": "q3", "sta'


def test_readonly_open_never_writes(tmp_path, demo):
    d = demo["seed"]
    items = seed1.load(d["annotation_file"], d["image_root"], dimensions=[1, 2])[:6]
    store = rank_items(items, RandomChoice(), RunStore(tmp_path), get_recipe("seed1-ppl"), progress=False)
    store.close()
    path = store.predictions_path
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2] + [b"not json\n"] + lines[2:]) + b'{"id": "torn')
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    with pytest.warns(UserWarning, match="line 3 skipped"):
        ro = RunStore(tmp_path, readonly=True)
    with pytest.warns(UserWarning, match="line 8 skipped"):
        metrics = runs.metrics_from_store(tmp_path, "seed")
    assert len(ro.rows()) == 6 and metrics["counts"]["items"] == 6
    with pytest.raises(PermissionError, match="read-only"):
        ro.append(_rows(1))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    assert not RunStore(tmp_path / "absent", readonly=True).rows() and not (tmp_path / "absent").exists()


def test_second_writer_is_refused_with_the_holder_named(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from mmbench_lib.core.store import RunStore; s = RunStore(sys.argv[1]); "
                               "print('ready', flush=True); sys.stdin.read()", str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(RunLockedError, match=rf"being written by another process \(pid {holder.pid} on host "):
            RunStore(tmp_path)
        assert len(str(pytest.raises(RunLockedError, RunStore, tmp_path).value).splitlines()) == 1
        RunStore(tmp_path, readonly=True)  # readers are not blocked
    finally:
        holder.communicate("", timeout=60)
    RunStore(tmp_path).append(_rows(1))  # the lock is released with its holder


# --- path policy -------------------------------------------------------------------------------

def test_inside_refuses_absolute_dotdot_and_symlink(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret.png").write_bytes(b"x")
    (root / "link.png").symlink_to(tmp_path / "secret.png")
    assert inside(root, "sub/a.png") == (root / "sub" / "a.png").resolve()
    for bad in (str(tmp_path / "secret.png"), "../secret.png", "sub/../../secret.png", "link.png"):
        with pytest.raises(PathEscape, match="outside its root"):
            inside(root, bad)


@pytest.mark.parametrize("run_id", ["..", ".", "", "a/b", "../x", "notebooks", "mmbench_lib", "tests", "params", "docs"])
def test_bad_run_ids_are_refused(run_id, tmp_path, monkeypatch):
    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path / "outputs"))
    with pytest.raises(ValueError, match="invalid run id"):
        validate_run_id(run_id)
    if run_id:  # empty means "make a fresh id"
        with pytest.raises(ValueError, match="invalid run"):
            runs.run_dir(run_id)
    assert not (tmp_path / "outputs").exists() or not any((tmp_path / "outputs").iterdir())


def test_runner_refuses_a_run_id_naming_a_source_folder(tmp_path, monkeypatch):
    from mmbench_lib.runner import run_notebook

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(REPO))
    before = sorted(p.name for p in (REPO / "notebooks").iterdir())
    with pytest.raises(ValueError, match="source folder"):
        run_notebook(REPO / "notebooks" / "00_quickstart.ipynb", run_id="notebooks")
    assert sorted(p.name for p in (REPO / "notebooks").iterdir()) == before


def test_hostile_item_ids_make_safe_cache_names(demo, tmp_path):
    assert safe_name("validation_Accounting_1_image_1") == "validation_Accounting_1_image_1"  # unchanged ids keep their names
    for hostile in ("../../evil", "/etc/passwd", "..", "a/b"):
        name = safe_name(hostile)
        assert "/" not in name and not name.startswith(".") and name != safe_name(hostile + "x")
    src = Path(demo["mmmu"]["source"]) / "Accounting" / "validation-00000-of-00001.parquet"
    dst = tmp_path / "mmmu" / "Accounting" / src.name
    dst.parent.mkdir(parents=True)
    table = pq.read_table(src)
    rows = table.to_pylist()
    rows[0]["id"] = "../../../../escaped"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), dst)
    cache = tmp_path / "cache"
    items = mmmu.load(tmp_path / "mmmu", cache_dir=cache)
    assert items[0].id == "../../../../escaped" and items[0].images
    for p in items[0].images:
        inside(cache, p)
    assert not list(tmp_path.glob("escaped*")) and not list(tmp_path.parent.glob("escaped*"))


@pytest.mark.parametrize("cell_path", ["/etc/hostname", "../../../../../../etc/hostname"])
def test_mmmu_image_cell_path_outside_the_data_folder_is_not_read(demo, tmp_path, cell_path):
    src = Path(demo["mmmu"]["source"]) / "Accounting" / "validation-00000-of-00001.parquet"
    dst = tmp_path / "mmmu" / "Accounting" / src.name
    dst.parent.mkdir(parents=True)
    table = pq.read_table(src)
    rows = table.to_pylist()
    rows[0]["image_1"] = {"bytes": None, "path": cell_path}
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), dst)
    items = mmmu.load(tmp_path / "mmmu", cache_dir=tmp_path / "c")
    assert "outside its root" in items[0].meta["media_error"] and len(items) == len(rows)
    row = rank_items(items[:1], RandomChoice(), RunStore(tmp_path / "run"), get_recipe("seed1-ppl"), progress=False).rows()[0]
    assert row["status"] == "failed" and "outside its root" in row["error"]


def test_cmmmu_absolute_image_tag_is_not_read(demo, tmp_path):
    src = Path(demo["cmmmu"]["root"]) / "cmmmu-data-val" / "business"
    shutil.copytree(src, tmp_path / "cmmmu-data-val" / "business")
    path = tmp_path / "cmmmu-data-val" / "business" / "business.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    recs[0]["question"] += '<img="/etc/hostname">'
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))
    items = cmmmu.load(tmp_path, split="val", categories=["business"])
    assert "outside its root" in items[0].meta["media_error"]


def test_symlinked_frame_leading_out_of_frames_root_fails_its_item(demo, tmp_path):
    d = demo["seed"]
    items = seed1.load(d["annotation_file"], d["image_root"], d["video_roots"], dimensions=[10])
    frames_root = tmp_path / "frames"
    good, bad = items[0].id, items[1].id
    for qid in (good, bad):  # the 8 frames of the official extracts (a bad one's 8th leads out of the root)
        (frames_root / qid).mkdir(parents=True)
        for i in range(8 if qid == good else 7):
            shutil.copy(items[0].images[0] if items[0].images else _any_png(d), frames_root / qid / f"{i + 1}.png")
    (tmp_path / "outside.png").write_bytes((frames_root / good / "1.png").read_bytes())
    (frames_root / bad / "8.png").symlink_to(tmp_path / "outside.png")
    got = {it.id: it for it in seed1.load(d["annotation_file"], d["image_root"], frames_root=frames_root, dimensions=[10])}
    assert "media_error" not in got[good].meta and len(got[good].frames) == 8
    assert "outside its root" in got[bad].meta["media_error"] and not got[bad].frames
    with pytest.raises(MediaError, match="field 'frames'.*outside its root"):
        check_media(got[bad])


def _any_png(d):
    return next(p for p in Path(d["image_root"]).iterdir() if p.is_file())


def test_generated_dir_is_not_left_by_a_question_id(tmp_path):
    from mmbench_lib.scoring.clip_judge import ClipJudge, ImageOutputScorer

    (tmp_path / "gen").mkdir()
    (tmp_path / "x.png").write_bytes(b"x")
    scorer = ImageOutputScorer(ClipJudge(pretrained=None), str(tmp_path / "gen"))
    item = Item(id="../x", benchmark="seed2", question="q", choices=["a"] * 4, output="image")
    with pytest.raises(MediaError, match="field 'generated image'.*outside its root"):
        scorer.generated_image(item, RandomChoice())


# --- strict loaders ----------------------------------------------------------------------------

def _rewrite(src, dst, edit):
    data = json.loads(Path(src).read_text())
    edit(data["questions"])
    Path(dst).write_text(json.dumps(data))
    return dst


@pytest.mark.parametrize("edit, field, message", [
    (lambda qs: qs[3].update(question_id=qs[0]["question_id"]), "question_id", "duplicate id"),
    (lambda qs: qs[0].update(question_type_id=3.7), "question_type_id", "not an integer: 3.7"),
    (lambda qs: qs[0].update(question_type_id=True), "question_type_id", "not an integer: True"),
    (lambda qs: qs[0].update(choice_b=None), "choice_b", "expected a string, got NoneType"),
    (lambda qs: qs[0].update(choice_e="a fifth"), "choice_e", "extra choice"),
])
def test_seed1_loader_never_coerces(demo, tmp_path, edit, field, message):
    d = demo["seed"]
    bad = _rewrite(d["annotation_file"], tmp_path / "SEED-Bench.json", edit)
    with pytest.raises(DataError, match=message) as e:
        seed1.load(bad, d["image_root"], d["video_roots"])
    assert e.value.path == str(bad) and e.value.field == field and e.value.item_id


@pytest.mark.parametrize("edit, field, message", [
    (lambda qs: qs[0].update(level="L4"), "level", "unknown level 'L4'"),
    (lambda qs: qs[2].update(question_id=qs[1]["question_id"]), "question_id", "duplicate id"),
    (lambda qs: qs[0].update(choice_a=None), "choice_a", "expected a string"),
    (lambda qs: qs[0].update(question_type_id="3.7"), "question_type_id", "not an integer"),
])
def test_seed2_loader_never_coerces(demo, tmp_path, edit, field, message):
    d = demo["seed2"]
    bad = _rewrite(d["annotation_file"], tmp_path / "v2.json", edit)
    with pytest.raises(DataError, match=message) as e:
        seed2.load(bad, d["cc3m_dir"], d["seed_bench_v2_dir"], level="L3")
    assert e.value.path == str(bad) and e.value.field == field


def test_mmmu_null_option_is_an_error_not_none(demo, tmp_path):
    src = Path(demo["mmmu"]["source"]) / "Accounting" / "validation-00000-of-00001.parquet"
    dst = tmp_path / "mmmu" / "Accounting" / src.name
    dst.parent.mkdir(parents=True)
    table = pq.read_table(src)
    rows = table.to_pylist()
    rows[0]["options"] = "['12', None, '14']"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), dst)
    with pytest.raises(DataError, match="every entry must be a string, got None") as e:
        mmmu.load(tmp_path / "mmmu", cache_dir=tmp_path / "c")
    assert e.value.field == "options" and e.value.item_id == rows[0]["id"]


@pytest.mark.parametrize("edit, field, message", [
    (lambda r: r.update(answer="D", option4=""), "answer", "names no existing option"),
    (lambda r: r.update(option2=None), "option2", "expected a string"),
    (lambda r: r.update(option5="extra"), "option5", "extra option"),
])
def test_cmmmu_multiple_choice_is_strict(demo, tmp_path, edit, field, message):
    src = Path(demo["cmmmu"]["root"]) / "cmmmu-data-val" / "business"
    shutil.copytree(src, tmp_path / "cmmmu-data-val" / "business")
    path = tmp_path / "cmmmu-data-val" / "business" / "business.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    rec = next(r for r in recs if r["type"] == "选择")
    edit(rec)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))
    with pytest.raises(DataError, match=message) as e:
        cmmmu.load(tmp_path, split="val", categories=["business"])
    assert e.value.field == field and e.value.item_id == str(rec["id"])


# --- media -------------------------------------------------------------------------------------

def test_empty_or_reversed_segment_is_a_failed_item_never_ok(demo, tmp_path):
    d = demo["seed"]
    src = json.loads(Path(d["annotation_file"]).read_text())
    q = next(q for q in src["questions"] if q["question_type_id"] == 12)
    bad = _rewrite(d["annotation_file"], tmp_path / "SEED-Bench.json",
                   lambda qs: next(x for x in qs if x["question_id"] == q["question_id"]).update(segment=[40, 12]))
    items = {it.id: it for it in seed1.load(bad, d["image_root"], d["video_roots"], dimensions=[12])}
    row = {r["id"]: r for r in rank_items(list(items.values()), RandomChoice(), RunStore(tmp_path / "run"),
                                          get_recipe("seed1-ppl"), progress=False).rows()}[q["question_id"]]
    assert row["status"] == "failed" and "empty or reversed segment" in row["error"]
    # a segment shorter than one frame selects nothing: the vision path and the blind check both refuse it
    it = items[q["question_id"]]
    it.meta.pop("media_error")
    it.video = VideoClip(it.video.path, "seconds", (1.0, 1.001))
    with pytest.raises(MediaError, match="field 'video'.*selects no frame"):
        load_visual_inputs(it)
    with pytest.raises(MediaError, match="selects no frame"):
        check_media(it)


def test_broken_image_fails_the_blind_model_too(demo, tmp_path):
    d = demo["seed"]
    shutil.copytree(d["image_root"], tmp_path / "cc3m")
    items = seed1.load(d["annotation_file"], tmp_path / "cc3m", dimensions=[1])
    Path(items[0].images[0]).write_bytes(b"\x89PNG broken")
    rows = {r["id"]: r for r in rank_items(items, RandomChoice(), RunStore(tmp_path / "run"), get_recipe("seed1-ppl"),
                                           progress=False).rows()}
    assert rows[items[0].id]["status"] == "failed" and "unreadable image" in rows[items[0].id]["error"]
    assert all(rows[it.id]["status"] == "ok" for it in items[1:])


def test_executed_notebook_is_published_only_as_whole_json(tmp_path):
    """A full disk or a killed kernel leaves a torn partial notebook: it never replaces the run's notebook."""
    from mmbench_lib.runner import _publish_notebook

    final, partial = tmp_path / "10_seed_bench.ipynb", tmp_path / ".10_seed_bench.partial.ipynb"
    final.write_text('{"cells": [], "note": "the last whole notebook"}', encoding="utf-8")
    partial.write_text('{"cells": [{"cell_type": "code", "sour', encoding="utf-8")  # cut off mid-write
    _publish_notebook(partial, final)
    assert json.loads(final.read_text(encoding="utf-8"))["note"] == "the last whole notebook" and partial.exists()
    partial.write_text('{"cells": [], "note": "finished"}', encoding="utf-8")
    _publish_notebook(partial, final)
    assert json.loads(final.read_text(encoding="utf-8"))["note"] == "finished" and not partial.exists()


# --- a run folder is bound to its settings (issue 27 §1) -------------------------------------------------------

NB10 = REPO / "notebooks" / "10_seed_bench.ipynb"


def _finished_folder(tmp_path, params):
    """A run folder as `mmbench run` leaves it: params.yaml, the executed notebook, predictions, metrics."""
    import yaml

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "params.yaml").write_text(yaml.safe_dump({**params, "run_id": "run"}))
    (folder / NB10.name).write_text('{"cells": []}')
    (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows(36)))
    (folder / "metrics.json").write_text('{"counts": {"items": 36}}')
    return folder


@pytest.mark.parametrize("change, field", [
    ({"limit": 3}, "limit=36"), ({"dimensions": [1]}, "dimensions='all'"), ({"level": "L1"}, "level='L2'"),
    ({"part": "Single-Image & Text Comprehension"}, "part='all'"), ({"limit": 0, "dimensions": "image"}, "dimensions")])
def test_resume_with_a_narrower_or_other_selection_is_refused_before_any_write(tmp_path, monkeypatch, change, field):
    """Probe: resuming a finished 36-item run with --limit 3 exited 0 and rewrote metrics.json to 3 items;
    a refused resume first overwrote params.yaml. Now: one line naming the field, nothing written."""
    from mmbench_lib.runner import ParameterError, prepare_run

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path))
    folder = _finished_folder(tmp_path, {"benchmark": "seed", "limit": 36})
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(ParameterError, match=f"selection {field}.*another --run-id") as e:
        prepare_run(NB10, overrides={"benchmark": "seed", "limit": 36, **change}, run_id="run")
    assert "\n" not in str(e.value)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_resume_with_the_same_or_a_larger_limit_is_allowed(tmp_path, monkeypatch):
    from mmbench_lib.runner import prepare_run

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path))
    folder = _finished_folder(tmp_path, {"benchmark": "seed", "limit": 36})
    saved = (folder / "params.yaml").read_bytes()
    for limit in (36, 40, 0):
        prepare_run(NB10, overrides={"benchmark": "seed", "limit": limit, "batch_size": 2}, run_id="run")
    assert (folder / "params.yaml").read_bytes() == saved  # rewritten only when the run has finished


def test_pipeline_refuses_a_narrower_selection_and_keeps_the_metrics(demo, tmp_path):
    """The same guard inside ``evaluate`` (a notebook run in JupyterLab, the Python API)."""
    from mmbench_lib.pipeline.config import RunConfig

    data = runs.demo_args("seed", demo)
    out = tmp_path / "r"
    runs.evaluate(RunConfig("seed", out, data=data, model="random", limit=8, progress=False))
    metrics = (out / "metrics.json").read_bytes()
    with pytest.raises(ValueError, match="selection limit=8; this run asks for limit=3"):
        runs.evaluate(RunConfig("seed", out, data=data, model="random", limit=3, progress=False))
    with pytest.raises(ValueError, match=r"task\.data\.dimensions None \(this call: \[1\]\)"):
        runs.evaluate(RunConfig("seed", out, data={**data, "dimensions": [1]}, model="random", limit=8, progress=False))
    assert (out / "metrics.json").read_bytes() == metrics
    assert runs.evaluate(RunConfig("seed", out, data=data, model="random", limit=10, progress=False))["counts"]["items"] == 10


def test_refused_resume_inside_the_notebook_keeps_notebook_and_params(tmp_path, monkeypatch):
    """A check the notebook itself makes (here: another video_input, which only the store knows) refuses
    the resume after the kernel started: the finished run's notebook and params.yaml stay as they were."""
    import nbformat

    from mmbench_lib.runner import NotebookFailed, run_notebook

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path))
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell("x = 1\nrun_id = ''", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("assert x == 1, 'refused: another setting'")]
    for i, c in enumerate(nb.cells):
        c.id = f"c{i}"
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    folder = run_notebook(path, overrides={"x": 1}, run_id="p", progress=False)
    (folder / "predictions.jsonl").write_text('{"id": "1"}\n')
    before = {n: (folder / n).read_bytes() for n in ("params.yaml", "probe.ipynb")}
    with pytest.raises(NotebookFailed, match="refused: another setting.*partial notebook: .*partial"):
        run_notebook(path, overrides={"x": 2}, run_id="p", progress=False)
    assert {n: (folder / n).read_bytes() for n in before} == before


# --- merge and metrics check what they join (issue 27 §2) ------------------------------------------------------

def _shard(demo, out, k, n, **kw):
    from mmbench_lib.pipeline.config import RunConfig

    kw = {"model": "random", "limit": 12, **kw}
    return runs.evaluate(RunConfig("seed", out, data=runs.demo_args("seed", demo), shard_index=k, num_shards=n,
                                   progress=False, **kw))


@pytest.mark.parametrize("other, field", [({"model": "random:7"}, "model"), ({"limit": 10}, "selection"),
                                           ({"recipe": "lmms-eval-ppl"}, "recipe"), ({"reduction": "mean"}, "reduction")])
def test_merge_refuses_shards_of_different_runs_naming_the_field(demo, tmp_path, other, field):
    """Probe: shards made with another model, limit or recipe merged into one run labelled with one model."""
    from mmbench_lib.cli import main

    _shard(demo, tmp_path / "a", 0, 2)
    _shard(demo, tmp_path / "b", 1, 2, **other)
    with pytest.raises(ValueError, match=f"shards of different runs \\({field}: "):
        runs_merge = __import__("mmbench_lib.pipeline.shards", fromlist=["merge_runs"]).merge_runs
        runs_merge([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    assert main(["merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "m")]) == 2
    assert not (tmp_path / "m").exists()


def test_benchmark_override_contradicting_the_run_is_refused(demo, tmp_path, capsys):
    """Probe: `metrics --benchmark mmmu` over a SEED run printed MMMU subjects, exit 0."""
    from mmbench_lib.cli import main
    from mmbench_lib.pipeline.config import RunConfig

    runs.evaluate(RunConfig("seed", tmp_path / "r", data=runs.demo_args("seed", demo), model="random", limit=6,
                            progress=False))
    assert main(["metrics", str(tmp_path / "r"), "--benchmark", "mmmu"]) == 2
    assert "--benchmark mmmu: " in capsys.readouterr().err
    assert main(["metrics", str(tmp_path / "r"), "--benchmark", "seed1"]) == 0  # an alias of the same task
    _shard(demo, tmp_path / "s", 0, 1 + 1)
    _shard(demo, tmp_path / "s", 1, 2)
    assert main(["merge", str(tmp_path / "s"), "--out", str(tmp_path / "m"), "--benchmark", "seed2"]) == 2
    assert "is a seed run" in capsys.readouterr().err


def test_empty_shards_are_legal_and_merge_to_the_whole_run(demo, tmp_path):
    """Probe: more shards than items failed three times with KeyError 'dimension_id', then "not merged"."""
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.shards import merge_runs

    whole = runs.evaluate(RunConfig("seed", tmp_path / "w", data=runs.demo_args("seed", demo), model="random",
                                    limit=2, progress=False))
    counts = [_shard(demo, tmp_path / "s", k, 5, limit=2)["counts"]["items"] for k in range(5)]
    assert 0 in counts and sum(counts) == 2
    merged = merge_runs([tmp_path / "s"], tmp_path / "m")
    assert merged["per_dimension"] == whole["per_dimension"] and merged["counts"] == whole["counts"]
    empty = runs.evaluate(RunConfig("seed", tmp_path / "z", data=runs.demo_args("seed", demo, dimensions=[1]),
                                    model="random", limit=2, num_shards=40, shard_index=39, progress=False))
    assert empty["counts"]["items"] == 0 and empty["per_dimension"] == []


def test_merge_out_naming_a_file_is_one_line(demo, tmp_path, capsys):
    from mmbench_lib.cli import main

    for k in range(2):
        _shard(demo, tmp_path / "s", k, 2)
    (tmp_path / "f").write_text("x")
    assert main(["merge", str(tmp_path / "s"), "--out", str(tmp_path / "f")]) == 2
    assert "a file, not a folder" in capsys.readouterr().err


def test_resharding_a_merged_run_is_refused_before_any_submission(tmp_path, monkeypatch):
    """Probe: `--shards 3` on a run merged from 2 scored three new shards, then refused to merge."""
    import yaml

    from mmbench_lib.launch.launcher import _prepare
    from mmbench_lib.launch.options import LaunchError

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path))
    for k in range(2):
        d = tmp_path / "r" / "shards" / f"{k}-of-2"
        d.mkdir(parents=True)
        (d / "params.yaml").write_text(yaml.safe_dump({"shard_index": k, "num_shards": 2, "run_id": "r"}))
        (d / f"predictions.shard-0{k}-of-02.jsonl").write_text('{"id": "1"}\n')
    with pytest.raises(LaunchError, match="was sharded 2 ways.*resume with --shards 2"):
        _prepare(NB10, None, {}, "r", 3)
    assert sorted(p.name for p in (tmp_path / "r" / "shards").iterdir()) == ["0-of-2", "1-of-2"]
    _prepare(NB10, None, {}, "r", 2)  # the same split resumes
    (tmp_path / "r" / "params.yaml").write_text(yaml.safe_dump({"num_shards": 1, "run_id": "r"}))
    (tmp_path / "r" / "predictions.jsonl").write_text('{"id": "1"}\n')
    shutil.rmtree(tmp_path / "r" / "shards")
    with pytest.raises(Exception, match="num_shards=1"):  # an unsharded run is not resumed as shards
        _prepare(NB10, None, {}, "r", 2)


# --- protocol and model checked together; failed runs exit non-zero (issue 27 §3) ------------------------------

def test_an_endpoint_without_logprobs_is_refused_on_a_ranking_notebook(capsys):
    """Probe: `openai:` on notebook 10 passed the checks, then one NotImplementedError traceback per item, exit 0."""
    from mmbench_lib.cli import main
    from mmbench_lib.models.registry import MODEL_REGISTRY, rank_problem
    from mmbench_lib.pipeline.config import RunConfig

    assert main(["run", str(NB10), "-p", "benchmark", "seed", "--model", "openai:gpt-4o"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot rank choices" in err and "lmms-eval-gen" in err
    assert not MODEL_REGISTRY["openai"].can_rank and rank_problem("smollm2") is None  # a capability, not a prefix
    with pytest.raises(ValueError, match="model.spec: 'openai:m' cannot rank"):
        RunConfig("seed", "x", data={"annotation_file": "a"}, model="openai:m")
    RunConfig("seed", "x", data={"annotation_file": "a"}, model="openai:m", recipe="lmms-eval-gen")  # generates


def _all_failed_run(demo, tmp_path, broken=("all",)):
    from mmbench_lib.analysis.results import write_results
    from mmbench_lib.pipeline.config import RunConfig

    d = demo["seed"]
    shutil.copytree(d["image_root"], tmp_path / "cc3m")
    for i, f in enumerate(sorted((tmp_path / "cc3m").iterdir())):
        if broken == ("all",) or i in broken:
            f.write_bytes(b"\x89PNG broken")
    data = {**runs.demo_args("seed", demo), "image_root": str(tmp_path / "cc3m"), "dimensions": [1, 2]}
    runs.evaluate(RunConfig("seed", tmp_path / "run", data=data, model="random", progress=False))
    return write_results(tmp_path / "run")


def test_a_run_whose_items_all_failed_is_a_failure_with_reasons(demo, tmp_path):
    """Probe: 48 of 48 items failed, exit 0, a table with "n/a". Now results.json groups the failures by
    reason and `mmbench run` exits 3 with one line (the check is ``failure_problem``)."""
    from mmbench_lib.analysis.results import failure_problem

    results = _all_failed_run(demo, tmp_path)
    run = results["runs"][0]
    assert run["summary"]["n"] == 0 and run["failures"] and run["failures"][0]["reason"].startswith("field 'images': unreadable image <path>")
    assert sum(g["n"] for g in run["failures"]) == run["summary"]["failed"]
    line = failure_problem(results)
    assert line and "every item" in line and f"{run['summary']['failed']} x field 'images': unreadable image" in line


def test_max_failed_threshold(demo, tmp_path):
    from mmbench_lib.analysis.results import failure_problem

    results = _all_failed_run(demo, tmp_path, broken=range(0, 10**4, 2))
    s = results["runs"][0]["summary"]
    share = s["failed"] / (s["n"] + s["failed"])
    assert 0 < share < 1 and failure_problem(results) is None  # some failed: by default the run stands
    assert "more than max_failed=0" in failure_problem(results, 0.0)
    assert failure_problem(results, share) is None


def test_cli_run_exits_3_when_every_item_failed(demo_dir, outputs, tmp_path, capsys):
    from mmbench_lib.cli import main

    broken = tmp_path / "cc3m"
    broken.mkdir()
    code = main(["run", str(NB10), "-p", "benchmark", "seed", "--model", "random", "--limit", "3",
                 "-p", "data_dir", str(demo_dir), "-p", "annotation_file", str(demo_dir / "seed" / "SEED-Bench.json"),
                 "-p", "image_root", str(broken), "-p", "dimensions", "[1]", "--run-id", "allfail"])
    err = capsys.readouterr().err
    assert code == 3 and "3 of 3 items failed (every item)" in err, err
    assert json.loads((outputs / "allfail" / "results.json").read_text())["runs"][0]["failures"][0]["n"] == 3


# --- input that cannot hang or crash the checks (issue 27 §4) --------------------------------------------------

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi")) + "dimensions: *i\n"


@pytest.mark.parametrize("text, message", [
    (BOMB, "expands to more than 100000 values"), ("dimensions: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 50 deep"),
    ("model: smollm2\nlimit: 3\nmodel: random\n", "line 3: .*key 'model' given twice \\(first on line 1\\)")])
def test_parameter_files_that_would_hang_or_crash_are_one_line(tmp_path, text, message):
    """Probe: a 1 KB alias bomb hung past 120 s, 5,000-deep nesting was a RecursionError, duplicate keys last-won."""
    import time

    from mmbench_lib.runner import ParameterError, read_params

    f = tmp_path / "p.yaml"
    f.write_text(text)
    start = time.monotonic()
    with pytest.raises(ParameterError, match=message) as e:
        read_params([str(f)])
    assert "\n" not in str(e.value) and str(f) in str(e.value)
    assert time.monotonic() - start < 30  # a generous bound: the refusal reads ~1 KB, the hang it replaces was > 120 s


def test_yaml_limits_keep_ordinary_files_and_merge_keys():
    from mmbench_lib.core.yaml_limits import load

    assert load("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\n") == {"base": {"x": 1, "y": 2}, "other": {"x": 1, "y": 3}}
    assert load("a: [1, [2, [3]]]") == {"a": [1, [2, [3]]]}


def test_oversized_values_paths_run_ids_and_outputs_are_one_line(tmp_path, monkeypatch):
    """Probe: a 5 MB path was an OSError traceback; so were a run id over 255 bytes and MMBENCH_OUTPUTS naming a file."""
    from mmbench_lib.runner import ParameterError, prepare_run

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path / "out"))
    with pytest.raises(ParameterError, match="annotation_file: a string of 5000000 bytes"):
        prepare_run(NB10, overrides={"annotation_file": "a" * 5_000_000})
    big = tmp_path / "big.yaml"
    big.write_text("annotation_file: " + "a" * 2_000_000 + "\n")
    with pytest.raises(ParameterError, match="a parameters file is at most"):
        prepare_run(NB10, [str(big)])
    with pytest.raises(ValueError, match="it is 300 bytes; a folder name is at most 255"):
        prepare_run(NB10, overrides={"model": "random"}, run_id="r" * 300)
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path / "file"))
    with pytest.raises(ValueError, match="MMBENCH_OUTPUTS .* is a file, not a folder"):
        prepare_run(NB10, overrides={"model": "random"}, run_id="ok")


# --- rescoring inputs validated field by field; invalid gold never scored (issue 27 §4) -------------------------

def _mmmu_out(tmp_path, **rec):
    base = {"id": "validation_Math_1", "question_type": "multiple-choice", "answer": "A", "all_choices": ["A", "B"],
            "index2ans": {"A": "1", "B": "2"}, "response": "A"}
    (tmp_path / "Math").mkdir(exist_ok=True)
    (tmp_path / "Math" / "output.json").write_text(json.dumps([{**base, **rec}]))
    return tmp_path


@pytest.mark.parametrize("rec, field, message", [
    ({"question_type": "essay", "answer": "x"}, "question_type", "'essay' is not one of"),
    ({"answer": "Z"}, "answer", "gold answer 'Z' names no option"),
    ({"id": {"a": 1}}, "id", "an id is a string or an integer, got dict"),
    ({"question_type": "open", "answer": {"x": 1}}, "answer", "an open answer is a string"),
    ({"all_choices": []}, "all_choices", "non-empty list of letters")])
def test_mmmu_invalid_records_are_refused_naming_file_record_and_field(tmp_path, capsys, rec, field, message):
    """Probe: an MMMU question_type 'essay' was scored as open; an answer letter naming no option was scored."""
    from mmbench_lib.cli import main

    (tmp_path / "r").mkdir()
    root = _mmmu_out(tmp_path / "r", **rec)
    assert main(["score-responses", "--benchmark", "mmmu", "--responses", str(root), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Math/output.json" in err and "record #0" in err and f"field '{field}'" in err
    assert message in err and not (tmp_path / "o").exists()


def test_mmmu_empty_output_is_refused_not_zero_percent(tmp_path):
    from mmbench_lib.pipeline.rescoring import score_mmmu_outputs

    (tmp_path / "Math").mkdir()
    (tmp_path / "Math" / "output.json").write_text("[]")
    with pytest.raises(DataError, match="no records"):
        score_mmmu_outputs(tmp_path)


@pytest.mark.parametrize("gold, message", [(None, "gold answer None is not a non-empty string"),
                                           (3, "gold answer 3 is not"), ("E", "multiple-choice gold answer 'E' names no option")])
def test_cmmmu_invalid_gold_is_refused(tmp_path, gold, message):
    """Probe: CMMMU null or integer gold was scored silently."""
    from mmbench_lib.pipeline.rescoring import score_cmmmu_outputs

    (tmp_path / "g.jsonl").write_text(json.dumps({"id": 1, "type": "选择", "answer": gold}, ensure_ascii=False) + "\n")
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": 1, "response": "A"}) + "\n")
    with pytest.raises(DataError, match=f"g.jsonl, item '1', field 'answer': line 1: {message}"):
        score_cmmmu_outputs(tmp_path / "r.jsonl", tmp_path / "g.jsonl")


def test_cmmmu_repeated_question_ids_empty_responses_and_dict_ids_are_refused(tmp_path):
    from mmbench_lib.pipeline.rescoring import score_cmmmu_outputs

    gold = tmp_path / "g.jsonl"
    gold.write_text(json.dumps({"id": 1, "type": "选择", "answer": "A"}, ensure_ascii=False) + "\n")
    q = tmp_path / "q.jsonl"
    q.write_text((json.dumps({"id": 1, "option1": "x"}) + "\n") * 2)
    r = tmp_path / "r.jsonl"
    r.write_text(json.dumps({"id": 1, "response": "A"}) + "\n")
    with pytest.raises(DataError, match="q.jsonl, item '1', field 'id': line 2: id given twice"):
        score_cmmmu_outputs(r, gold, q)
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(DataError, match="no response rows"):
        score_cmmmu_outputs(tmp_path / "empty.jsonl", gold)
    r.write_text(json.dumps({"id": {"a": 1}, "response": "A"}) + "\n")
    with pytest.raises(DataError, match="field 'id': line 1: an id is a string or an integer, got dict"):
        score_cmmmu_outputs(r, gold)


@pytest.mark.parametrize("line, field, message", [
    ({"question_id": "1_0", "prediction": 3}, "prediction", "expected the predicted letter as a string"),
    ({"question_id": ["1"], "prediction": "A"}, "question_id", "an id is a string or an integer, got list"),
    ({"question_id": "1_0", "prediction": "A", "gt_answer": "Q"}, "gt_answer", "gold answer 'Q' is not one of")])
def test_score_predictions_fields_are_checked(tmp_path, capsys, line, field, message):
    from mmbench_lib.cli import main

    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps(line) + "\n")
    assert main(["score-predictions", "--benchmark", "seed2", "--predictions", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(f) in err and f"field '{field}'" in err and "line 1" in err and message in err


def test_score_predictions_questions_with_repeated_ids_or_bad_gold_and_empty_files(tmp_path):
    from mmbench_lib.pipeline.rescore_seed import score_predictions

    p = tmp_path / "p.jsonl"
    p.write_text(json.dumps({"question_id": "1", "prediction": "A"}) + "\n")
    q = tmp_path / "q.json"
    one = {"question_id": "1", "question_type_id": 1, "answer": "A"}
    q.write_text(json.dumps({"questions": [one, one]}))
    with pytest.raises(DataError, match="questions\\[1\\]: id given twice"):
        score_predictions("seed", p, q)
    q.write_text(json.dumps({"questions": [{**one, "answer": 1}]}))
    with pytest.raises(DataError, match="field 'answer': questions\\[0\\]: gold answer 1 is not one of"):
        score_predictions("seed", p, q)
    (tmp_path / "e.jsonl").write_text("\n")
    with pytest.raises(DataError, match="no predictions in the file"):
        score_predictions("seed2", tmp_path / "e.jsonl")


def test_rescoring_out_naming_a_file_is_refused_before_any_work(tmp_path, capsys):
    """Probe: `--out` naming a file was a traceback after the scoring."""
    from mmbench_lib.cli import main

    (tmp_path / "f").write_text("x")
    p = tmp_path / "p.jsonl"
    p.write_text(json.dumps({"question_id": "1_0", "prediction": "A", "gt_answer": "A"}) + "\n")
    assert main(["score-predictions", "--benchmark", "seed2", "--predictions", str(p), "--out", str(tmp_path / "f")]) == 2
    assert "a file, not a folder" in capsys.readouterr().err
    assert main(["score-responses", "--benchmark", "mmmu", "--responses", str(tmp_path / "nothing"),
                 "--out", str(tmp_path / "f" / "sub")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err  # refused before the missing responses are read


# --- loaders: refused with the reason, or marked per item on request (issue 27 §5) -----------------------------

def test_identical_choices_are_refused_or_marked_on_request(demo, tmp_path, monkeypatch):
    """Probe: two identical choices loaded silently (content ranking can never pick the second copy)."""
    d = demo["seed"]
    bad = _rewrite(d["annotation_file"], tmp_path / "SEED-Bench.json", lambda qs: qs[0].update(choice_c=qs[0]["choice_a"]))
    qid = json.loads(bad.read_text())["questions"][0]["question_id"]
    with pytest.raises(DataError, match="options A and C are identical.*MMBENCH_KEEP_GOING=1") as e:
        seed1.load(bad, d["image_root"], d["video_roots"])
    assert e.value.field == "choices" and e.value.item_id == qid and e.value.path == str(bad)
    monkeypatch.setenv("MMBENCH_KEEP_GOING", "1")
    items = seed1.load(bad, d["image_root"], d["video_roots"])
    assert len(items) == 36
    rows = {r["id"]: r for r in rank_items(items[:3], RandomChoice(), RunStore(tmp_path / "run"), get_recipe("seed1-ppl"),
                                           progress=False).rows()}
    assert rows[qid]["status"] == "failed" and "options A and C are identical" in rows[qid]["error"]


def test_seed2_one_frame_video_is_refused(demo, tmp_path):
    """Probe: a SEED-2 video dimension given one frame was a one-frame "video"."""
    d = demo["seed2"]
    src = json.loads(Path(d["annotation_file"]).read_text())
    vid = next(q for q in src["questions"] if seed2.DIMENSIONS[q["question_type_id"]][1] == seed2.VIDEO)
    bad = _rewrite(d["annotation_file"], tmp_path / "v2.json",
                   lambda qs: next(x for x in qs if x["question_id"] == vid["question_id"]).update(data_id=vid["data_id"][:1]))
    with pytest.raises(DataError, match="a video question needs its frames.*got 1") as e:
        seed2.load(bad, d["cc3m_dir"], d["seed_bench_v2_dir"], level="L3")
    assert e.value.field == "data_id" and e.value.item_id == vid["question_id"]


def test_non_utf8_annotation_file_is_named(demo, tmp_path):
    """Probe: non-UTF-8 files gave a one-line error that did not name the file."""
    bad = tmp_path / "SEED-Bench.json"
    bad.write_bytes(Path(demo["seed"]["annotation_file"]).read_bytes().replace(b'"questions"', b'"questions\xff"', 1))
    with pytest.raises(DataError, match=r"line \d+: not UTF-8 \(byte 0xff\)") as e:
        seed1.load(bad, demo["seed"]["image_root"])
    assert str(bad) in str(e.value)


def test_cmmmu_dict_id_is_refused_not_stringified(demo, tmp_path):
    """Probe: a dict id became the string "{'a': 1}"."""
    src = Path(demo["cmmmu"]["root"]) / "cmmmu-data-val" / "business"
    shutil.copytree(src, tmp_path / "cmmmu-data-val" / "business")
    f = tmp_path / "cmmmu-data-val" / "business" / "business.jsonl"
    lines = f.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[0])
    rec["id"] = {"a": 1}
    f.write_text("\n".join([json.dumps(rec, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="an id is a string or an integer, got dict") as e:
        cmmmu.load(tmp_path, split="val", categories=["business"])
    assert str(f) in str(e.value) and e.value.field == "id"


def test_negative_segment_fails_blind_and_vision_alike(demo, tmp_path):
    """Probe: a negative segment passed the blind model's media check and failed the VLM's decoding with '-97'.
    Now the loader marks it; the blind path (``check_media``) and the vision path (``load_visual_inputs``) refuse
    it with the same reason, so both runs score the same item set."""
    d = demo["seed"]
    src = json.loads(Path(d["annotation_file"]).read_text())
    q = next(q for q in src["questions"] if q["question_type_id"] == 11)
    bad = _rewrite(d["annotation_file"], tmp_path / "SEED-Bench.json",
                   lambda qs: next(x for x in qs if x["question_id"] == q["question_id"]).update(segment=[-100, -97]))
    items = seed1.load(bad, d["image_root"], d["video_roots"], dimensions=[11])
    it = next(i for i in items if i.id == q["question_id"])
    reasons = []
    for check in (check_media, load_visual_inputs):
        with pytest.raises(MediaError) as e:
            check(it)
        reasons.append(str(e.value))
    assert reasons[0] == reasons[1] and "negative bound in [-100, -97]" in reasons[0]
    rows = {r["id"]: r for r in rank_items(items, RandomChoice(), RunStore(tmp_path / "run"), get_recipe("seed1-ppl"),
                                           progress=False).rows()}
    assert rows[it.id]["status"] == "failed" and "negative bound" in rows[it.id]["error"]


def test_blind_ids_are_checked_before_the_run_and_against_the_run(demo, tmp_path, monkeypatch):
    """Probe: a malformed blind_ids file was found after every item was scored; ids all unknown, or made on
    another split, were accepted without a word."""
    from mmbench_lib.analysis.subsets import vision_required, write_blind_ids
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.runner import ParameterError, prepare_run

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path / "out"))
    bad = tmp_path / "blind_solvable.json"
    bad.write_text("{not json")
    with pytest.raises(ParameterError, match="parameter blind_ids: .*not valid JSON"):
        prepare_run(NB10, overrides={"model": "random", "blind_ids": str(bad)}, run_id="b")
    assert not (tmp_path / "out" / "b").exists()
    other = write_blind_ids(tmp_path / "mmmu.json", "mmmu", ["validation_Math_1"], split="validation")
    with pytest.raises(ParameterError, match="holds ids of 'mmmu', this run is 'seed'"):
        prepare_run(NB10, overrides={"model": "random", "benchmark": "seed", "blind_ids": str(other)}, run_id="b")
    run = tmp_path / "run"
    runs.evaluate(RunConfig("seed", run, data=runs.demo_args("seed", demo), model="random", limit=4, progress=False))
    unknown = write_blind_ids(tmp_path / "u.json", "seed", ["no-such-id"])
    with pytest.raises(ValueError, match="none of its 1 blind-solvable ids is an item of run"):
        vision_required(run, unknown)
    ids = [json.loads(x)["id"] for x in (run / "predictions.jsonl").read_text().splitlines()][:2]
    with pytest.raises(ValueError, match="ids of split 'validation'"):
        vision_required(run, write_blind_ids(tmp_path / "s.json", "seed", ids, split="validation"))
    assert vision_required(run, write_blind_ids(tmp_path / "ok.json", "seed", ids))["blind_solvable_in_run"] == 2


def test_a_kernel_dying_at_start_is_one_line():
    """Found by benchmarks/fault_injection.py: the merge's kernel killed while starting was a RuntimeError traceback."""
    from mmbench_lib.runner import notebook_failure

    failure = notebook_failure(RuntimeError("Kernel died before replying to kernel_info"), NB10, Path("x.ipynb"))
    assert failure is not None and "failed in its start: the kernel died" in str(failure)
    assert notebook_failure(RuntimeError("something else"), NB10, Path("x.ipynb")) is None


def test_more_shards_than_items_run_and_merge_through_the_notebook(demo_dir, outputs):
    """Probe: empty shards failed three times with KeyError 'dimension_id', then "not merged" forever."""
    from mmbench_lib.runner import run_notebook

    params = {"benchmark": "seed", "model": "random", "limit": 1, "data_dir": str(demo_dir), "dimensions": [1]}
    for k in range(3):
        run_notebook(NB10, None, {**params, "shard_index": k, "num_shards": 3}, run_id="e", progress=False)
    folder = run_notebook(NB10, None, {**params, "num_shards": 3, "merge_shards": True}, run_id="e", progress=False)
    assert json.loads((folder / "merge.json").read_text()) == {"shards": 3, "items": 1}


def test_every_item_of_one_dimension_failed_is_a_failure(demo, tmp_path):
    """Issue: with the official frame folders every SEED v1 video question failed and the run still ended
    with exit 0, its headline over the image questions only. A dimension whose items all failed is now a
    failure line (exit 3), unless the user accepts partial runs with ``--max-failed``."""
    import json

    from mmbench_lib.analysis.results import failure_problem, write_results
    from mmbench_lib.pipeline.config import RunConfig

    d = demo["seed"]
    questions = json.loads(Path(d["annotation_file"]).read_text(encoding="utf-8"))["questions"]
    dim1 = {q["data_id"] for q in questions if q["question_type_id"] == 1}
    shutil.copytree(d["image_root"], tmp_path / "cc3m")
    for f in (tmp_path / "cc3m").iterdir():
        if f.name in dim1:
            f.write_bytes(b"\x89PNG broken")
    data = {**runs.demo_args("seed", demo), "image_root": str(tmp_path / "cc3m"), "dimensions": [1, 2]}
    runs.evaluate(RunConfig("seed", tmp_path / "run", data=data, model="random", progress=False))
    results = write_results(tmp_path / "run")
    run = results["runs"][0]
    n_dim1 = sum(q["question_type_id"] == 1 for q in questions)
    assert [x["n"] for x in run["all_failed_dimensions"]] == [n_dim1]
    assert "unreadable image" in run["all_failed_dimensions"][0]["reason"]
    assert run["summary"]["n"] > 0  # the other dimension scored
    line = failure_problem(results)
    assert line and "every item of 1 dimension(s) failed" in line and "--max-failed" in line
    assert failure_problem(results, 0.9) is None  # asked for: a partial run stands
