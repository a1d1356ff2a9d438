"""Hostile answers and options of an OpenAI-compatible endpoint (issue 35, item 7), against the real local server of
``openai_server``: a malformed answer or an impossible log-probability fails its item with one line, options are
refused before anything runs by the one check (``openai_compat.check_options``), predictions.jsonl stays strict JSON."""
import json
import logging
import math

import pytest

from mmbench_lib.core.requests import GenerateRequest
from mmbench_lib.core.store import RunStore
from mmbench_lib.models import load_adapter
from mmbench_lib.models.openai_compat import EndpointError, check_options
from mmbench_lib.models.vllm_requests import LOGPROB_TOLERANCE
from mmbench_lib.pipeline import preflight
from mmbench_lib.pipeline.ranking import rank_items
from mmbench_lib.tasks import seed1
from mmbench_lib.tasks.recipes import get_recipe

from .openai_server import Server


@pytest.mark.parametrize("answer", [{"choices": []}, {"choices": [{"message": {}}]}, {"id": "x"}, [1, 2],
                                    {"choices": [{"message": {"content": 7}}]}])
def test_a_json_answer_that_is_not_a_completion_is_one_line(answer):
    with Server(answer=lambda path, body: answer) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, max_retries=0)
        with pytest.raises(EndpointError, match=r"unexpected answer for item 'q1'") as err:
            ep.generate([GenerateRequest("q1", "hi", max_new_tokens=2)])
    assert "\n" not in str(err.value)


def test_malformed_answers_fail_their_items_and_the_run_ends(demo, tmp_path, caplog):
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.generation import evaluate_generation

    with Server(answer=lambda path, body: {"choices": [{"index": 0}]}) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, max_retries=0)
        with caplog.at_level(logging.WARNING):
            m = evaluate_generation(RunConfig("mmmu", tmp_path, source=demo["mmmu"]["source"], limit=2, progress=False), ep)
    rows = RunStore(tmp_path, readonly=True).rows()
    assert m["counts"]["failed"] == 2 and all("unexpected answer" in r["error"] for r in rows)
    assert "Traceback" not in caplog.text and "UnboundLocalError" not in caplog.text


@pytest.mark.parametrize("opts, named", [
    ({"max_retries": -1}, "max_retries"), ({"timeout": "soon"}, "timeout"), ({"timeout": 0}, "timeout"),
    ({"base_url": "file:///etc/passwd"}, "base_url"), ({"base_url": "http://"}, "base_url"),
    ({"base_url": "http://h:99999/v1"}, "base_url"), ({"concurrency": 0}, "concurrency"),
    ({"backoff": float("nan")}, "backoff"), ({"server": "tgi"}, "server"), ({"extra_body": {"model": "x"}}, "extra_body"),
])
def test_endpoint_options_are_refused_in_one_line_before_anything_runs(opts, named):
    assert check_options(opts).startswith(f"{named}:")
    with pytest.raises(preflight.BadValue, match=f"{named}:"):
        preflight.check_values({"benchmark": "mmmu", "model": "openai:m", "engine_options": opts})
    with pytest.raises(ValueError, match=f"{named}:"):
        load_adapter("openai:m", **{"base_url": "http://127.0.0.1:9/v1", **opts})


def test_good_endpoint_options_pass():
    assert check_options({"base_url": "https://h.example:8000/v1", "max_retries": 0, "timeout": 2.5, "server": "vllm",
                          "concurrency": 64, "extra_body": {"top_k": 1}, "tensor_parallel_size": 4}) is None


def test_the_openai_plus_vllm_server_ranking_route_is_refused_before_the_run():
    """Issue 41, item 6: the route takes no images and the endpoint sends them, so every item failed with a
    ``NotImplementedError``; it is one line before the run now, naming the routes that work."""
    with pytest.raises(preflight.BadValue, match=r"takes token ids and no images.*generated-letter recipe"):
        preflight.check_values({"benchmark": "seed", "model": "openai:m", "recipe": "seed1-ppl",
                                "engine_options": {"server": "vllm", "base_url": "http://127.0.0.1:9/v1"}})
    preflight.check_values({"benchmark": "seed", "model": "openai:m", "recipe": "lmms-eval-gen",
                            "engine_options": {"server": "vllm", "base_url": "http://127.0.0.1:9/v1"}})
    with pytest.raises(preflight.BadValue, match="cannot rank"):  # undeclared: the chat endpoint cannot rank
        preflight.check_values({"benchmark": "seed", "model": "openai:m", "recipe": "seed1-ppl"})


