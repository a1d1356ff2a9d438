"""Generation through an OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp server, ...).

Users serve a large model elsewhere; the suite only sends ``/v1/chat/completions`` requests:
greedy (temperature 0), a concurrency limit, retries with exponential backoff on connection
errors, timeouts, 429 and 5xx (``Retry-After`` honoured), and a per-request timeout. Responses
land in the run store like any model's, so a rerun never asks again; within a run, answers are
also kept in memory so isolating one failing request does not re-ask the others.
The API key is read from an environment variable and never written anywhere.
"""
from __future__ import annotations

import base64
import io
import json
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from mmbench_lib.core.requests import Generation, GenerateRequest, interleave
from mmbench_lib.models.registry import register_model

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class EndpointError(RuntimeError):
    pass


def _data_url(image) -> str:
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def content_parts(prompt: str, images) -> list[dict]:
    """OpenAI content parts: images (as PNG data URLs) where IMAGE markers stand, all first when there is none."""
    return [{"type": "image_url", "image_url": {"url": _data_url(v)}} if kind == "image" else {"type": "text", "text": v}
            for kind, v in interleave(prompt, images)]


class OpenAICompatible:
    sees_images = True
    can_output_images = False

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 4, max_retries: int = 5, timeout: float = 120.0, backoff: float = 1.0,
                 max_backoff: float = 30.0):
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise ValueError("an OpenAI-compatible endpoint needs base_url (or OPENAI_BASE_URL), e.g. http://127.0.0.1:8000/v1")
        self.model, self.base_url = model, base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.concurrency, self.max_retries, self.timeout = concurrency, max_retries, timeout
        self.backoff, self.max_backoff = backoff, max_backoff
        self.name = f"openai:{model}"
        self._answers: dict[tuple, Generation] = {}
        self.requests_sent = 0

    def score_choices(self, requests):
        raise NotImplementedError("chat-completion endpoints return no prompt log-likelihoods: use them for generation "
                                  "(MMMU, CMMMU), and a transformers adapter for answer ranking")

    def generate(self, requests: list[GenerateRequest]) -> list[Generation]:
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency)) as pool:
            return list(pool.map(self._one, requests))

    def _one(self, r: GenerateRequest) -> Generation:
        key = (r.id, r.prompt, r.max_new_tokens, len(r.images))
        if key in self._answers:
            return self._answers[key]
        body = {"model": self.model, "temperature": 0, "max_tokens": r.max_new_tokens,
                "messages": [{"role": "user", "content": content_parts(r.prompt, r.images)}]}
        data = self._post("/chat/completions", body)
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise EndpointError(f"unexpected response for {r.id!r}: {json.dumps(data)[:300]}") from None
        usage = data.get("usage") or {}
        gen = Generation(text=text.strip(), num_tokens=int(usage.get("completion_tokens") or 0),
                         hit_limit=choice.get("finish_reason") == "length")
        self._answers[key] = gen
        return gen

    def _post(self, path: str, body: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        payload = json.dumps(body).encode("utf-8")
        last = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(last[1] if last and last[1] else min(self.max_backoff, self.backoff * 2 ** (attempt - 1)))
            req = urllib.request.Request(self.base_url + path, data=payload, headers=headers, method="POST")
            self.requests_sent += 1
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as e:
                detail = e.read().decode("utf-8", "replace")[:300]
                if e.code not in RETRY_STATUS:
                    raise EndpointError(f"{self.base_url}{path} answered {e.code}: {detail}") from None
                retry_after = e.headers.get("Retry-After")
                last = (f"HTTP {e.code}: {detail}", float(retry_after) if retry_after and retry_after.isdigit() else None)
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as e:
                last = (f"{type(e).__name__}: {getattr(e, 'reason', e)}", None)
        raise EndpointError(f"{self.base_url}{path} failed after {self.max_retries + 1} attempts; last error: {last[0]}")

    def describe(self) -> dict:
        return {"adapter": "OpenAICompatible", "name": self.name, "model_id": self.model, "base_url": self.base_url,
                "api_key_env": self.api_key_env, "concurrency": self.concurrency, "max_retries": self.max_retries,
                "timeout_s": self.timeout, "decoding": "temperature 0 (greedy)"}


@register_model("openai", endpoint=True, needs_target=True)
def load_openai(target, **endpoint):
    """``openai:<served model name>``: an OpenAI-compatible endpoint (generation only)."""
    return OpenAICompatible(target, **endpoint)
