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
    ep = load_adapter("openai:m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(NotImplementedError, match="no prompt log-likelihoods"):
        ep.score_choices([])
