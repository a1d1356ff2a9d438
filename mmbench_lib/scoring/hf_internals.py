"""Every private transformers / torch / accelerate call of the suite's engines, in one module.

The likelihood engine (``scoring.engine``) and the CPU generation engine (``models.cpu``) reach below the
public API: cache layers, the cache keyword of ``forward``/``generate``, the attention registry, MKL's packed
GEMM, accelerate's hooks. They do it only through the functions here, and ``CALLS`` names each one, so that
``problems()`` (run by ``tests/scoring/test_hf_internals.py``) can exercise every call against the installed
versions and fail naming the one that changed.

The cache keyword: transformers 5.24 renamed ``past_key_values`` to ``cache`` (``forward``: the old name goes
in 5.40; ``generate``: in 6.0; outputs carry ``.cache``). ``cache_kw`` passes whichever name the model's
``forward`` declares, ``out_cache`` reads whichever the output holds, so older and newer versions both work.
"""
from __future__ import annotations

import inspect
from contextlib import contextmanager
from functools import lru_cache

import torch

#: the private calls, by the name ``problems()`` reports
CALLS = (
    "forward(cache=... | past_key_values=...)", "output.cache | output.past_key_values",
    "generate(cache=... | past_key_values=...)", "DynamicCache(list of (keys, values))", "DynamicCache().layers",
    "DynamicLayer.keys/values/is_initialized/update", "DynamicCache.batch_select_indices",
    "config._attn_implementation", "AttentionInterface.register/_global_mapping",
    "transformers.integrations.sdpa_attention.sdpa_attention_forward", "torch.ops.mkl._mkl_reorder_linear_weight",
    "torch.ops.mkl._mkl_linear", "accelerate module._hf_hook.execution_device", "model.rope_deltas",
)


# ---------------------------------------------------------------------------- the cache keyword
@lru_cache(maxsize=None)
def _cache_name(forward_owner: type) -> str:
    try:
        params = inspect.signature(forward_owner.forward).parameters
    except (AttributeError, TypeError, ValueError):  # a wrapper without its own forward: the older name
        return "past_key_values"
    return "cache" if "cache" in params else "past_key_values"


def cache_name(model) -> str:
    """The keyword ``model.forward`` (and ``generate``) takes a kept cache under."""
    return _cache_name(type(model))


def cache_kw(model, cache) -> dict:
    """``{name: cache}`` for ``model(...)`` / ``model.generate(...)``."""
    return {cache_name(model): cache}


def out_cache(out):
    """The cache a forward or ``generate`` returned (``.cache`` from transformers 5.24, else ``.past_key_values``)."""
    if "cache" in getattr(type(out), "__dataclass_fields__", {}):
        return out.cache
    return out.past_key_values


# ---------------------------------------------------------------------------- cache layers
def make_cache(data=None):
    """A ``DynamicCache`` holding per layer ``(keys, values)`` (``(None, None)``: an empty layer)."""
    from transformers import DynamicCache

    return DynamicCache(list(data)) if data is not None else DynamicCache()


def cache_with_layers(layers):
    """A ``DynamicCache`` whose layers are the given layer objects (e.g. ``BufferLayer``)."""
    cache = make_cache()
    cache.layers = list(layers)
    return cache


def cache_layers(cache) -> list:
    return list(cache.layers)


def layer_kv(layer) -> tuple:
    """``(keys, values)`` of a cache layer, ``(None, None)`` before its first update."""
    if layer.keys is None or not getattr(layer, "is_initialized", True):
        return None, None
    return layer.keys, layer.values


def cache_tensors(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(layer.keys, layer.values) for layer in cache.layers]


def plain_layers(cache) -> bool:
    """Whether every layer is a plain ``DynamicLayer`` (no sliding window, no quantisation)."""
    from transformers.cache_utils import DynamicLayer

    return all(type(layer) is DynamicLayer for layer in getattr(cache, "layers", [None]))


def select_cache_rows(cache, idx: torch.Tensor) -> None:
    """Keep the batch rows ``idx`` of ``cache``, in place."""
    cache.batch_select_indices(idx)


