"""Where a local model's weights sit: one device, or spread by accelerate (``device_map``).

``device_map=None`` puts the whole model on ``device``. ``"auto"`` (or accelerate's ``"balanced"``,
``"balanced_low_0"``, ``"sequential"``) lets accelerate fill the visible GPUs, then the CPU, then
disk, each up to its ``max_memory`` cap (``{0: "38GiB", 1: "38GiB", "cpu": "120GiB"}``). A dict
names the device of each module (``{"model.embed_tokens": 0, "model.layers.0": 0, ...,
"lm_head": 1}``): a GPU index, ``"cuda:<n>"``, ``"mps"``, ``"cpu"`` or ``"disk"``. Weights
offloaded to ``"disk"`` go to ``$MMBENCH_OFFLOAD_DIR`` (default ``$MMBENCH_CACHE/offload/<pid>``).

On a CPU-only machine there is only one torch device (``"cpu:1"`` is the same device as ``"cpu"``),
so the closest real split is CPU + disk: accelerate's hooks load a disk module's weights for each
forward and move its inputs to the execution device, which is what tests exercise.

Nothing here imports torch at module level (the preflight checks use the ``*_problem`` helpers).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from mmbench_lib.models.embedded import cache_root

STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")
DEVICE_RE = re.compile(r"cpu|disk|mps|cuda(:\d+)?")
SIZE_RE = re.compile(r"\d+(\.\d+)?\s*(KiB|MiB|GiB|KB|MB|GB)", re.IGNORECASE)
MEMORY_KEYS = ("cpu", "mps", "disk")


def device_map_problem(value) -> str | None:
    """Why ``value`` is not a device map (None: it is one)."""
    if value is None or value in STRATEGIES:
        return None
    if isinstance(value, str):
        return f"{value!r}: use null (one device), {' / '.join(STRATEGIES)} or a dict module -> device"
    if not isinstance(value, dict) or not value:
        return f"expected null, 'auto' or a non-empty dict module name -> device, got {type(value).__name__} {value!r}"
    for module, dev in value.items():
        if not isinstance(module, str):
            return f"module name {module!r} is not a string"
        ok = (isinstance(dev, int) and not isinstance(dev, bool) and dev >= 0) or \
             (isinstance(dev, str) and DEVICE_RE.fullmatch(dev))
        if not ok:
            return f"{module!r}: device {dev!r} is not a GPU index, cuda:<n>, mps, cpu or disk"
    return None


def memory_key(key):
    """A ``max_memory`` key as accelerate takes it: GPU indices as ints (YAML may give "0")."""
    return int(key) if isinstance(key, str) and key.isdigit() else key


def max_memory_problem(value, device_map=None) -> str | None:
    """Why ``value`` is not a per-device memory cap (None: it is one, or None)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        return f"expected null or a dict device -> size such as {{0: '20GiB', 'cpu': '60GiB'}}, got {value!r}"
    if device_map is None:
        return "a memory cap needs device_map (e.g. 'auto'); with one device there is nothing to cap"
    for key, size in value.items():
        key = memory_key(key)
        if not ((isinstance(key, int) and not isinstance(key, bool) and key >= 0) or key in MEMORY_KEYS):
            return f"key {key!r} is not a GPU index, 'cpu', 'mps' or 'disk'"
        if isinstance(size, bool) or not (isinstance(size, int) and size > 0 or isinstance(size, str) and SIZE_RE.fullmatch(size.strip())):
            return f"{key!r}: size {size!r} is not a byte count or a size such as '20GiB' / '500MB'"
    return None


def parse_device_map(text: str):
    """``--device-map``: ``auto`` (or another strategy), ``none``, or a YAML / JSON dict."""
    import yaml

    text = text.strip()
    if text.lower() in ("none", "null", ""):
        return None
    value = yaml.safe_load(text) if text.startswith("{") else text
    why = device_map_problem(value)
    if why:
        raise ValueError(why)
    return value


