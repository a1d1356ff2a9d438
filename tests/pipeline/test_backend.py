"""The generation back-end and batch policy of a run (generation.backend / batch_policy): validated in one
line, recorded in the manifest, the policy's request count reaching the model per call, and an interrupted
batched run resuming to exactly the uninterrupted one (real SmolLM2 on MMMU demo items)."""
import json

import pytest
import torch

from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy
from mmbench_lib.pipeline import generation as g
from mmbench_lib.pipeline.backend import OneAtATime, call_size, with_backend
from mmbench_lib.pipeline.config import RunConfig


def _config(tmp_path, demo, **kw):
    return RunConfig("mmmu", tmp_path / "run", **{"source": demo["mmmu"]["source"], "split": "validation",
                                                  "model": "smollm2", "max_new_tokens": 4, "progress": False, **kw})


@pytest.mark.parametrize("kw, message", [
    ({"backend": "fast"}, "generation.backend: unknown value 'fast'"),
    ({"backend": "vllm"}, "generation.backend: 'vllm' needs a vllm:<model> spec, not 'smollm2'"),
    ({"backend": "hf", "model": "openai:m"}, "generation.backend: 'hf' runs the model in this process; 'openai:m' is served"),
    ({"batch_policy": {"max_row": 4}}, "generation.batch_policy: unknown field(s) ['max_row']"),
    ({"batch_policy": {"max_rows": 0}}, "generation.batch_policy: max_rows: must be >= 1, got 0"),
    ({"batch_policy": {"kv_decode": "maybe"}}, "generation.batch_policy: kv_decode: expected bool (true/false, yes/no, 1/0)"),
    ({"batch_policy": {"max_rows": 4}, "backend": "hf"}, "generation.batch_policy: applies to backend 'batched', not 'hf'"),
])
def test_bad_backend_or_policy_is_one_line(kw, message, tmp_path, demo):
    with pytest.raises(ValueError) as e:
        _config(tmp_path, demo, **kw)
    assert str(e.value).startswith(message) and "\n" not in str(e.value), str(e.value)


def test_auto_backend_follows_the_spec(tmp_path, demo):
    assert _config(tmp_path, demo).backend_name == "batched"
    assert _config(tmp_path, demo, model="openai:m").backend_name == "openai"
    c = _config(tmp_path, demo, batch_policy={"max_rows": 4, "kv_decode": False})
    assert c.policy() == BatchPolicy(max_rows=4, kv_decode=False)
    assert c.to_dict()["generation"]["batch_policy"] == {"max_rows": 4, "kv_decode": False} \
        and c.to_dict()["generation"]["backend"] == "auto"


def test_the_gpu_default_is_padded_generate_and_the_cpu_default_the_kv_path():
    p = BatchPolicy()
    assert (p.on("cpu").kv_decode, p.on("cpu").chunk) == (True, 4)
    assert (p.on("cuda:0").kv_decode, p.on("cuda:0").chunk) == (False, 0)
    assert BatchPolicy(kv_decode=True, chunk=4).on("cuda").kv_decode is True  # asked for: kept


def test_backend_on_the_adapter_and_the_loop_call_size(tmp_path, demo, smollm2):
    c = _config(tmp_path, demo, batch_size=8, batch_policy={"requests_per_call": 40, "max_rows": 16})
    a = with_backend(smollm2, c)
    assert a is smollm2 and a.generator.policy.requests_per_call == 40 and call_size(a, c) == 40
    assert call_size(a, _config(tmp_path, demo, batch_policy={"requests_per_call": 4})) == 32  # at least max_rows
    one = with_backend(smollm2, _config(tmp_path, demo, backend="hf", batch_size=3))
    assert isinstance(one, OneAtATime) and call_size(one, _config(tmp_path, demo, backend="hf", batch_size=3)) == 3
    assert one.describe()["generation"]["mode"] == "one request at a time"
    off = with_backend(smollm2, _config(tmp_path, demo, batch_policy={"kv_decode": False}))
    assert off.describe()["generation"]["decoder"] == "generate in chunks"
    assert "kv_decode=False" in off.describe()["generation"]["decoder_note"]


@pytest.mark.slow
def test_the_policy_sees_every_pending_request_and_an_interrupted_run_resumes_exactly(tmp_path, demo, smollm2,
                                                                                    monkeypatch):
    calls = []
    real = BatchedGenerator.run

    def counting(self, adapter, requests):
        calls.append(len(requests))
        return real(self, adapter, requests)

    monkeypatch.setattr(BatchedGenerator, "run", counting)
    whole = _config(tmp_path / "a", demo, limit=12)  # the notebook's defaults: batch_size 8, default policy
    g.evaluate_generation(whole, smollm2)
    assert calls == [12]  # all pending requests in one call, not batch_size (8) at a time
    man = json.loads((tmp_path / "a" / "run" / "manifest.json").read_text())
    assert man["generation"]["backend"] == "batched" and man["spec"]["generation"]["batch_policy"] == {}
    assert man["model"]["generation"]["requests_per_call"] == 128 and man["model"]["generation"]["kv_decode"] is True

    calls.clear()
    policy = {"requests_per_call": 5, "max_rows": 5}
    part = _config(tmp_path / "b", demo, limit=12, batch_policy=policy)

    def interrupted(self, adapter, requests):
        calls.append(len(requests))
        if len(calls) == 2:
            raise KeyboardInterrupt  # the second call never finishes
        return real(self, adapter, requests)

    monkeypatch.setattr(BatchedGenerator, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        g.evaluate_generation(part, smollm2)
    lines = (tmp_path / "b" / "run" / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 5  # the first call's rows were flushed
    monkeypatch.setattr(BatchedGenerator, "run", counting)
    calls.clear()
    g.evaluate_generation(part, smollm2)
    assert calls == [5, 2]  # only the 7 items not stored
    rows = [json.loads(x) for x in (tmp_path / "b" / "run" / "predictions.jsonl").read_text().splitlines()]
    ref = [json.loads(x) for x in (tmp_path / "a" / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len({r["id"] for r in rows}) == len(rows) == 12  # no duplicates
    assert {r["id"]: r for r in rows} == {r["id"]: r for r in ref}
    scored = [(tmp_path / d / "run" / "scored.jsonl").read_text() for d in ("a", "b")]
    assert scored[0] == scored[1]
    torch.manual_seed(0)
