"""Helpers for tests that start the suite in a child process."""
import signal


def sigint_as_in_a_terminal():
    """``preexec_fn``: Ctrl-C's default action in the child, as in a terminal. A test run started in the background
    (``cmd &`` in a script) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
