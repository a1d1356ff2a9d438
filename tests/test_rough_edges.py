"""Rough edges of issue 35 (items 6 and 8): one progress line per long notebook cell (no bar per cell), a shard
progress line that is never silent, a model loaded once per notebook for several settings, progress lines that name
the setting."""
import io
from pathlib import Path

import nbformat

from mmbench_lib.core import progress
from mmbench_lib.launch import progress as shard_progress
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig

NB20 = Path(__file__).resolve().parents[1] / "notebooks" / "20_generation.ipynb"


class _Now:
    """A clock the test moves (no test waits on real time)."""

    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


class _Timer:
    """threading.Timer stand-in: fires when the test says so."""
    made = []

    def __init__(self, after, fn, args=()):
        self.after, self.fn, self.args, self.cancelled = after, fn, args, False
        _Timer.made.append(self)

    def start(self):
        pass

    def cancel(self):
        self.cancelled = True

    def fire(self):
        if not self.cancelled:
            self.fn(*self.args)


def test_one_line_when_a_cell_runs_long_and_one_when_it_ends_nothing_for_short_cells(monkeypatch):
    now = _Now()
    monkeypatch.setattr(progress.time, "monotonic", now)
    monkeypatch.setattr(progress.threading, "Timer", _Timer)
    out = io.StringIO()
    lines = progress.CellLines(3, after=10, out=out)
    md, short = nbformat.v4.new_markdown_cell("# title"), nbformat.v4.new_code_cell("x = 1")
    long = nbformat.v4.new_code_cell("# evaluate\nresults = runs.evaluate_baselines(config)")
    for cell in (md, short):
        lines.start(cell=cell, cell_index=0)
        lines.complete(cell=cell, cell_index=0)
    lines.start(cell=long, cell_index=2)
    now.t += 83
    _Timer.made[-1].fire()
    lines.complete(cell=long, cell_index=2)
    _Timer.made[0].fire()  # the short cell's timer was cancelled: it never speaks
    assert out.getvalue().splitlines() == ["cell 2 of 3 running: results = runs.evaluate_baselines(config)",
                                           "cell 2 of 3 done in 1:23"]


def test_mmbench_run_gives_papermill_the_cell_hooks_and_no_cell_bar(monkeypatch, tmp_path, demo_dir):
    import papermill
    import pytest

    from mmbench_lib.runner import RunInterrupted, run_notebook

    seen = {}

    def execute(*args, **kwargs):
        seen.update(kwargs)
        raise KeyboardInterrupt

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path))
    monkeypatch.setattr(papermill, "execute_notebook", execute)
    with pytest.raises(RunInterrupted):
        run_notebook(NB20, overrides={"data_dir": str(demo_dir), "limit": 1}, run_id="hooks")
    assert seen["progress_bar"] is False
    assert seen["on_cell_start"].__self__.total == 1 + sum(
        c.cell_type == "code" for c in nbformat.read(NB20, as_version=4).cells)
    assert seen["on_cell_executed"].__name__ == "complete"  # nbclient's on_cell_complete fires when a cell is sent


def test_the_shard_line_says_starting_and_repeats_while_nothing_changes(monkeypatch, tmp_path):
    now = _Now()
    monkeypatch.setattr(shard_progress.time, "monotonic", now)
    printed = []
    counters = {k: shard_progress.ShardCounter(tmp_path / str(k), (k, 2)) for k in range(2)}
    line = shard_progress.ProgressLine(counters, 2, printed.append)
    states = {0: "running", 1: "running"}
    line.update(states, {})
    now.t += shard_progress.HEARTBEAT_S - 1
    line.update(states, {})  # nothing changed, not yet a heartbeat
    now.t += 1
    line.update(states, {})
    assert printed == ["[0:00:00] shards 0-of-2 0/? starting (kernel, model) | 1-of-2 0/? starting (kernel, model)",
                       "[0:00:30] shards 0-of-2 0/? starting (kernel, model) | 1-of-2 0/? starting (kernel, model)"]


def test_a_model_is_loaded_once_for_several_settings_and_progress_names_the_setting(demo, tmp_path, monkeypatch, capsys):
    from tests.models.openai_server import Server

    loads = []
    real = runs.load_adapter
    monkeypatch.setattr(runs, "load_adapter", lambda spec, **kw: loads.append(spec) or real(spec, **kw))
    monkeypatch.setenv(progress.ENV, "text")
    with Server() as srv:
        for i, split in enumerate(("standard4-direct", "standard10-direct"), 1):
            cfg = RunConfig("mmmu-pro", tmp_path / split, source=demo["mmmu-pro"]["source"], model="openai:m", split=split,
                            limit=1, endpoint={"base_url": srv.url})
            with progress.context(f"setting {split} ({i} of 2)"):
                runs.evaluate_baselines(cfg, ("none",))
    assert loads == ["openai:m"]
    printed = capsys.readouterr().out
    assert "[setting standard4-direct (1 of 2)] mmmu-pro m: 1/1 items" in printed
    assert "[setting standard10-direct (2 of 2)] mmmu-pro m: 1/1 items" in printed
