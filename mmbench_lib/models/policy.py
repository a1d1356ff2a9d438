"""The batch policy of the batched generation path, in a module without torch (the run spec checks it).

``mmbench_lib.models.batching`` runs it; this module only holds the fields, their checks and the defaults
decided per device.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from mmbench_lib.core.flags import parse_bool

#: decode steps between dropping finished rows on the CPU (``BatchPolicy.chunk=None``)
CPU_CHUNK = 4


@dataclass
class BatchPolicy:
    """How requests become batches (tokens counted as rows x (prompt + max_new_tokens)).

    Two decoders: ``generate`` on left-padded batches (transformers' own decoding, what lm-eval and
    VLMEvalKit run on GPUs) and the suite's kv-decode path (``models.cpu.kv_decode``: shared prefix,
    continuous batching, ``flat_prefill``, ``packed`` weights), written and measured on one CPU only.
    ``kv_decode=None`` (the default) takes the kv-decode path on the CPU and padded ``generate`` on any
    other device, and ``chunk=None`` drops finished rows every 4 steps on the CPU and makes one
    ``generate`` call per batch elsewhere: on a GPU the default is the plain padded ``generate`` that is
    known to work there; the CPU-tuned paths run there only when asked (``kv_decode=True``, ``chunk=4``).
    ``requests_per_call``: requests the run loop hands the generator at once (it flushes after each call),
    so the batcher can keep ``max_rows`` rows decoding and group prompts by length.
    """

    token_budget: int = 32768
    max_rows: int = 32
    chunk: int | None = None  # decode steps between dropping finished rows; 0: one generate call per batch
    kv_decode: bool | None = None  # the suite's kv-decode path; None: on the CPU only
    requests_per_call: int = 128  # requests per call of the run loop (at least max_rows)
    #: kv-decode path: prompts per prefill forward (decode batches hold up to max_rows); None: 8 in padded batches
    #: (more rows cost more padding), max_rows end to end (no padding; one forward instead of several)
    prefill_rows: int | None = None
    prefill_tokens: int = 8192  # kv-decode path: rows x padded prompt length of one prefill forward
    share_prefix: bool = True  # kv-decode path: compute the prompts' common token prefix once
    packed_weights: bool = True  # kv-decode path: fp32 CPU linears on pre-packed weights (``models.cpu.packed``)
    #: kv-decode path: the fixed cost of one more forward (the weights read once more) in prompt tokens of
    #: compute (a SmolLM2 forward of 1 token took 70 ms, a prompt token 1.6-1.9 ms, on one CPU core: about 40);
    #: a prompt up to this many tokens shorter than its batch's longest pads rather than opening a forward,
    #: and a shared prefix is computed apart only when that saves at least this many prompt tokens
    forward_tokens: int = 32
    flat_prefill: bool = True  # kv-decode path: text prompts prefilled end to end, no padding (``models.cpu.flat_prefill``)

    def on(self, device) -> "BatchPolicy":
        """The policy with its automatic fields (``kv_decode``, ``chunk``) decided for ``device``."""
        cpu = str(device).split(":")[0] == "cpu"
        return replace(self, kv_decode=cpu if self.kv_decode is None else self.kv_decode,
                       chunk=(CPU_CHUNK if cpu else 0) if self.chunk is None else self.chunk)

    def describe(self) -> dict:
        return {"token_budget": self.token_budget, "max_rows": self.max_rows, "chunk": self.chunk,
                "kv_decode": self.kv_decode, "requests_per_call": self.requests_per_call,
                "prefill_rows": self.prefill_rows, "prefill_tokens": self.prefill_tokens,
                "share_prefix": self.share_prefix, "packed_weights": self.packed_weights,
                "forward_tokens": self.forward_tokens, "flat_prefill": self.flat_prefill}


#: BatchPolicy field -> (accepted types, lowest value); ``None`` allowed where its default is ``None``
_POLICY_TYPES = {"token_budget": ((int,), 1), "max_rows": ((int,), 1), "chunk": ((int, type(None)), 0),
                 "kv_decode": ((bool, type(None)), None), "requests_per_call": ((int,), 1),
                 "prefill_rows": ((int, type(None)), 1), "prefill_tokens": ((int,), 1), "share_prefix": ((bool,), None),
                 "packed_weights": ((bool,), None), "forward_tokens": ((int,), 0), "flat_prefill": ((bool,), None)}


def policy_from(options: dict | None) -> BatchPolicy:
    """A ``BatchPolicy`` from a dict of its fields (a run's ``batch_policy``); a wrong name, type or
    value is a ``ValueError`` of one line naming the field."""
    options = dict(options or {})
    known = [f.name for f in fields(BatchPolicy)]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; known: {known}")
    for name, value in options.items():
        types, low = _POLICY_TYPES[name]
        if bool in types and not (value is None and type(None) in types):  # the one yes/no rule (core.flags)
            try:
                options[name] = value = parse_bool(value)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = " or ".join("None" if t is type(None) else t.__name__ for t in types)
            raise ValueError(f"{name}: expected {names}, got {type(value).__name__} {value!r}")
        if low is not None and value is not None and value < low:
            raise ValueError(f"{name}: must be >= {low}, got {value}")
    return BatchPolicy(**options)


