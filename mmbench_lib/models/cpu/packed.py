"""Linear layers on pre-packed weights: the CPU fp32 fast path of batched generation.

A plain fp32 ``nn.Linear`` on the CPU calls MKL's ``sgemm``, which re-packs the whole weight
matrix into its kernel's panel layout at every call. At the few rows of a decode step (4 to 32)
that packing, not the arithmetic, is most of the cost: a SmolLM2-135M decode step of 8 rows took
152 ms, of 1 row 73 ms. ``packed_linears(model)`` packs each weight once (MKL's
``cblas_sgemm_pack``, exposed by PyTorch as ``torch.ops.mkl._mkl_reorder_linear_weight``, the
op Inductor's CPU freezing uses) and, while the context is open, routes the model's linear
layers through ``cblas_sgemm_compute`` on those packs; the same step then takes 100 ms.

More: docs/modules.md, ``mmbench_lib/models/cpu/packed.py``.
"""
from __future__ import annotations

import weakref
from contextlib import contextmanager

import torch

from mmbench_lib.scoring import hf_internals as hf
from mmbench_lib.scoring.hf_internals import mkl_ops_available

#: row count the packs are made for (any other count >= 2 uses them too, after ``_check_layout``)
PACK_ROWS = 256
#: row counts multiplied against the plain product for every weight shape before packs are used
CHECK_ROWS = (2, 3, 8, 17, 64, 257)
#: share of the available memory the packs may take
MEMORY_SHARE = 0.25

_PACKS: "weakref.WeakKeyDictionary[torch.nn.Module, _Packs]" = weakref.WeakKeyDictionary()


def available_memory() -> int | None:
    """Bytes of memory available (``MemAvailable`` of /proc/meminfo; None where unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def linears(model) -> list[torch.nn.Linear]:
    return [m for m in model.modules() if isinstance(m, torch.nn.Linear)]


def ineligible_reason(model) -> str | None:
    """Why the model's linear layers cannot run on packed weights (None: they can)."""
    if not mkl_ops_available():
        return "PyTorch has no MKL packed GEMM on this machine"
    if getattr(model, "hf_device_map", None):
        return "the model is dispatched across devices (device_map)"
    layers = linears(model)
    if not layers:
        return "the model has no linear layers"
    for m in layers:
        w = m.weight
        if w.device.type != "cpu" or w.dtype != torch.float32 or w.is_meta:
            return f"weights are {w.dtype} on {w.device.type}; packed GEMM is the fp32 CPU path"
    need = 2 * sum(m.weight.numel() * 4 for m in layers)  # the packs, with MKL's panel padding
    free = available_memory()
    if free is not None and need > MEMORY_SHARE * free:
        return f"packs would take {need / 2**30:.1f} GiB of {free / 2**30:.1f} GiB available"
    return None


def rounding_bound(x: torch.Tensor, w: torch.Tensor, w_norms: torch.Tensor | None = None) -> torch.Tensor:
    """How far two fp32 evaluations of ``x @ w.T`` in any summation order can differ, per output.

    Each is within γ_K·Σ|x_i||w_i| of the exact product (γ_K = K·u/(1-K·u)), and by Cauchy-Schwarz
    Σ|x_i||w_i| <= ‖x‖₂·‖w‖₂, so two differ by at most 2·γ_K·‖x‖₂·‖w‖₂ (row norms, computed in fp64).
    A pack in the wrong layout gives sums of the size of ‖x‖₂·‖w‖₂/√K, far outside it."""
    k = x.shape[-1]
    u = 2.0 ** -24
    gamma = k * u / (1 - k * u)
    if w_norms is None:
        w_norms = w.double().norm(dim=-1)
    return 2 * gamma * torch.outer(x.double().norm(dim=-1), w_norms)


def packed_matmul(x: torch.Tensor, pack: torch.Tensor, w: torch.Tensor, bias) -> torch.Tensor:
    rows = x.numel() // x.shape[-1]
    if rows < 2:
        return torch.nn.functional.linear(x, w, bias)
    return hf.mkl_linear(x, pack, w, bias, rows)


def _check_layout(w: torch.Tensor, pack: torch.Tensor) -> str | None:
    """None when the pack multiplies like ``w`` at every row count of ``CHECK_ROWS``, else why not.

    The difference of two fp32 results is taken in fp32 (rounded by at most a factor 1 + u) and the
    bound widened by that factor."""
    gen = torch.Generator().manual_seed(0)
    w_norms = w.double().norm(dim=-1)
    for rows in CHECK_ROWS:
        x = torch.randn(rows, w.shape[1], generator=gen)
        diff = (packed_matmul(x, pack, w, None) - torch.nn.functional.linear(x, w)).abs()
        bound = (rounding_bound(x, w, w_norms) * (1 + 2.0 ** -23)).float()
        if not bool((diff <= bound).all()):
            return (f"MKL's packed {tuple(w.shape)} weight does not multiply like the plain one at {rows} rows "
                    "on this CPU (its layout depends on the rows)")
    return None


class _Packs:
    """The packed weights of one model (rebuilt where a weight or the thread count changed)."""

    def __init__(self):
        self.packs: dict[int, tuple[torch.nn.Linear, torch.Tensor, tuple]] = {}
        self.threads = None

    @staticmethod
    def _stamp(m: torch.nn.Linear) -> tuple:
        return m.weight.data_ptr(), m.weight._version, tuple(m.weight.shape)

    @torch.no_grad()
    def update(self, model) -> str | None:
        threads = torch.get_num_threads()
        if threads != self.threads:
            self.packs.clear()
            self.threads = threads
        checked: dict[tuple, str | None] = {}
        for m in linears(model):
            entry = self.packs.get(id(m))
            if entry is not None and entry[0] is m and entry[2] == self._stamp(m):
                continue
            w = m.weight.detach()
            pack = hf.mkl_pack(w, PACK_ROWS)
            shape = tuple(w.shape)
            if shape not in checked:
                checked[shape] = _check_layout(w, pack)
            if checked[shape] is not None:
                self.packs.clear()
                return checked[shape]
            self.packs[id(m)] = (m, pack, self._stamp(m))
        return None


@contextmanager
def packed_linears(model, enabled: bool = True):
    """Within the context, the model's linear layers compute on packed weights where they can.

    Yields the reason they do not (None: they do). The layers are restored on exit."""
    reason = "off (BatchPolicy.packed_weights=False)" if not enabled else ineligible_reason(model)
    if reason is None:
        packs = _PACKS.get(model)
        if packs is None:
            packs = _PACKS[model] = _Packs()
        reason = packs.update(model)
    if reason is not None:
        yield reason
        return
    patched = []
    for m in linears(model):
        if getattr(m, "_mmbench_packed", False):
            continue  # an outer context already routes it
        _, pack, _ = packs.packs[id(m)]
        patched.append((m, m.__dict__.get("forward")))
        m.forward = (lambda x, m=m, pack=pack: packed_matmul(x, pack, m.weight, m.bias))
        m._mmbench_packed = True
    try:
        yield None
    finally:
        for m, previous in patched:
            del m._mmbench_packed
            if previous is None:
                del m.forward
            else:
                m.forward = previous
