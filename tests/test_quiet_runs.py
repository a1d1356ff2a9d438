"""Quiet, clean ends of ``mmbench run``: ``--version`` names the commit the manifests record, Ctrl-C ends
with one line and the resume command, third-party warnings are filtered unless ``--debug``."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from mmbench_lib.cli import main, resume_command
from mmbench_lib.core.manifest import git_commit, repo_root
from mmbench_lib.runner import run_notebook
from tests.processes import sigint_as_in_a_terminal

MMBENCH = [sys.executable, "-c", "import sys; from mmbench_lib.cli import main; sys.exit(main())"]


def _notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    first = nbformat.v4.new_code_cell("x = 1")
    first.metadata["tags"] = ["parameters"]
    nb.cells = [first, *(nbformat.v4.new_code_cell(c) for c in cells)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def test_version_names_the_commit_the_manifests_record(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out.strip()
    commit = git_commit().get("commit")
    assert out.startswith("mmbench ")
    if commit:
        assert f"commit {commit[:12]}" in out
    else:
        assert "commit unknown" in out


def test_resume_command_keeps_the_arguments_and_sets_the_run_id():
    argv = ["run", "notebooks/10_seed_bench.ipynb", "-f", "my params.yaml", "--run-id", "old", "--limit", "8"]
    assert resume_command(argv, "abc") == ("mmbench run notebooks/10_seed_bench.ipynb -f 'my params.yaml' "
                                           "--limit 8 --run-id abc")
    assert resume_command(["run", "nb.ipynb", "--run-id=x"], "x") == "mmbench run nb.ipynb --run-id x"


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_third_party_warnings_filtered_unless_debug(tmp_path, outputs, capfd, debug):
    nb = _notebook(tmp_path / "warns.ipynb",
                   "import warnings\nwarnings.warn('a third-party notice', FutureWarning)\nprint('cell ran')")
    run_notebook(nb, run_id=f"warns_{debug}", progress=False, debug=debug)
    captured = capfd.readouterr()
    text = captured.out + captured.err
    assert "cell ran" in text
    assert ("a third-party notice" in text) is debug
    assert ("Kernel is running over TCP" in text) is debug


@pytest.mark.slow
def test_ctrl_c_ends_with_one_line_and_the_resume_command(tmp_path):
    nb = _notebook(tmp_path / "sleeps.ipynb", "print('started', flush=True)\nimport time\ntime.sleep(120)")
    env = dict(os.environ, MMBENCH_OUTPUTS=str(tmp_path / "out"), PYTHONPATH=str(repo_root()))
    env.pop("MMBENCH_DEBUG", None)
    p = subprocess.Popen([*MMBENCH, "run", str(nb), "--run-id", "sleepy"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True,
                         preexec_fn=sigint_as_in_a_terminal)
    lines = []
    for line in p.stdout:  # wait until the cell runs, then press Ctrl-C (SIGINT to the whole process group)
        lines.append(line)
        if "started" in line:
            os.killpg(p.pid, signal.SIGINT)
            break
    rest = p.communicate(timeout=120)[0]
    lines += rest.splitlines(keepends=True)
    text = "".join(lines)
    assert p.returncode == 130, text
    assert "Traceback" not in text
    last = [l for l in text.splitlines() if l.strip()][-1]
    assert last.startswith("mmbench: interrupted;"), text
    assert last.endswith(f"resume with: mmbench run {nb} --run-id sleepy"), text
    assert (tmp_path / "out" / "sleepy" / "sleeps.ipynb").is_file() or list((tmp_path / "out" / "sleepy").glob("*.ipynb"))


def test_ctrl_c_outside_the_notebook_names_the_resume_command_when_the_run_id_is_known(monkeypatch, capsys):
    import mmbench_lib.cli as cli

    def interrupted(a):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_run", interrupted)
    argv = ["run", "notebooks/10_seed_bench.ipynb", "--shards", "2", "--run-id", "big"]
    assert cli.main(argv) == 130
    assert capsys.readouterr().err == (
        "mmbench: interrupted; resume with: mmbench run notebooks/10_seed_bench.ipynb --shards 2 --run-id big\n")
    assert cli.main(argv[:-2]) == 130
    assert capsys.readouterr().err == "mmbench: interrupted\n"


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_third_party_progress_bars_are_off_unless_debug(tmp_path, outputs, capfd, monkeypatch, debug):
    """Transformers' "Loading weights" bar (issue 41, item 7): a bare ``mmbench run`` turns it off in the kernel."""
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    nb = _notebook(tmp_path / "bars.ipynb",
                   "from transformers.utils import logging\nprint('bars on:', logging.is_progress_bar_enabled())")
    run_notebook(nb, run_id=f"bars_{debug}", progress=False, debug=debug)
    assert f"bars on: {debug}" in capfd.readouterr().out
