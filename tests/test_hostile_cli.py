"""Hostile input and rough edges of the command line (issue 35, items 6-7): each is one line (exit 2 before anything
runs, or exit 1 naming the folder), never a traceback, a hang or an unbounded read."""
import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmbench_lib.cli import main
from tests.processes import sigint_as_in_a_terminal

ROOT = Path(__file__).resolve().parents[1]
NB20 = str(ROOT / "notebooks" / "20_generation.ipynb")


def cli(tmp_path, *args, timeout=120):
    env = {k: v for k, v in os.environ.items() if k != "MMBENCH_DEBUG"}
    env.update(PYTHONPATH=str(ROOT), MMBENCH_OUTPUTS=str(tmp_path / "outputs"), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "mmbench_lib.cli", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)


def one_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_a_bad_shortcut_value_is_one_line(tmp_path):
    proc = cli(tmp_path, "run", NB20, "--limit", "abc")
    assert proc.returncode == 2
    assert one_line(proc) == "mmbench run: error: argument --limit: invalid int value: 'abc' (see mmbench run --help)"


def test_a_misspelt_parameter_gets_a_did_you_mean(tmp_path):
    proc = cli(tmp_path, "run", NB20, "-p", "limt", "3")
    assert proc.returncode == 2 and "did you mean 'limit' for 'limt'?" in one_line(proc)
    assert not (tmp_path / "outputs").exists()  # before anything is written


@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "big"])
def test_a_params_file_that_is_not_a_bounded_regular_file_is_refused_unread(tmp_path, kind):
    path = tmp_path / "p.yaml"
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes it: opening it to read would wait for ever
    elif kind == "device":
        path = Path("/dev/zero")  # reading it never ends
    elif kind == "folder":
        path.mkdir()
    else:
        with open(path, "w") as f:  # a regular file larger than the bound, its size only seen by reading
            f.write("# " + "x" * (1 << 20) + "\n")
    proc = cli(tmp_path, "run", NB20, "-f", str(path), timeout=60)  # a hang fails by the timeout
    line = one_line(proc)
    assert proc.returncode == 2 and str(path) in line
    expected = {"fifo": "a FIFO", "device": "a device", "folder": "a folder", "big": "more than 1048576 bytes"}[kind]
    assert expected in line


def test_a_full_disk_while_the_notebook_is_written_is_one_line_naming_the_folder(tmp_path, monkeypatch, capsys, demo_dir):
    import papermill.iorw

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path / "outputs"))

    def full(self, buf, path):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

    monkeypatch.setattr(papermill.iorw.LocalHandler, "write", full)
    rc = main(["run", NB20, "-p", "data_dir", str(demo_dir), "--limit", "1", "--run-id", "full"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1, err
    assert "No space left on device" in err[0] and str(tmp_path / "outputs" / "full") in err[0] and "resumes" in err[0]


def test_ctrl_c_while_the_command_loads_is_one_line(tmp_path):
    code = "import os, signal\nimport mmbench_lib.cli\nos.kill(os.getpid(), signal.SIGINT)\nimport time; time.sleep(30)\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=sigint_as_in_a_terminal)
    assert proc.returncode == 130 and one_line(proc) == "mmbench: interrupted while starting; nothing was run"


def test_ctrl_c_during_a_sharded_run_is_one_line_with_the_resume_command(tmp_path, monkeypatch, capsys, demo_dir):
    from mmbench_lib.launch import launcher

    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path / "outputs"))
    cancelled = []
    monkeypatch.setattr(launcher._Shards, "start", lambda self: None)
    monkeypatch.setattr(launcher._Shards, "wait", lambda self: (_ for _ in ()).throw(KeyboardInterrupt))
    monkeypatch.setattr(launcher._Shards, "cancel", lambda self: cancelled.append(True))
    argv = ["run", str(ROOT / "notebooks" / "10_seed_bench.ipynb"), "-f",
            str(ROOT / "params" / "10_seed_bench" / "seed1_demo_smollm2.yaml"), "-p", "data_dir", str(demo_dir),
            "--limit", "4", "--shards", "2", "--launcher", "local"]
    assert main(argv) == 130 and cancelled
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()
    run_id = line.rpartition("--run-id ")[2]
    assert line.startswith(f"mmbench: interrupted; finished items are kept in {tmp_path / 'outputs' / run_id}; "
                           f"resume with: mmbench run ") and "--shards 2" in line
    assert "Traceback" not in captured.out + captured.err


def test_a_shard_controller_prints_into_its_log_not_over_the_terminal(tmp_path, capfd):
    from mmbench_lib.launch.launcher import _output_to

    log = tmp_path / "submitit" / "controller.log"
    with _output_to(log):
        child = subprocess.Popen([sys.executable, "-c", "import sys; print('child out'); sys.stderr.write('Traceback\\n')"])
    child.wait(timeout=60)
    print("after")
    out, err = capfd.readouterr()
    assert "child out" not in out + err and "Traceback" not in err and "after" in out
    assert log.read_text().splitlines() == ["child out", "Traceback"]