@pytest.mark.parametrize("logprob", [float("nan"), float("inf"), 0.5, 10 * LOGPROB_TOLERANCE])
def test_impossible_served_log_probabilities_fail_their_items(demo, tmp_path, logprob):
    d = demo["seed"]
    items = seed1.load(d["annotation_file"], d["image_root"], d["video_roots"], dimensions="image")[:3]
    with Server(vllm=True, logprob=logprob) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, server="vllm", max_retries=0)
        ep.sees_images = False  # a blind model: ranking on /v1/completions takes text only
        rows = rank_items(items, ep, RunStore(tmp_path), get_recipe("seed1-ppl"), progress=False).rows()
    assert [r["status"] for r in rows] == ["failed"] * 3
    assert all("log-probability is finite and <= 0" in r["error"] for r in rows)
    for line in (tmp_path / "predictions.jsonl").read_text().splitlines():  # strict JSON: no NaN literal
        json.loads(line, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))


def test_sound_log_probabilities_rank_and_tiny_rounding_above_zero_is_read(demo, tmp_path):
    d = demo["seed"]
    items = seed1.load(d["annotation_file"], d["image_root"], d["video_roots"], dimensions="image")[:2]
    for lp in (-0.7, LOGPROB_TOLERANCE / 2):
        with Server(vllm=True, logprob=lp) as srv:
            ep = load_adapter("openai:m", base_url=srv.url, server="vllm", max_retries=0)
            ep.sees_images = False
            rows = rank_items(items, ep, RunStore(tmp_path / str(lp)), get_recipe("seed1-ppl"), progress=False).rows()
        assert [r["status"] for r in rows] == ["ok", "ok"] and all(math.isfinite(s) for r in rows for s in r["scores"]["sum"])


def test_a_non_finite_value_from_any_model_fails_its_item_and_the_store_writes_strict_json(demo, tmp_path):
    from mmbench_lib.core.requests import ChoiceScore
    from mmbench_lib.models import RandomChoice

    class NaNModel(RandomChoice):
        def score_choices(self, requests):
            return [[ChoiceScore(float("nan"), float("nan"), 1) for _ in r.continuations] for r in requests]

    d = demo["seed"]
    items = seed1.load(d["annotation_file"], d["image_root"], d["video_roots"], dimensions="image")[:2]
    rows = rank_items(items, NaNModel(seed=0), RunStore(tmp_path), get_recipe("seed1-ppl"), progress=False).rows()
    assert all(r["status"] == "failed" and "not finite (scores.sum[0])" in r["error"] for r in rows)
    with pytest.raises(ValueError, match=r"item 'x', field 'score\[1\]': a value that is not finite"):
        RunStore(tmp_path / "b").append([{"id": "x", "score": [0.5, float("nan")]}])
    assert not (tmp_path / "b" / "predictions.jsonl").exists() or not (tmp_path / "b" / "predictions.jsonl").read_text()


@pytest.mark.parametrize("served", ["..", ".", "a/../../..", "/"])
def test_a_served_model_name_never_becomes_a_path(demo, tmp_path, served):
    from mmbench_lib.pipeline import runs
    from mmbench_lib.pipeline.config import RunConfig

    out = tmp_path / "outputs" / "x"
    with Server() as srv:
        cfg = RunConfig("mmmu", out, source=demo["mmmu"]["source"], model=f"openai:{served}", limit=2, progress=False,
                        endpoint={"base_url": srv.url, "max_retries": 0})
        results = runs.evaluate_baselines(cfg, ("none",))
        sent = {b["model"] for b in srv.bodies}
    [label] = results
    assert (out / label).parent == out and (out / label / "predictions.jsonl").is_file()
    assert sorted(p.name for p in (tmp_path / "outputs").iterdir()) == ["x"]  # nothing in the outputs root itself
    assert sent == {served}  # sent as given


def test_a_served_name_that_exists_as_a_local_path_is_sent_as_given(tmp_path):
    (tmp_path / "Qwen").mkdir()
    (tmp_path / "Qwen" / "Qwen2-VL").mkdir()
    params = {"model": "openai:Qwen/Qwen2-VL", "models": ["openai:..", "vlm:Qwen/Qwen2-VL"]}
    got = preflight.absolute_paths(params, tmp_path)
    assert got["model"] == "openai:Qwen/Qwen2-VL" and got["models"][0] == "openai:.."
    assert got["models"][1] == f"vlm:{tmp_path / 'Qwen' / 'Qwen2-VL'}"  # a local model's folder is still a path


@pytest.mark.parametrize("param, value", [("endpoint_url", "file:///etc/passwd"), ("concurrency", 0)])
def test_notebook_20s_endpoint_parameters_go_through_the_same_check(param, value):
    with pytest.raises(preflight.BadValue, match=f"{'base_url' if param == 'endpoint_url' else param}:") as err:
        preflight.check_values({"benchmark": "mmmu", "model": "openai:m", param: value})
    assert err.value.name == param
