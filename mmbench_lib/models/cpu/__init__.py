"""The CPU generation engine: what ``BatchPolicy(kv_decode=None)`` runs on the CPU and nowhere else unless asked.

- ``kv_decode``: greedy decoding over a kept cache, shared prompt prefixes (radix tree), continuous batching;
- ``flat_prefill``: text prompts prefilled end to end in one forward (an attention function per segment);
- ``packed``: fp32 linear layers on MKL-packed weights.

Written and measured on one CPU (docs/batching.md). Every private transformers / torch call it makes goes
through ``mmbench_lib.scoring.hf_internals`` (with the likelihood engine's), where a test exercises each.
"""
