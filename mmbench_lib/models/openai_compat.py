"""Generation (and, on vLLM, ranking) through an OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp server, ...).

More: docs/modules.md, ``mmbench_lib/models/openai_compat.py``.
"""
from __future__ import annotations

import base64
import http.client
import io
import json
import math
import os
import re
import socket
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

from mmbench_lib.core.requests import Generation, GenerateRequest, interleave
from mmbench_lib.models import vllm_requests
from mmbench_lib.models.registry import register_model

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class EndpointError(RuntimeError):
    """A request that failed for one item (the run marks that item and goes on: no traceback)."""
    item_failure = True


_SECRET_PATTERNS = (
    re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)[^\"'\r\n,}]+"),  # header or JSON/dict echo
    re.compile(r"(?i)(bearer\s+)[^\s\"',}]+"),
    re.compile(r"()\bsk-[A-Za-z0-9_\-.]{3,}"),
    re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^/@\s:]*:)[^/@\s]+(?=@)"),  # scheme://user:PASSWORD@host
)


def redact(text: str, secrets=()) -> str:
    """``text`` with the given secret values, ``Authorization`` values, bearer tokens, ``sk-...``
    tokens and URL passwords replaced by ``[REDACTED]``."""
    for value in secrets:
        if value and len(value) >= 4:
            text = text.replace(value, "[REDACTED]")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + "[REDACTED]", text)
    return text


class _Timeout(Exception):
    pass


def _data_url(image) -> str:
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def content_parts(prompt: str, images) -> list[dict]:
    """OpenAI content parts: images (as PNG data URLs) where IMAGE markers stand, all first when there is none."""
    return [{"type": "image_url", "image_url": {"url": _data_url(v)}} if kind == "image" else {"type": "text", "text": v}
            for kind, v in interleave(prompt, images)]


SERVERS = ("auto", "vllm", "sglang", "other")
#: the client's options and what each accepts (``check_options``); ``vllm:``'s server options are its own
_WHOLE = {"concurrency": 1, "max_retries": 0}
_SECONDS = ("timeout", "backoff", "max_backoff", "max_retry_after")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_options(opts: dict) -> str | None:
    """The first problem of endpoint options (``base_url``, ``concurrency``, ``max_retries``, ``timeout``, ...) as one
    line naming the option, or ``None``: the one check of the client's options, called by the pre-run check and by
    the client itself. Options it does not know (``vllm:``'s server options) are left to their owner."""
    url = opts.get("base_url")
    if url not in (None, ""):
        parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            return f"base_url: an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1, got {url!r}"
        try:
            parts.port
        except ValueError:
            return f"base_url: {url!r} has a port that is not a number from 0 to 65535"
    for name, low in _WHOLE.items():
        v = opts.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low):
            return f"{name}: a whole number >= {low}, got {v!r}"
    for name in _SECONDS:
        v = opts.get(name)
        if v is not None and (not _number(v) or v < 0 or (name == "timeout" and v == 0)):
            return f"{name}: a number of seconds {'> 0' if name == 'timeout' else '>= 0'}, got {v!r}"
    if opts.get("server") is not None and opts["server"] not in SERVERS:
        return f"server: one of {', '.join(SERVERS)}, got {opts['server']!r}"
    for name in ("api_key_env", "tokenizer"):
        v = opts.get(name)
        if v is not None and (not isinstance(v, str) or not v):
            return f"{name}: a non-empty name, got {v!r}"
    extra = opts.get("extra_body")
    if extra is not None:
        if not isinstance(extra, dict):
            return f"extra_body: a mapping of request fields to values, got {extra!r}"
        clash = sorted(set(extra) & OWN_FIELDS)
        if clash:
            return f"extra_body: {clash} are set by the suite (greedy decoding, the prompt); remove them"
    return None

#: request fields the suite sets itself; ``extra_body`` cannot override them
OWN_FIELDS = {"model", "messages", "prompt", "temperature", "max_tokens", "prompt_logprobs", "return_token_ids", "n",
              "stream", "echo", "logprobs"}


