"""Merge and compare never pair or count what should not be (issue 35, item 7): a shard numbered outside its split
or listing items of another shard is refused, merged rows are re-scored, the merged run is labelled by its own
count; compare refuses an empty folder, does not pair runs whose data or golds differ, marks a run being written and
names each run's protocol; a folder where a store file should be, or a run another process writes, is one line."""
import json
import multiprocessing
import shutil

import pytest

from mmbench_lib.analysis import compare
from mmbench_lib.analysis.reader import RunError
from mmbench_lib.cli import main
from mmbench_lib.core.store import RunStore, lock_holder
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.pipeline.shards import merge_runs, shard_of


def _sharded(demo, folder, limit=None, model="random"):
    for k in range(2):
        runs.evaluate(RunConfig("seed", folder, data=runs.demo_args("seed", demo), model=model, limit=limit,
                                shard_index=k, num_shards=2, progress=False))
    return folder


def _edit_manifest(path, edit):
    m = json.loads(path.read_text())
    edit(m)
    path.write_text(json.dumps(m))


def test_a_shard_numbered_outside_its_split_is_refused(demo, tmp_path):
    r = _sharded(demo, tmp_path / "r")
    _edit_manifest(r / "manifest.shard-01-of-02.json", lambda m: m["shard"].update(index=2))
    with pytest.raises(ValueError, match=r"shard 2 of 2 does not exist"):
        merge_runs([r], tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_a_shard_listing_made_up_items_is_refused(demo, tmp_path):
    r = _sharded(demo, tmp_path / "r")
    fake = next(f"fake-{i}" for i in range(100) if shard_of(f"fake-{i}", 2) == 0)  # hashes to the other shard
    path = r / "predictions.shard-01-of-02.jsonl"
    row = json.loads(path.read_text().splitlines()[0])
    path.write_text(path.read_text() + json.dumps({**row, "id": fake}) + "\n")
    _edit_manifest(r / "manifest.shard-01-of-02.json", lambda m: m["shard"]["item_ids"].append(fake))
    with pytest.raises(ValueError, match=r"belong to another shard by their id \(e.g. 'fake-\d+' is shard 0\)"):
        merge_runs([r], tmp_path / "m")


def test_merged_rows_are_re_scored_and_the_run_is_labelled_by_its_merged_count(demo, tmp_path, capsys):
    r = _sharded(demo, tmp_path / "r", limit=12)
    path = r / "predictions.shard-00-of-02.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    wrong = next(x for x in rows if not x["correct"])
    wrong["correct"] = True  # a flag that does not match its prediction and answer
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    assert main(["merge", str(r), "--out", str(tmp_path / "m")]) == 0
    assert "re-scored 1 correct flag(s)" in capsys.readouterr().out
    merged = {x["id"]: x for x in RunStore(tmp_path / "m", readonly=True).rows()}
    assert merged[wrong["id"]]["correct"] is False and len(merged) == 12
    assert all(x["correct"] == (x["prediction"] == x["answer"]) for x in merged.values())
    t, _ = compare.compare_tables([tmp_path / "m"])
    assert t.iloc[0]["data"] == "demo data, subset (n=12)" and t.iloc[0]["n"] == 12  # not shard 0's count


def test_a_folder_where_a_store_file_should_be_and_a_locked_out_folder_are_one_line(demo, tmp_path, capsys):
    r = _sharded(demo, tmp_path / "r")
    (tmp_path / "m" / "predictions.jsonl").mkdir(parents=True)
    assert main(["merge", str(r), "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "predictions.jsonl: a folder where the run store keeps a file" in err[0]
    holder = multiprocessing.get_context("spawn").Process(target=_hold, args=(str(tmp_path / "busy"),))
    ready = tmp_path / "busy" / "ready"
    holder.start()
    try:
        while not ready.exists():
            holder.join(0.05)
        assert main(["merge", str(r), "--out", str(tmp_path / "busy")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is being written by another process" in err[0]
        assert lock_holder(tmp_path / "busy").startswith("pid ")
    finally:
        holder.terminate()
        holder.join()


def _hold(folder):
    import time
    from pathlib import Path

    store = RunStore(folder)
    (Path(folder) / "ready").write_text("")
    time.sleep(120)
    store.close()


def test_no_lock_file_is_left_after_a_run_ends(tmp_path):
    with RunStore(tmp_path / "a") as store:
        store.append([{"id": "1"}])
        assert (tmp_path / "a" / "run.lock").is_file() and lock_holder(tmp_path / "a").startswith("pid ")
    assert not (tmp_path / "a" / "run.lock").exists() and lock_holder(tmp_path / "a") is None
    with RunStore(tmp_path / "a") as again:  # the lock is taken anew
        assert [r["id"] for r in again.rows()] == ["1"]


@pytest.fixture(scope="module")
def pair(demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("pair")
    a, b = root / "a", root / "b"
    runs.evaluate(RunConfig("seed", a, data=runs.demo_args("seed", demo), model="random:1", limit=12, progress=False))
    runs.evaluate(RunConfig("seed", b, data=runs.demo_args("seed", demo), model="random:2", limit=12, progress=False))
    return root, a, b


def test_compare_names_the_protocol_and_refuses_an_empty_folder(pair):
    root, a, b = pair
    t, pairs = compare.compare_tables([a, b])
    assert list(t["protocol"]) == ["ranking (seed1-ppl, sum)"] * 2 and len(pairs) == 1
    (root / "empty").mkdir(exist_ok=True)
    with pytest.raises(RunError, match=r"empty: no finished run"):
        compare.compare_tables([a, root / "empty"])


def test_runs_with_other_gold_answers_or_other_data_are_not_paired(pair, tmp_path, capsys):
    _root, a, b = pair
    c = tmp_path / "c"
    shutil.copytree(b, c)
    path = c / "predictions.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["answer"] = next(x for x in "ABCD" if x != rows[0]["answer"])  # another copy's gold for one item
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    _t, pairs = compare.compare_tables([a, c])
    assert pairs.empty and pairs.attrs["notes"] == [
        f"a and c not paired: 1 common item(s) have different gold answers, e.g. {rows[0]['id']!r}: "
        f"{[r for r in RunStore(a, readonly=True).rows() if r['id'] == rows[0]['id']][0]['answer']!r} vs {rows[0]['answer']!r}"
        " (they differ in model: 'random:1' vs 'random:2')"]  # and every field in which the runs differ (core.record)
    d = tmp_path / "d"
    shutil.copytree(b, d)
    _edit_manifest(d / "manifest.json", lambda m: m["data_sha256"].update(annotation_file="0" * 64))
    _t, pairs = compare.compare_tables([a, d])
    assert pairs.empty and "their annotation_file files differ" in pairs.attrs["notes"][0]
    assert main(["compare", str(a), str(d)]) == 0
    assert "a and d not paired: their annotation_file files differ" in capsys.readouterr().err


def test_a_run_being_written_shows_its_rows_beside_its_n(pair, tmp_path):
    _root, a, _b = pair
    live = tmp_path / "live"
    shutil.copytree(a, live)
    holder = multiprocessing.get_context("spawn").Process(target=_hold, args=(str(live),))
    holder.start()
    try:
        while not (live / "ready").exists():
            holder.join(0.05)
        t, _ = compare.compare_tables([live])
        assert t.iloc[0]["n"] == "12 (being written: 12 rows now)"
    finally:
        holder.terminate()
        holder.join()
