"""Progress of the long loops over items, readable wherever the loop runs.

Two forms, one interface (:class:`Progress`):

* **text lines** -- ``mmmu smollm2: 24/36 items (67%), 3.1 items/s, ETA 0:04, failed 0`` -- on stdout at
  the start, whenever another tenth of the items is done or ``every`` seconds (10) have passed since the
  last line, and a final line. A papermill or nbval kernel keeps them as cell output (so the executed
  notebook reads as a log), ``mmbench run`` streams them to the terminal as the cells print them, and
  a terminal or plain ``python`` shows them as they are.
* **a widget bar** (tqdm's notebook bar) only in a live notebook kernel, where someone watches it.

More: docs/modules.md, ``mmbench_lib/core/progress.py``.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

MODES = ("text", "widget", "off")
ENV = "MMBENCH_PROGRESS"


def progress_mode() -> str:
    """``text``, ``widget`` or ``off`` for this process (see the module doc)."""
    forced = os.environ.get(ENV, "").strip().lower()
    if forced:
        if forced not in MODES:
            raise ValueError(f"environment variable {ENV}={forced!r}: must be one of {list(MODES)}")
        return forced
    return "widget" if _live_notebook_kernel() else "text"


def _live_notebook_kernel() -> bool:
    if not os.environ.get("JPY_SESSION_NAME"):
        return False
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    if type(shell).__name__ != "ZMQInteractiveShell":
        return False
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


_CONTEXT: list[str] = []
HEARTBEAT = 5.0  # seconds: inside a context, the longest silence of text progress
_STATE = {"last": 0.0, "active": None}  # when a progress line was last printed; the loop printing them


@contextlib.contextmanager
def context(text: str):
    """Inside ``with context("rotation 2 of 4 (rot-1)"):`` every progress label starts with ``[rotation 2 of 4 (rot-1)]``
    (nested contexts joined by ``, ``); in text mode a line ``[text] started`` on entry and the heartbeat of the
    module doc while it lasts."""
    _CONTEXT.append(str(text))
    stop = None
    try:
        if progress_mode() == "text":
            _say(f"[{', '.join(_CONTEXT)}] started")
            if len(_CONTEXT) == 1:
                stop = threading.Event()
                threading.Thread(target=_beat, args=(stop, time.monotonic()), daemon=True).start()
        yield
    finally:
        if stop is not None:
            stop.set()
        _CONTEXT.pop()


def _say(text: str, out=None) -> None:
    _STATE["last"] = time.monotonic()
    print(text, file=out or sys.stdout, flush=True)


def _beat(stop: threading.Event, start: float) -> None:
    while not stop.wait(HEARTBEAT / 5):
        if time.monotonic() - _STATE["last"] < HEARTBEAT or not _CONTEXT:
            continue
        bar = _STATE["active"]
        if bar is not None and bar.mode == "text":
            bar._print(bar.line() + ", working")
        else:
            _say(f"[{', '.join(_CONTEXT)}] working, {clock(time.monotonic() - start)} since it started")


def with_context(label: str) -> str:
    """``label`` prefixed by the current :func:`context` names, if any."""
    return f"[{', '.join(_CONTEXT)}] {label}" if _CONTEXT else label


def clock(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour on)."""
    s = int(round(seconds))
    h, m, s = s // 3600, s // 60 % 60, s % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _rate(rate: float) -> str:
    return f"{rate:.2f}" if rate < 10 else f"{rate:.1f}" if rate < 100 else f"{rate:.0f}"


