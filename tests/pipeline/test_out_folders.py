"""Nothing a run wrote is ever overwritten (issue 41, item 1): every command's ``--out`` refuses a folder holding a
run, or any file the command would write, in one line naming a fresh folder to write to instead."""
import json

import pytest

from mmbench_lib.cli import main
from mmbench_lib.core.outdir import check_out
from mmbench_lib.core.rows import base_row
from mmbench_lib.core.store import RunStore
from mmbench_lib.pipeline import generation as g
from mmbench_lib.tasks import mmmu


@pytest.fixture
def finished_run(demo, tmp_path):
    """A report-style run folder ``run/<sub-run>/`` as the generation loop writes it: predictions (raw responses),
    a manifest, and the ``official/`` per-subject files that ``score_run`` writes."""
    items = mmmu.load(demo["mmmu"]["source"], split="validation")
    sub = tmp_path / "run" / "mmmu-sub"
    store = RunStore(sub)
    store.update_manifest(benchmark="mmmu")
    store.append([{**base_row(it), "status": "ok", "response": "(A)", "raw_response": "<think>x</think>(A)",
                   "thinking": "x", "truncated": False} for it in items])
    g.score_run(items, RunStore(sub))
    assert (sub / "official").is_dir()
    return sub


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_score_responses_into_the_run_it_read_is_refused_and_the_run_kept(finished_run, capsys):
    """The probe's data loss: ``score-responses --responses <run>/<sub-run>/official --out <run>/<sub-run>``."""
    before = {p.name: p.read_bytes() for p in finished_run.iterdir() if p.is_file()}
    rc = main(["score-responses", "--benchmark", "mmmu", "--responses", str(finished_run / "official"),
               "--out", str(finished_run)])
    assert rc == 2
    err = _one_line(capsys)
    assert f"--out {finished_run} holds a run (manifest.json)" in err
    assert f"write to a new folder instead, e.g. --out {finished_run}-rescored" in err
    assert {p.name: p.read_bytes() for p in finished_run.iterdir() if p.is_file()} == before
    # the suggested folder works
    with pytest.warns(UserWarning, match="subjects have no output.json"):  # the demo has 8 of 30
        assert main(["score-responses", "--benchmark", "mmmu", "--responses", str(finished_run / "official"),
                     "--out", f"{finished_run}-rescored"]) == 0
    # and is not written twice
    assert main(["score-responses", "--benchmark", "mmmu", "--responses", str(finished_run / "official"),
                 "--out", f"{finished_run}-rescored"]) == 2
    assert "holds a run (predictions.jsonl)" in _one_line(capsys)


@pytest.mark.parametrize("argv", [
    ["score-predictions", "--benchmark", "seed", "--predictions", "x.jsonl", "--out", "{out}"],
    ["audit", "x.jsonl", "--benchmark", "mmmu", "--out", "{out}"],
    ["merge", "{out}", "--out", "{out}"],
    ["make-demo", "--out", "{out}"],
])
def test_every_out_refuses_a_run_folder_before_any_work(finished_run, capsys, argv):
    before = (finished_run / "predictions.jsonl").read_bytes()
    top = finished_run.parent  # a report's top folder: its sub-run is a run
    for out in (finished_run, top):
        assert main([a.replace("{out}", str(out)) for a in argv]) == 2
        err = _one_line(capsys)
        assert f"--out {out} holds a run" in err and "write to a new folder instead, e.g. --out" in err
    assert (finished_run / "predictions.jsonl").read_bytes() == before


def test_a_file_the_command_writes_is_never_replaced(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "summary.json").write_text("{}")
    with pytest.raises(ValueError, match=r"already holds summary.json, which this command would replace: write to a "
                                         r"new folder instead, e.g. --out .*o-rescored$"):
        check_out(tmp_path / "o", ("summary.json",), "rescored")
    (tmp_path / "o-rescored").mkdir()  # the suggestion is a folder that does not exist
    with pytest.raises(ValueError, match=r"--out .*o-rescored-2$"):
        check_out(tmp_path / "o", ("summary.json",), "rescored")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "1_table.csv").write_text("x")
    with pytest.raises(ValueError, match="already holds 1_table.csv"):
        check_out(tmp_path / "a", ("audit.json", "[0-9]*_*.csv"), "audit")
    assert check_out(tmp_path / "new" / "deeper", ("summary.json",)) == tmp_path / "new" / "deeper"
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match=r"f is a file, not a folder"):
        check_out(tmp_path / "f" / "under")


def test_merge_may_add_to_its_own_merge_only(tmp_path):
    merged = tmp_path / "m"
    merged.mkdir()
    (merged / "manifest.json").write_text(json.dumps({"merged_from": ["a"]}))
    assert check_out(merged, merge=True) == merged  # merging again: merge_runs checks the shards are the same
    (tmp_path / "top" / "shards" / "0-of-2").mkdir(parents=True)  # a sharded run before its first merge
    assert check_out(tmp_path / "top", merge=True) == tmp_path / "top"
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "predictions.jsonl").write_text("")
    with pytest.raises(ValueError, match=r"holds a run \(predictions.jsonl\) that is not a merge of shards"):
        check_out(tmp_path / "r", merge=True)


def test_the_paper_gallery_refuses_a_dest_holding_a_run(tmp_path):
    """``python -m mmbench_lib.paper gallery RUN --dest <a run folder>`` is one line, exit 2, and replaces nothing."""
    import subprocess
    import sys

    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}", encoding="utf-8")
    (run / "README.md").write_text("mine", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "mmbench_lib.paper", "gallery", str(run), "--dest", str(run)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "holds a run (manifest.json)" in proc.stderr and "--dest" in proc.stderr
    assert (run / "README.md").read_text(encoding="utf-8") == "mine"
