"""Progress of item loops (core/progress.py): throttled text lines with counts, rate, ETA and failures;
a widget bar only in a kernel a Jupyter server started for a notebook (checked in real kernels)."""
import io
import re

import pytest
from jupyter_client.manager import start_new_kernel

from mmbench_lib.core.progress import Progress, clock, progress_mode

LINE = re.compile(r"^mmmu smollm2: (\d+)/36 items \((\d+)%\), ([\d.]+|-) items/s(, ETA \d+:\d\d|, took \d+:\d\d)?, failed (\d+)$")


def test_text_lines_are_throttled_and_name_counts_rate_eta_and_failures():
    out = io.StringIO()
    with Progress(36, "mmmu smollm2", mode="text", out=out, every=3600) as p:
        for k in range(36):
            p.update(1, failed=int(k == 20))
    lines = out.getvalue().splitlines()
    assert all(LINE.match(line) for line in lines), lines
    done = [int(LINE.match(line)[1]) for line in lines]
    assert done[0] == 0 and done[-1] == 36 and done == sorted(done)
    assert len(lines) == 11  # the start, each tenth passed (10%..90%), the final line: not 37
    assert "ETA" in lines[5] and "took" in lines[-1] and lines[-1].endswith("failed 1")
    assert lines[2].startswith("mmmu smollm2: 8/36 items (22%)") and lines[2].endswith("failed 0")


def test_a_line_every_few_seconds_between_tenths_and_the_resume_count():
    out = io.StringIO()
    p = Progress(1000, "seed random", initial=400, failed=2, mode="text", out=out, every=0)
    p.update(1)
    p.update(1)
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "seed random: 400/1000 items (40%), - items/s, failed 2 (resuming: 400 done before)"
    assert lines[1].startswith("seed random: 401/1000 items (40%)") and len(lines) == 4


def test_off_prints_nothing_and_clock_format():
    out = io.StringIO()
    with Progress(5, "x", mode="off", out=out) as p:
        p.update(5)
    assert out.getvalue() == ""
    assert (clock(4), clock(75), clock(3725)) == ("0:04", "1:15", "1:02:05")


def test_mode_from_the_environment(monkeypatch):
    monkeypatch.delenv("MMBENCH_PROGRESS", raising=False)
    monkeypatch.setenv("JPY_SESSION_NAME", "/x/nb.ipynb")
    assert progress_mode() == "text"  # not an IPython kernel: plain python gets lines
    for mode in ("text", "widget", "off"):
        monkeypatch.setenv("MMBENCH_PROGRESS", mode)
        assert progress_mode() == mode
    monkeypatch.setenv("MMBENCH_PROGRESS", "bars")
    with pytest.raises(ValueError, match="MMBENCH_PROGRESS='bars': must be one of"):
        progress_mode()


def _in_kernel(env: dict, code: str) -> tuple[str, set]:
    """Run ``code`` in a real python3 kernel started with ``env``; its stdout and the mime types it displayed."""
    km, kc = start_new_kernel(kernel_name="python3", env=env)
    stdout, mimes = [], set()

    def hook(msg):
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            stdout.append(msg["content"]["text"])
        elif msg["msg_type"] in ("display_data", "update_display_data"):
            mimes.update(msg["content"]["data"])

    try:
        reply = kc.execute_interactive(code, output_hook=hook, timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return "".join(stdout), mimes


CODE = ("from mmbench_lib.core.progress import Progress, progress_mode\nprint('mode', progress_mode())\n"
        "p = Progress(3, 'seed smollm2')\np.update(3)\np.close()\n")
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize("session, expected", [(True, "widget"), (False, "text")])
def test_a_notebook_kernel_gets_a_widget_a_papermill_like_kernel_gets_lines(monkeypatch, session, expected):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("JPY_SESSION_NAME", "MMBENCH_PROGRESS")}
    if session:  # what jupyter_server's SessionManager gives the kernel of an open notebook
        env["JPY_SESSION_NAME"] = "/work/notebooks/10_seed_bench.ipynb"
    stdout, mimes = _in_kernel(env, CODE)
    assert f"mode {expected}" in stdout
    if expected == "widget":
        assert WIDGET in mimes and "items (" not in stdout
    else:
        assert WIDGET not in mimes and "seed smollm2: 3/3 items (100%)" in stdout


def test_transformers_bars_follow_the_mode(monkeypatch, capsys):
    """Text mode (papermill, nbval, ``mmbench run``): transformers' ``Loading weights`` bar is tqdm's plain text
    bar on stdout, not ``tqdm.auto``'s widget that a saved notebook would keep frozen at 0%; ``off``: no bar."""
    from tqdm import std
    from transformers.utils import logging as hf_logging

    from mmbench_lib.core.progress import library_bars

    was_active = hf_logging.is_progress_bar_enabled()
    try:
        hf_logging.enable_progress_bar()
        monkeypatch.setenv("MMBENCH_PROGRESS", "text")
        assert library_bars() == "text"
        bar = hf_logging.tqdm(range(3), desc="Loading weights")
        assert type(bar) is std.tqdm  # not tqdm.notebook's widget
        list(bar)
        bar.close()
        assert "Loading weights: 100%" in capsys.readouterr().out
        monkeypatch.setenv("MMBENCH_PROGRESS", "off")
        assert library_bars() == "off" and not hf_logging.is_progress_bar_enabled()
        list(hf_logging.tqdm(range(3), desc="Loading weights"))
        assert "Loading weights" not in capsys.readouterr().out
    finally:
        hf_logging.set_tqdm_hook(None)
        (hf_logging.enable_progress_bar if was_active else hf_logging.disable_progress_bar)()


def test_a_long_batch_is_not_silent_the_line_is_repeated_marked_working():
    """One slow call (a batch of a hundred generations) between updates: after ``every`` seconds with no line,
    the current line again, marked ``working``; none after the bar is closed."""
    import time

    from mmbench_lib.core import progress

    assert progress._CONTEXT == []  # outside a report's context: the bar has its own heartbeat
    out = io.StringIO()
    with Progress(10, "mmmu smollm2", mode="text", out=out, every=0.3) as p:
        deadline = time.monotonic() + 30  # a loaded machine may schedule the heartbeat thread late
        while ", working" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.1)
        p.update(10)
    closed = out.getvalue()
    time.sleep(0.5)
    lines = closed.splitlines()
    working = [line for line in lines if line.endswith(", working")]
    assert working and working[0].startswith("mmmu smollm2: 0/10 items (0%)"), lines
    assert lines[-1].startswith("mmmu smollm2: 10/10 items (100%)") and "took" in lines[-1]
    assert out.getvalue() == closed  # the heartbeat stopped with the bar