class Progress:
    """Items done out of ``total`` (``initial`` of them done before this run), with failures.

    ``update(n, failed=k)`` after each batch, ``close()`` at the end (or use it as a context manager).
    ``mode`` defaults to :func:`progress_mode`; ``out`` is where text lines go (stdout); ``note`` is added to the
    first line (a resumed run's retried failures).
    """

    def __init__(self, total: int, label: str, initial: int = 0, failed: int = 0, mode: str | None = None,
                 every: float = 10.0, out=None, note: str = ""):
        self.total, self.label, self.initial, self.done, self.failed = total, with_context(label), initial, initial, failed
        self.mode = mode or progress_mode()
        self.every, self.out = every, out
        self.start = self.last_time = time.monotonic()
        self.last_tenth = -1
        self.bar = None
        if self.mode == "widget":
            from tqdm.notebook import tqdm

            self.bar = tqdm(total=total, initial=initial, desc=self.label, unit="item")
            self.bar.set_postfix(failed=failed)
        elif self.mode == "text":
            resumed = [f"resuming: {initial} done before"] if initial else []
            self._print(self.line() + (f" ({', '.join(resumed + [note] if note else resumed)})" if resumed or note else ""))
            _STATE["active"] = self
        self._stop = None
        if self.mode == "text" and not _CONTEXT and self.every > 0:  # inside a context its own heartbeat speaks for the bar
            self._stop = threading.Event()
            threading.Thread(target=self._beat, args=(self._stop,), daemon=True).start()

    def _beat(self, stop: threading.Event) -> None:
        """Text mode: the line again, marked ``working``, after ``every`` seconds with none (one long batch)."""
        while not stop.wait(max(0.05, min(1.0, self.every / 4))):
            if self.mode == "text" and time.monotonic() - self.last_time >= self.every:
                self._print(self.line() + ", working")

    def line(self, final: bool = False) -> str:
        """The text line for the current state."""
        pct = 100 * self.done / self.total if self.total else 100.0
        elapsed = time.monotonic() - self.start
        new = self.done - self.initial
        rate = new / elapsed if elapsed > 0 and new else None
        parts = [f"{self.label}: {self.done}/{self.total} items ({pct:.0f}%)",
                 f"{_rate(rate)} items/s" if rate else "- items/s"]
        if final:
            parts.append(f"took {clock(elapsed)}")
        elif rate:
            parts.append(f"ETA {clock((self.total - self.done) / rate)}")
        parts.append(f"failed {self.failed}")
        return ", ".join(parts)

    def update(self, n: int, failed: int = 0) -> None:
        """``n`` more items done, ``failed`` of them failed."""
        self.done += n
        self.failed += failed
        if self.bar is not None:
            self.bar.update(n)
            if failed:
                self.bar.set_postfix(failed=self.failed)
        elif self.mode == "text" and self.done < self.total:
            tenth = int(10 * self.done / self.total) if self.total else 10
            now = time.monotonic()
            if tenth > self.last_tenth or now - self.last_time >= self.every:
                self._print(self.line())

    def close(self) -> None:
        """The final line (or the bar closed)."""
        if self._stop is not None:
            self._stop.set()
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        elif self.mode == "text":
            if _STATE["active"] is self:
                _STATE["active"] = None
            self._print(self.line(final=True))
            self.mode = "off"

    def _print(self, text: str) -> None:
        self.last_time = time.monotonic()
        self.last_tenth = int(10 * self.done / self.total) if self.total else 10
        _say(text, self.out)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def library_bars() -> str:
    """Set transformers' progress bars (``Loading weights``) to this process's :func:`progress_mode`, as the
    suite's own: tqdm's widget in a live notebook kernel, a text bar on stdout (updated at most every 10 s)
    in text mode (a papermill kernel would keep the widget frozen at 0% in the saved notebook), none when
    ``off``. Called where a local model is loaded. Returns the mode."""
    mode = progress_mode()
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return mode
    if mode == "off":
        hf_logging.disable_progress_bar()
    hf_logging.set_tqdm_hook(_text_bar if mode == "text" else None)
    return mode


def _text_bar(factory, args, kwargs):
    """transformers' tqdm hook in text mode: the plain ``tqdm.std`` bar instead of ``tqdm.auto``'s widget."""
    from tqdm import auto, std

    if factory is not auto.tqdm:  # transformers' own empty bar: its bars are disabled
        return factory(*args, **kwargs)
    return std.tqdm(*args, **{"file": sys.stdout, "mininterval": 10.0, "ascii": True, **kwargs})


class CellLines:
    """``mmbench run``'s progress over a notebook's cells, as lines (no bar redrawn per cell): one line when a cell
    has run ``after`` seconds (``cell 5 of 12 running: results = runs.evaluate_baselines(...)``) and one when that
    cell ends (``cell 5 of 12 done in 1:23``); short cells print nothing. ``start`` and ``complete`` are nbclient's
    ``on_cell_start`` / ``on_cell_executed`` hooks (nbclient's ``on_cell_complete`` runs when a cell is sent, not
    when it ends); ``total`` is the number of code cells."""

    def __init__(self, total: int, after: float = 10.0, out=None):
        self.total, self.after, self.out = total, after, out
        self.k, self._timer, self._said, self._start = 0, None, False, 0.0

    def start(self, cell=None, cell_index=None, **_):
        if getattr(cell, "cell_type", "code") != "code":
            return
        self.k += 1
        self._start, self._said = time.monotonic(), False
        first = next((ln.strip() for ln in str(getattr(cell, "source", "")).splitlines()
                      if ln.strip() and not ln.lstrip().startswith("#")), "")
        text = f"cell {self.k} of {self.total} running" + (f": {first[:80]}" if first else "")
        self._timer = threading.Timer(self.after, self._announce, args=(text,))
        self._timer.daemon = True
        self._timer.start()

    def _announce(self, text: str) -> None:
        self._said = True
        _say(text, self.out)

    def complete(self, cell=None, cell_index=None, **_):
        if getattr(cell, "cell_type", "code") != "code":
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._said:
            _say(f"cell {self.k} of {self.total} done in {clock(time.monotonic() - self._start)}", self.out)