def parse_max_memory(text: str) -> dict:
    """``--max-memory 0=38GiB,1=38GiB,cpu=120GiB`` (or a YAML / JSON dict) -> ``{0: "38GiB", ...}``."""
    import yaml

    text = text.strip()
    if text.startswith("{"):
        value = yaml.safe_load(text)
    else:
        pairs = [p.partition("=") for p in text.split(",") if p.strip()]
        if not pairs or any(not sep for _, sep, _ in pairs):
            raise ValueError(f"{text!r}: use DEVICE=SIZE[,DEVICE=SIZE], e.g. 0=38GiB,cpu=120GiB")
        value = {k.strip(): v.strip() for k, _, v in pairs}
    value = {memory_key(k): v for k, v in value.items()} if isinstance(value, dict) else value
    why = max_memory_problem(value, device_map="auto")
    if why:
        raise ValueError(why)
    return value


def pick_device(device: str = "auto") -> str:
    """``auto``: the first GPU when there is one, else the CPU."""
    if device == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def offload_folder() -> str:
    """Where weights mapped to ``"disk"`` are written: ``$MMBENCH_OFFLOAD_DIR``, else
    ``$MMBENCH_CACHE/offload/<pid>`` (one folder per process: runs never share offloaded files)."""
    return os.environ.get("MMBENCH_OFFLOAD_DIR") or str(cache_root() / "offload" / str(os.getpid()))


@dataclass(frozen=True)
class Placement:
    """One device (``device_map=None``) or accelerate's dispatch over several."""

    device: str = "auto"
    device_map: str | dict | None = None
    max_memory: dict | None = None

    def load_kwargs(self) -> dict:
        """Extra keyword arguments of ``from_pretrained`` (empty for one device: ``finish`` moves it)."""
        if self.device_map is None:
            return {}
        kw = {"device_map": self.device_map, "offload_folder": offload_folder()}
        if self.max_memory:
            kw["max_memory"] = {memory_key(k): v for k, v in self.max_memory.items()}
        return kw

    def finish(self, model):
        """A model from ``from_pretrained(**load_kwargs())``: moved to the device, or left where accelerate put it."""
        return model.to(pick_device(self.device)) if self.device_map is None else model

    def dispatch(self, model):
        """An in-memory model (built from a config) moved to the device or dispatched by accelerate."""
        if self.device_map is None:
            return self.finish(model)
        from accelerate import dispatch_model, infer_auto_device_map

        device_map = self.device_map
        if isinstance(device_map, str):
            memory = {memory_key(k): v for k, v in (self.max_memory or {}).items()} or None
            device_map = infer_auto_device_map(model, max_memory=memory,
                                               no_split_module_classes=getattr(model, "_no_split_modules", None))
        return dispatch_model(model, device_map=device_map, offload_dir=offload_folder())


def _runs(names: list[str]) -> list[str]:
    """``["model.layers.0", "model.layers.1", "lm_head"]`` -> ``["model.layers.0-1", "lm_head"]``."""
    out: list[list] = []
    for name in names:
        stem, _, last = name.rpartition(".")
        if last.isdigit() and out and out[-1][0] == stem and out[-1][2] == int(last) - 1:
            out[-1][2] = int(last)
        else:
            out.append([stem, int(last), int(last)] if last.isdigit() else [name, None, None])
    return [s if a is None else f"{s}.{a}" if a == b else f"{s}.{a}-{b}" for s, a, b in out]


def placement_record(model, input_device) -> dict:
    """What the manifest records about where the model sits: ``device`` (where inputs go) and, for a
    dispatched model, ``placement`` (accelerate's resolved ``hf_device_map``, modules per device)."""
    record = {"device": str(input_device)}
    device_map = getattr(model, "hf_device_map", None)
    if device_map:
        per_device: dict[str, list] = {}
        for module, dev in device_map.items():
            per_device.setdefault(str(dev), []).append(module)
        record["placement"] = {"device_map": "accelerate", "modules": {d: _runs(m) for d, m in per_device.items()},
                               "n_modules": {d: len(m) for d, m in per_device.items()}}
    return record
