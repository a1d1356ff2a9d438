"""The generation back-end of a run (``RunSpec.generation.backend``) put on its model, and how many requests the
run loop hands it per call.

- ``hf``: transformers' ``generate`` one request at a time, no padding: the reference every batched
  path is tested against (``adapter.generate_one_at_a_time``). The loop calls it ``batch_size`` items at a time.
- ``batched``: ``mmbench_lib.models.batching.BatchedGenerator`` under the run's ``BatchPolicy``. The loop
  hands it ``policy.requests_per_call`` requests per call, so the batcher can keep ``max_rows`` rows decoding,
  refill them as rows finish and sort prompts by length; the loop still appends and flushes every call's rows
  before the next call, so a resumed run skips exactly the stored items (an interruption loses at most one
  call's work). On a GPU the policy's defaults are padded ``generate`` (see ``BatchPolicy``).
- ``openai`` / ``vllm``: the served adapters batch on the server; the loop hands them ``batch_size`` items.
"""
from __future__ import annotations

from mmbench_lib.models.batching import BatchedGenerator
from mmbench_lib.pipeline.config import RunSpec


class OneAtATime:
    """An adapter whose ``generate`` is its one-request-at-a-time reference (back-end ``hf``)."""

    def __init__(self, adapter):
        self._adapter = adapter

    def __getattr__(self, name):
        return getattr(self._adapter, name)

    def generate(self, requests):
        return self._adapter.generate_one_at_a_time(requests)

    def describe(self) -> dict:
        return {**self._adapter.describe(), "generation": {
            "mode": "one request at a time", "backend": "hf",
            "note": "transformers' generate per request, no padding (generation.backend='hf')"}}


def with_backend(adapter, config: RunSpec):
    """``adapter`` set up for ``config.backend_name``: wrapped for ``hf``, given a generator under the run's
    policy for ``batched``; baselines and served models as they are."""
    backend = config.backend_name
    if backend == "hf" and hasattr(adapter, "generate_one_at_a_time"):
        return OneAtATime(adapter)
    if backend == "batched" and hasattr(adapter, "generate_ids") and not hasattr(adapter, "answer"):
        adapter.generator = BatchedGenerator(config.policy())
    return adapter


def call_size(adapter, config: RunSpec) -> int:
    """Items per call of the run loop: the policy's ``requests_per_call`` (at least ``max_rows``) for an
    adapter generating under a ``BatchPolicy``, else ``config.batch_size``."""
    generator = getattr(adapter, "generator", None) if not isinstance(adapter, OneAtATime) else None
    if config.backend_name == "batched" and isinstance(generator, BatchedGenerator):
        policy = config.policy()
        return max(policy.requests_per_call, policy.max_rows)
    return config.generation.batch_size


def ranking_call_size(adapter, config: RunSpec) -> int:
    """Questions per call of the ranking loop: ``generation.batch_size``, raised on CUDA to what the likelihood
    engine's free-memory budget holds (``adapter.ranking_call_size``; recorded in the manifest's model)."""
    size = getattr(adapter, "ranking_call_size", None)
    batch = config.generation.batch_size
    return size(batch) if size is not None else batch
