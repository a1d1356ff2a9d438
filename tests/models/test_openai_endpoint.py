"""The OpenAI-compatible endpoint adapter against a real local HTTP server on 127.0.0.1."""
import pytest
from PIL import Image

from mmbench_lib.models import load_adapter
from mmbench_lib.core.requests import IMAGE, GenerateRequest
from mmbench_lib.models.openai_compat import EndpointError

from .openai_server import Server


def test_answers_equal_the_wrapped_model_and_images_travel(smollm2, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    req = GenerateRequest("q1", f"{IMAGE} What is the capital of France? One word.", [Image.new("RGB", (16, 16), "red")],
                          max_new_tokens=8)
    [direct] = smollm2.generate([GenerateRequest("q1", req.prompt.replace(IMAGE, ""), max_new_tokens=8)])
    with Server(smollm2) as srv:
        ep = load_adapter("openai:smollm2", base_url=srv.url, concurrency=2)
        [g] = ep.generate([req])
    assert g.text == direct.text and g.hit_limit == direct.hit_limit
    assert srv.images_seen == 1 and srv.auth == "Bearer sk-secret-123"
    assert ep.describe()["base_url"] == srv.url and "sk-secret-123" not in str(ep.describe())


def test_retries_with_backoff_then_succeeds(smollm2):
    with Server(smollm2, fail_first=2) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, backoff=0.01, max_retries=3)
        [g] = ep.generate([GenerateRequest("q", "Say hi.", max_new_tokens=3)])
    assert g.text and srv.requests == 3 and srv.completions == 1


def test_gives_up_after_retries_and_on_client_errors(smollm2):
    with Server(smollm2, fail_first=10) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, backoff=0.01, max_retries=2)
        with pytest.raises(EndpointError, match="failed after 3 attempts; last error: HTTP 503"):
            ep.generate([GenerateRequest("q", "hi", max_new_tokens=2)])
    with Server(smollm2, fail_first=1, status=400) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, backoff=0.01)
        with pytest.raises(EndpointError, match="answered 400"):
            ep.generate([GenerateRequest("q", "hi", max_new_tokens=2)])
        assert srv.requests == 1  # a client error is not retried


def test_timeouts_are_retried(smollm2):
    # the stall outlasts the timeout by far; the timeout leaves a loaded 2-core CI machine ample time
    # for the real answer (a 0.5 s timeout once timed out every attempt there)
    with Server(smollm2, stall_first=1, stall_s=8.0) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, timeout=3.0, backoff=0.01, max_retries=2)
        [g] = ep.generate([GenerateRequest("q", "Say hi.", max_new_tokens=3)])
    assert g.text and srv.requests >= 2


def test_a_run_through_the_endpoint_resumes_without_asking_again(smollm2, demo, tmp_path):
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.generation import evaluate_generation

    with Server(smollm2) as srv:
        ep = load_adapter("openai:smollm2", base_url=srv.url, concurrency=3)
        src = demo["mmmu"]["source"]
        m1 = evaluate_generation(RunConfig("mmmu", tmp_path, source=src, max_new_tokens=6, limit=4, progress=False), ep)
        asked = srv.completions
        m2 = evaluate_generation(RunConfig("mmmu", tmp_path, source=src, max_new_tokens=6, limit=4, progress=False), ep)
    assert asked == 4 and srv.completions == asked  # the rerun found every response in the run store
    assert m1["overall"] == m2["overall"]


def test_endpoint_cannot_rank():
    ep = load_adapter("openai:m", base_url="http://127.0.0.1:9/v1", server="other")
    with pytest.raises(NotImplementedError, match="no prompt log-likelihoods"):
        ep.score_choices([])


# --- misbehaving servers: every test is bounded in time and talks to 127.0.0.1 only ----------------

def test_huge_retry_after_is_capped():
    import time

    with Server(fail_first=1, status=429, misbehave="retry_after", retry_after="100000") as srv:
        ep = load_adapter("openai:m", base_url=srv.url, max_retries=1, max_retry_after=0.2)
        t = time.monotonic()
        [g] = ep.generate([GenerateRequest("q", "hi", max_new_tokens=2)])
    assert g.text == "ok" and srv.requests == 2 and time.monotonic() - t < 60  # uncapped: 100000 s


def test_timeout_is_a_deadline_for_the_whole_request_not_per_read():
    import time

    # one byte every 0.2 s never trips a per-read timeout; the 1 kB body would take 200 s
    with Server(fail_first=10**9, misbehave="trickle", trickle_s=0.2) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, timeout=1.5, max_retries=0)
        t = time.monotonic()
        with pytest.raises(EndpointError, match=r"failed after 1 attempts; last error: TimeoutError: no complete answer within 1.5 s"):
            ep.generate([GenerateRequest("q", "hi", max_new_tokens=2)])
    assert time.monotonic() - t < 60 and srv.requests == 1


def test_secrets_never_reach_errors_predictions_or_outputs(demo, tmp_path, monkeypatch):
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.generation import evaluate_generation

    monkeypatch.setenv("MY_KEY", "sk-live-abcdef123456")
    with Server(fail_first=10**9, status=400, misbehave="echo_headers") as srv:
        ep = load_adapter("openai:m", base_url=srv.url, api_key_env="MY_KEY", backoff=0.01)
        with pytest.raises(EndpointError) as err:
            ep.generate([GenerateRequest("q", "hi", max_new_tokens=2)])
        assert "request_headers" in str(err.value) and "[REDACTED]" in str(err.value)
        assert "abcdef123456" not in str(err.value)
        assert srv.auth == "Bearer sk-live-abcdef123456"  # the key was sent, and echoed back
        evaluate_generation(RunConfig("mmmu", tmp_path, source=demo["mmmu"]["source"], max_new_tokens=4, limit=2,
                                      progress=False), ep)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and not [p for p in written if b"abcdef123456" in p.read_bytes()]
    assert any(b"[REDACTED]" in p.read_bytes() for p in written)  # the failed rows keep the (redacted) error


def test_redact_patterns():
    from mmbench_lib.models.openai_compat import redact

    text = ("Authorization: Bearer abc.def; {'authorization': 'Bearer xyz'} token sk-proj-AbC_12-3 "
            "http://user:pa55@host/v1 http://127.0.0.1:8000/v1 mysecretvalue")
    out = redact(text, ["mysecretvalue"])
    for secret in ("abc.def", "xyz", "sk-proj-AbC_12-3", "pa55", "mysecretvalue"):
        assert secret not in out
    assert "http://127.0.0.1:8000/v1" in out and "http://user:[REDACTED]@host/v1" in out


def test_a_failing_item_is_asked_max_retries_plus_one_times_in_all(demo, tmp_path):
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.generation import evaluate_generation

    with Server(fail_first=10**9, status=500) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, backoff=0.01, max_retries=2, concurrency=2)
        evaluate_generation(RunConfig("mmmu", tmp_path, source=demo["mmmu"]["source"], max_new_tokens=4, limit=3,
                                      progress=False), ep)
        asked = srv.requests
        with pytest.raises(EndpointError, match="failed after 3 attempts"):
            ep.generate([GenerateRequest("q", "hi", max_new_tokens=2)])
    assert asked == 3 * 3  # three items, each sent max_retries + 1 times despite the batch being isolated
    assert srv.requests == asked + 3