class OpenAICompatible:
    sees_images = True
    can_output_images = False

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 32, max_retries: int = 5, timeout: float = 120.0, backoff: float = 1.0,
                 max_backoff: float = 30.0, max_retry_after: float = 60.0, extra_body: dict | None = None,
                 server: str = "auto", tokenizer: str | None = None):
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise ValueError("an OpenAI-compatible endpoint needs base_url (or OPENAI_BASE_URL), e.g. http://127.0.0.1:8000/v1")
        why = check_options({"base_url": base_url, "api_key_env": api_key_env, "concurrency": concurrency,
                             "max_retries": max_retries, "timeout": timeout, "backoff": backoff, "max_backoff": max_backoff,
                             "max_retry_after": max_retry_after, "extra_body": extra_body, "server": server,
                             "tokenizer": tokenizer})
        if why:
            raise ValueError(why)
        extra_body = dict(extra_body or {})
        self.model, self.base_url = model, base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.concurrency, self.max_retries, self.timeout = concurrency, max_retries, timeout
        self.backoff, self.max_backoff, self.max_retry_after = backoff, max_backoff, max_retry_after
        self.extra_body, self.server, self.tokenizer_path = extra_body, server, tokenizer
        self.name = f"openai:{model}"
        self._answers: dict[tuple, Generation] = {}
        self._failures: dict[tuple, str] = {}
        self._prompts = None
        self.server_version: str | None = None
        self.requests_sent = 0

    # -- the server behind the endpoint
    @property
    def root_url(self) -> str:
        """The server's root (``base_url`` without its ``/v1``): where vLLM serves ``/version`` and ``/tokenize``."""
        return self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url

    def server_kind(self) -> str:
        """``vllm``, ``sglang`` or ``other``: as declared, else detected once: SGLang answers ``GET /get_model_info``,
        vLLM does not and answers ``GET /version`` with ``{"version": ...}`` alone."""
        if self.server == "auto":
            self.server = "other"
            if self._get_json("/get_model_info") is not None:
                self.server = "sglang"
            else:
                info = self._get_json("/version")
                if isinstance(info, dict) and set(info) == {"version"}:
                    self.server, self.server_version = "vllm", str(info["version"])
        return self.server

    def _get_json(self, path: str):
        """``GET`` on the server's root: the JSON answer on 200, else ``None`` (never raises)."""
        try:
            status, _h, raw = self._request(self.root_url + path, None, self._headers(), method="GET")
            return json.loads(raw.decode("utf-8")) if status == 200 else None
        except (_Timeout, OSError, http.client.HTTPException, ValueError):
            return None

    def prompts(self):
        """Where prompt token ids come from: the local ``tokenizer`` (the HF path's rendering), else ``/tokenize``."""
        if self._prompts is None:
            if self.tokenizer_path:
                from transformers import AutoTokenizer

                self._prompts = vllm_requests.LocalPrompts(AutoTokenizer.from_pretrained(self.tokenizer_path))
            else:
                self._prompts = vllm_requests.ServerPrompts(lambda path, body: self._post_url(
                    self.root_url + path, {"model": self.model, **body}))
        return self._prompts

    # -- ranking (vLLM only)
    def score_choices(self, requests):
        if self.server_kind() != "vllm":
            raise NotImplementedError(
                f"{self.base_url} is not a vLLM server (server={self.server!r}) and chat-completion endpoints return "
                "no prompt log-likelihoods: use it for the generation benchmarks, and vLLM (server='vllm') or a "
                "transformers adapter for answer ranking")
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._rank_one, requests))

    def _rank_one(self, r):
        if (r.images or r.video is not None) and self.sees_images:
            raise NotImplementedError(
                f"{self.name}: ranking sends token ids to /v1/completions, which takes no images; a vision-language "
                "model served by vLLM ranks only text here (declare the model blind, or rank with the HF engine)")
        p = self.prompts()
        prefix = p.prefix_ids(r.prompt, r.chat)
        conts = [p.continuation_ids(c) for c in r.continuations]
        data = self._post("/completions", vllm_requests.ranking_body(self.model, prefix, conts, self.extra_body))
        try:
            return vllm_requests.scores_from(data, prefix, conts, f"{self.base_url} item {r.id!r}")
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            raise EndpointError(self._redact(f"{type(e).__name__}: {e}" if isinstance(e, KeyError) else str(e))) from None

    def generate(self, requests: list[GenerateRequest]) -> list[Generation]:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._one, requests))

    def _one(self, r: GenerateRequest) -> Generation:
        key = (r.id, r.prompt, r.max_new_tokens, len(r.images))
        if key in self._answers:
            return self._answers[key]
        if key in self._failures:  # asked max_retries + 1 times already in this run
            raise EndpointError(self._failures[key])
        try:
            _data, _choice, gen = self._ask(r)
        except EndpointError as e:
            self._failures[key] = str(e)
            raise
        self._answers[key] = gen
        return gen

    def _ask(self, r: GenerateRequest) -> tuple[dict, dict, Generation]:
        """One chat completion: (answer, its first choice, the generation)."""
        body = {**self.extra_body, "model": self.model, "temperature": 0, "max_tokens": r.max_new_tokens,
                "messages": [{"role": "user", "content": content_parts(r.prompt, r.images)}]}
        data = self._post("/chat/completions", body)
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"]
            if text is not None and not isinstance(text, str):
                raise TypeError("content is not text")
            usage = data.get("usage") or {}
            gen = Generation(text=(text or "").strip(), num_tokens=int(usage.get("completion_tokens") or 0),
                             hit_limit=choice.get("finish_reason") == "length")
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
            raise self.malformed(r.id, data, e) from None
        return data, choice, gen

    def malformed(self, item_id, data, error) -> EndpointError:
        """The one-line failure of an answer that is JSON but not a chat completion (no ``choices[0].message.content``)."""
        shown = json.dumps(data, default=str)[:300]
        return EndpointError(self._redact(f"{self.base_url}: unexpected answer for item {item_id!r} "
                                          f"({type(error).__name__}: {error}): {shown}"))

    def _redact(self, text: str) -> str:
        return redact(text, [os.environ.get(self.api_key_env) or ""])

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, path: str, body: dict) -> dict:
        return self._post_url(self.base_url + path, body)

    def _post_url(self, url: str, body: dict) -> dict:
        headers = self._headers()
        payload = json.dumps(body).encode("utf-8")
        last = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                wait = last[1] if last and last[1] is not None else min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
                time.sleep(max(0.0, min(wait, self.max_retry_after)))
            self.requests_sent += 1
            try:
                status, resp_headers, raw = self._request(url, payload, headers)
            except (_Timeout, socket.timeout, TimeoutError):
                last = (f"TimeoutError: no complete answer within {self.timeout:g} s", None)
                continue
            except (http.client.HTTPException, ConnectionError, OSError) as e:
                last = (f"{type(e).__name__}: {e}", None)
                continue
            if 200 <= status < 300:
                try:
                    return json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    raise EndpointError(self._redact(f"{url} answered {status} with a body that is not JSON: "
                                                     f"{raw[:300].decode('utf-8', 'replace')}")) from None
            detail = raw[:300].decode("utf-8", "replace")
            if status not in RETRY_STATUS:
                raise EndpointError(self._redact(f"{url} answered {status}: {detail}"))
            retry_after = (resp_headers.get("Retry-After") or "").strip()
            last = (f"HTTP {status}: {detail}", float(retry_after) if retry_after.isdigit() else None)
        raise EndpointError(self._redact(f"{url} failed after {self.max_retries + 1} attempts; last error: {last[0]}"))

    def _request(self, url: str, payload: bytes | None, headers: dict,
                 method: str = "POST") -> tuple[int, http.client.HTTPMessage, bytes]:
        """One POST (or GET); the whole exchange (connect, send, headers, body) must end within ``timeout``."""
        deadline = time.monotonic() + self.timeout

        def left() -> float:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout()
            return remaining

        parts = urllib.parse.urlsplit(url)
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname, parts.port, timeout=left())
        try:
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            conn.connect()
            sock = conn.sock
            sock.settimeout(left())
            conn.request(method, target, body=payload, headers=headers)
            sock.settimeout(left())
            resp = conn.getresponse()
            chunks = []
            while True:
                sock.settimeout(left())
                chunk = resp.read1(65536)
                if not chunk:
                    break
                chunks.append(chunk)
            return resp.status, resp.headers, b"".join(chunks)
        finally:
            conn.close()

    def describe(self) -> dict:
        return {"adapter": "OpenAICompatible", "name": self.name, "model_id": self.model, "base_url": self._redact(self.base_url),
                "api_key_env": self.api_key_env, "concurrency": self.concurrency, "max_retries": self.max_retries,
                "timeout_s": self.timeout, "max_retry_after_s": self.max_retry_after, "decoding": "temperature 0 (greedy)",
                "extra_body": self.extra_body, "server": self.server, "server_version": self.server_version,
                "tokenizer": self.tokenizer_path}


@register_model("openai", endpoint=True, needs_target=True, can_rank=False, served_name=True)
def load_openai(target, **endpoint):
    """``openai:<served model name>``: an OpenAI-compatible endpoint (generation; ranking when it is vLLM)."""
    return OpenAICompatible(target, **endpoint)
