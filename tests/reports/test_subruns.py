"""A report's headline in results.json (kept when the runner collects the results again, printed as a table),
progress lines naming the report's step with a heartbeat while nothing else prints, and the shard helpers."""
import json
import time

import pandas as pd

from mmbench_lib.analysis import results
from mmbench_lib.core import progress
from mmbench_lib.reports import subruns


def test_headline_is_kept_in_results_json_and_printed(tmp_path):
    table = pd.DataFrame({"dimension": ["Scene", "All"], "items": [3, 6], "plain %": [66.7, 50.0],
                          "plain 95%": ["20.8-93.9", "18.8-81.2"], "circular %": [0.0, None]})
    subruns.headline(tmp_path, "CircularEval", table, notes="plain: original order")
    results.write_results(tmp_path)  # what the runner does after the notebook: the report section stays
    body = json.loads((tmp_path / "results.json").read_text())
    assert body["runs"] == [] and body["report"]["rows"] == [["Scene", 3, 66.7, "20.8-93.9", 0.0], ["All", 6, 50.0, "18.8-81.2", None]]
    text = results.format_table(body)  # no sub-run in the folder: the headline, not "no finished sub-run"
    assert text.splitlines()[0] == "CircularEval:" and "no finished sub-run" not in text
    assert "|All      |    6|   50.0|18.8-81.2|         -|" in text and text.endswith("plain: original order")


def test_progress_lines_name_the_step_and_beat_while_silent(monkeypatch, capsys):
    monkeypatch.setattr(progress, "HEARTBEAT", 0.3)
    monkeypatch.setenv(progress.ENV, "text")
    with subruns.step("rotation 2 of 4 (rot-1)"):
        time.sleep(0.8)  # e.g. the model loading: the step's name with the time since it started
        bar = progress.Progress(4, "mmmu smollm2")
        time.sleep(0.8)  # one long model call: the loop's line again, marked working
        bar.update(4)
        bar.close()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[rotation 2 of 4 (rot-1)] started"
    assert lines[1].startswith("[rotation 2 of 4 (rot-1)] working, 0:0") and lines[1].endswith("since it started")
    loop = [x for x in lines if "mmmu smollm2" in x]
    assert loop[0] == "[rotation 2 of 4 (rot-1)] mmmu smollm2: 0/4 items (0%), - items/s, failed 0"
    assert any(x.endswith(", working") for x in loop) and "4/4 items (100%)" in loop[-1]
    time.sleep(0.7)
    assert capsys.readouterr().out == ""  # the heartbeat ends with the step


def test_end_shard_marks_the_shard_for_the_launcher(tmp_path, capsys):
    sub = tmp_path / "rot-0"
    sub.mkdir()
    (sub / "manifest.shard-01-of-02.json").write_text("{}")
    (sub / "predictions.shard-01-of-02.jsonl").write_text('{"id": "a"}\n{"id": "b"}\n')
    subruns.end_shard(tmp_path, 1, 2)
    assert json.loads((tmp_path / "metrics.shard-01-of-02.json").read_text()) == {"sub_runs": {"rot-0": 2}}
    assert "shard 1 of 2: 2 rows stored in 1 sub-run(s) (rot-0 2)" in capsys.readouterr().out
