"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the tests, wrapping a transformers adapter.

It serves ``POST /v1/chat/completions`` (text and image_url content parts), counts requests,
and can fail the first N requests (503) or stall (to exercise timeouts and retries). Without an
adapter it answers "ok". Misbehaviours for the first ``fail_first`` requests (``misbehave``):
``retry_after`` (the error carries ``Retry-After: retry_after``), ``trickle`` (a 200 whose body
comes one byte every ``trickle_s``), ``echo_headers`` (the error body echoes the request headers,
Authorization included); ``fail_first=10**9`` makes it fail always. ``answer(path, body)``, when given, is the
JSON value of every POST's 200 answer instead (malformed answers, NaN literals); ``vllm=True`` also serves
``GET /version`` (as vLLM does), ``POST /tokenize`` (one id per character) and ranking on ``/v1/completions``
with every prompt position's log-probability ``logprob`` (NaN, positive: what a broken server sends).
"""
from __future__ import annotations

import base64
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image

from mmbench_lib.core.requests import IMAGE, GenerateRequest, Generation


class Server:
    def __init__(self, adapter=None, fail_first: int = 0, stall_first: int = 0, stall_s: float = 0.0, status: int = 503,
                 misbehave: str | None = None, retry_after: str = "100000", trickle_s: float = 0.2,
                 answer=None, vllm: bool = False, logprob: float = -1.0):
        self.adapter, self.fail_first, self.stall_first, self.stall_s, self.status = adapter, fail_first, stall_first, stall_s, status
        self.misbehave, self.retry_after, self.trickle_s = misbehave, retry_after, trickle_s
        self.requests, self.completions, self.lock = 0, 0, threading.Lock()
        self.images_seen, self.auth, self.bodies = 0, None, []
        self.answer, self.vllm, self.logprob = answer, vllm, logprob
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, status: int, out) -> None:
                data = json.dumps(out).encode()  # allow_nan: a broken server's NaN goes out as the literal NaN
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if server.vllm and self.path == "/version":
                    return self._send(200, {"version": "0.0-fake"})
                self._send(404, {"error": "not found"})

            def _vllm(self, body):
                if self.path == "/tokenize":
                    text = body.get("prompt") or "".join(m["content"] for m in body["messages"])
                    return {"tokens": [ord(c) % 997 for c in text]}
                entries = [[None] + [{str(t): {"logprob": server.logprob}} for t in p[1:]] for p in body["prompt"]]
                return {"choices": [{"index": i, "text": "", "prompt_logprobs": e} for i, e in enumerate(entries)]}

            def do_POST(self):
                with server.lock:
                    server.requests += 1
                    n = server.requests
                    server.auth = self.headers.get("Authorization")
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.bodies.append(body)
                if n <= server.stall_first:
                    time.sleep(server.stall_s)
                if n <= server.fail_first:
                    try:
                        self._misbehave()
                    except OSError:  # the client gave up (timeout): expected
                        pass
                    return
                if server.answer is not None:
                    return self._send(200, server.answer(self.path, body))
                if server.vllm and self.path in ("/tokenize", "/v1/completions"):
                    return self._send(200, self._vllm(body))
                if self.path != "/v1/chat/completions" or body.get("temperature") != 0:
                    self.send_response(400)
                    self.end_headers()
                    self.wfile.write(b'{"error": "bad request"}')
                    return
                text, images = "", []
                for part in body["messages"][0]["content"]:
                    if part["type"] == "text":
                        text += part["text"]
                    else:
                        raw = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                        images.append(Image.open(io.BytesIO(raw)).convert("RGB"))
                        text += IMAGE
                with server.lock:
                    server.images_seen += len(images)
                    if server.adapter is None:
                        g = Generation("ok", 1, False)
                    else:
                        [g] = server.adapter.generate([GenerateRequest("srv", text, images, max_new_tokens=body["max_tokens"])])
                    server.completions += 1
                out = {"choices": [{"index": 0, "message": {"role": "assistant", "content": g.text},
                                    "finish_reason": "length" if g.hit_limit else "stop"}],
                       "usage": {"completion_tokens": g.num_tokens}}
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _misbehave(self):
                if server.misbehave == "trickle":
                    data = b'{"choices": [{"message": {"content": "' + b"x" * 1000 + b'"}}]}'
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    for i in range(len(data)):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        time.sleep(server.trickle_s)
                    return
                body = b'{"error": "try again"}'
                if server.misbehave == "echo_headers":
                    body = json.dumps({"error": "bad gateway", "request_headers": dict(self.headers)}).encode()
                self.send_response(server.status)
                if server.misbehave == "retry_after":
                    self.send_header("Retry-After", server.retry_after)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