@lru_cache(maxsize=None)
def buffer_layer():
    """``BufferLayer``: a cache layer in a preallocated buffer (transformers is imported on first use)."""
    from transformers.cache_utils import DynamicLayer

    class BufferLayer(DynamicLayer):
        """A cache layer in a preallocated buffer: a step writes its column in place, where
        ``DynamicLayer`` concatenates (copies the whole cache) at every step."""

        def __init__(self, kbuf: torch.Tensor, vbuf: torch.Tensor, n: int):
            super().__init__()
            self.kbuf, self.vbuf, self.n = kbuf, vbuf, n
            self.device, self.is_initialized = kbuf.device, True
            self._view()

        def _view(self) -> None:
            self.keys, self.values = self.kbuf[:, :, :self.n], self.vbuf[:, :, :self.n]

        def update(self, key_states, value_states, *args, **kwargs):
            m = key_states.shape[2]
            if self.n + m > self.kbuf.shape[2]:  # more columns than planned: grow (a copy, as DynamicLayer)
                grow = max(m, self.kbuf.shape[2])
                self.kbuf = torch.cat([self.kbuf, self.kbuf.new_zeros(*self.kbuf.shape[:2], grow, self.kbuf.shape[3])], 2)
                self.vbuf = torch.cat([self.vbuf, self.vbuf.new_zeros(*self.vbuf.shape[:2], grow, self.vbuf.shape[3])], 2)
            self.kbuf[:, :, self.n:self.n + m] = key_states
            self.vbuf[:, :, self.n:self.n + m] = value_states
            self.n += m
            self._view()
            return self.keys, self.values

    return BufferLayer


# ---------------------------------------------------------------------------- attention
def attn_implementation(model) -> str | None:
    return getattr(getattr(model, "config", None), "_attn_implementation", None)


@contextmanager
def attention_implementation(model, name: str):
    """``model`` runs with the registered attention function ``name`` inside the context."""
    previous = model.config._attn_implementation
    model.config._attn_implementation = name
    try:
        yield
    finally:
        model.config._attn_implementation = previous


def register_attention(name: str, fn) -> None:
    from transformers import AttentionInterface

    if name not in AttentionInterface._global_mapping:
        AttentionInterface.register(name, fn)


def sdpa_attention(module, query, key, value, mask, **kw):
    """transformers' own SDPA attention function (what ``generate`` runs under ``sdpa``)."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    return sdpa_attention_forward(module, query, key, value, mask, **kw)


# ---------------------------------------------------------------------------- MKL packed GEMM
def mkl_ops_available() -> bool:
    return bool(torch.backends.mkl.is_available() and hasattr(torch.ops.mkl, "_mkl_linear")
                and hasattr(torch.ops.mkl, "_mkl_reorder_linear_weight"))


def mkl_pack(w: torch.Tensor, rows: int) -> torch.Tensor:
    return torch.ops.mkl._mkl_reorder_linear_weight(w, rows)


def mkl_linear(x: torch.Tensor, pack: torch.Tensor, w: torch.Tensor, bias, rows: int) -> torch.Tensor:
    return torch.ops.mkl._mkl_linear(x, pack, w, bias, rows)


# ---------------------------------------------------------------------------- accelerate, Qwen-VL
def hook_device(module):
    """The execution device accelerate's hook gives ``module`` (None: not hooked)."""
    hook = getattr(module, "_hf_hook", None)
    for h in getattr(hook, "hooks", None) or ([hook] if hook is not None else []):
        dev = getattr(h, "execution_device", None)
        if dev is not None:
            return torch.device(f"cuda:{dev}" if isinstance(dev, int) else dev)
    return None


def rope_owner(model):
    """The module that keeps ``rope_deltas`` from its last prefill (transformers' Qwen-VL models)."""
    for m in (getattr(model, "model", None), model):
        if m is not None and hasattr(m, "rope_deltas") and hasattr(m, "get_rope_index"):
            return m
    return None


def last_rope_deltas(model):
    """The ``rope_deltas`` of the last prefill (a tensor; None where the model keeps none)."""
    return getattr(rope_owner(model), "rope_deltas", None)


def select_rope_rows(model, index: torch.Tensor) -> None:
    """Keep the ``rope_deltas`` rows ``index`` (batched generation dropped the other rows' cache)."""
    inner = getattr(model, "model", None)
    deltas = getattr(inner, "rope_deltas", None)
    if deltas is not None and deltas.shape[0] > 1:
        inner.rope_deltas = deltas.index_select(0, index.to(deltas.device))


