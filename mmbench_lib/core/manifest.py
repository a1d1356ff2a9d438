"""What a run records about itself: versions, git commit, data hashes, peak memory."""
from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform
import resource
import subprocess
import sys
from importlib import metadata
from pathlib import Path

PACKAGES = ("mmbench", "torch", "torchvision", "transformers", "open_clip_torch", "accelerate", "gguf",
            "av", "numpy", "pandas", "papermill", "datasets", "pytesseract")


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]  # mmbench_lib/core/manifest.py -> repository root


def versions() -> dict:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def git_commit(root: Path | None = None) -> dict:
    root = root or repo_root()
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        if sha.returncode != 0:
            return {"commit": None}
        return {"commit": sha.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None}


def peak_memory() -> dict:
    out = {"cpu_max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    try:
        import torch

        if torch.cuda.is_available():
            out["gpu_max_allocated_mb"] = torch.cuda.max_memory_allocated() / 2**20
    except ImportError:
        pass
    return out


#: the environment variable naming model plugin modules (``models.registry.load_plugins`` imports them)
PLUGINS_ENV = "MMBENCH_PLUGINS"


def plugins() -> list[dict]:
    """The model plugins of this process (``$MMBENCH_PLUGINS``): each module's name, whether it was loaded, its
    file and the file's sha256 (a plugin is code that ran in the run)."""
    out = []
    for name in (n.strip() for n in os.environ.get(PLUGINS_ENV, "").split(",")):
        if not name:
            continue
        path = getattr(sys.modules.get(name), "__file__", None)
        try:
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None
        except OSError:
            digest = None
        out.append({"module": name, "loaded": name in sys.modules, "file": path, "sha256": digest})
    return out


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def base_manifest(parameters: dict | None = None, seed: int | None = None) -> dict:
    return {
        "created": now(), "parameters": parameters or {}, "seed": seed, "versions": versions(),
        "git": git_commit(), "platform": platform.platform(), "argv": sys.argv[:3], "plugins": plugins(),
    }


def resolve(path) -> Path:
    """An absolute path; relative ones are taken from the repository root (notebooks run with
    different working directories under JupyterLab, nbval and papermill)."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else repo_root() / p