# ---------------------------------------------------------------------------- the check
def problems() -> list[str]:
    """Each private call exercised on a tiny random Llama: one line per call that no longer works (naming it)."""
    import warnings

    from transformers import LlamaConfig, LlamaForCausalLM

    out: list[str] = []

    def check(name, fn):
        assert name in CALLS, name
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", FutureWarning)  # a deprecated call is a problem now, not in 5.40
                fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported by the call's name
            out.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=64)
    model = LlamaForCausalLM(cfg).eval()
    ids = torch.tensor([[1, 5, 7, 9], [2, 4, 6, 8]])
    state = {}

    def forward():
        with torch.inference_mode():
            state["out"] = model(input_ids=ids[:, :3], use_cache=True)
            state["next"] = model(input_ids=ids[:, 3:], use_cache=True, **cache_kw(model, out_cache(state["out"])))
        assert state["next"].logits.shape[:2] == (2, 1)

    def output():
        cache = out_cache(state["out"])
        assert len(cache_layers(cache)) == 2 and layer_kv(cache_layers(cache)[0])[0].shape[2] == 4

    def generate():
        with torch.inference_mode():
            first = model.generate(input_ids=ids, max_new_tokens=2, do_sample=False, return_dict_in_generate=True,
                                   use_cache=True, pad_token_id=0)
            model.generate(input_ids=first.sequences, max_new_tokens=1, do_sample=False, pad_token_id=0,
                           **cache_kw(model, out_cache(first)))

    def dynamic_cache():
        k = torch.zeros(1, 2, 3, 8)
        assert cache_tensors(make_cache([(k, k), (k, k)]))[1][0].shape == (1, 2, 3, 8)

    def layers():
        k = torch.zeros(1, 2, 3, 8)
        layer = buffer_layer()(torch.zeros(1, 2, 5, 8), torch.zeros(1, 2, 5, 8), 3)
        assert len(cache_layers(cache_with_layers([layer]))) == 1
        assert layer.update(k[:, :, :1], k[:, :, :1])[0].shape[2] == 4 and plain_layers(make_cache([(k, k)]))

    def select():
        k = torch.arange(2.0).view(2, 1, 1, 1).expand(2, 2, 3, 8).contiguous()
        cache = make_cache([(k, k)])
        select_cache_rows(cache, torch.tensor([1]))
        assert cache_tensors(cache)[0][0].shape[0] == 1 and float(cache_tensors(cache)[0][0][0, 0, 0, 0]) == 1.0

    def attn():
        assert attn_implementation(model) in ("sdpa", "eager")
        with attention_implementation(model, "eager"):
            assert attn_implementation(model) == "eager"

    def registry():
        register_attention("mmbench_check", lambda *a, **k: None)
        from transformers import AttentionInterface
        assert "mmbench_check" in AttentionInterface._global_mapping

    def sdpa():
        q = torch.randn(1, 4, 3, 8)
        kv = torch.randn(1, 2, 3, 8)
        module = model.model.layers[0].self_attn
        got, _ = sdpa_attention(module, q, kv, kv, None, dropout=0.0, scaling=None)
        assert got.shape == (1, 3, 4, 8)

    for name, fn in (("forward(cache=... | past_key_values=...)", forward),
                     ("output.cache | output.past_key_values", output),
                     ("generate(cache=... | past_key_values=...)", generate),
                     ("DynamicCache(list of (keys, values))", dynamic_cache),
                     ("DynamicLayer.keys/values/is_initialized/update", layers),
                     ("DynamicCache.batch_select_indices", select),
                     ("config._attn_implementation", attn),
                     ("AttentionInterface.register/_global_mapping", registry),
                     ("transformers.integrations.sdpa_attention.sdpa_attention_forward", sdpa)):
        check(name, fn)
    if mkl_ops_available():
        w = torch.randn(8, 16)

        def mkl():
            x = torch.randn(3, 16)
            assert torch.allclose(mkl_linear(x, mkl_pack(w, 4), w, None, 3), x @ w.T, atol=1e-4)
        check("torch.ops.mkl._mkl_linear", mkl)
    return out
