"""Parameter values checked before a kernel starts (``mmbench_lib.pipeline.preflight``)."""
import json
import socket
import time

import pytest

from mmbench_lib.pipeline.preflight import BadValue, check_model, check_values


def _cache_model(hub, repo_id, sha="0123456789abcdef0123456789abcdef01234567"):
    folder = hub / f"models--{repo_id.replace('/', '--')}"
    (folder / "snapshots" / sha).mkdir(parents=True)
    (folder / "snapshots" / sha / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(sha)


def test_hub_id_offline_must_be_in_the_local_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(BadValue, match="not in the local Hugging Face cache and HF_HUB_OFFLINE=1") as e:
        check_model("causal:org/cached-model")
    assert "(hf download org/cached-model)" in str(e.value) and "huggingface-cli" not in str(e.value) and "huggingface.co" not in str(e.value)
    _cache_model(tmp_path / "hub", "org/cached-model")
    check_model("causal:org/cached-model")  # now found offline
    with pytest.raises(BadValue, match="at revision 'v2'.*hf download org/cached-model --revision v2"):
        check_model("vlm:org/cached-model", revision="v2")


def test_hub_id_online_is_left_to_a_reachable_hub(tmp_path, monkeypatch):
    """Not offline and the endpoint answers: the download is the hub's business (a local listening
    socket stands in for huggingface.co, so the test needs no network)."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
        check_model("causal:org/not-cached")


def test_hub_id_uncached_with_the_hub_unreachable_fails_at_once(tmp_path, monkeypatch):
    """Not offline but no network: one line naming the endpoint, before transformers' retries."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with socket.socket() as s:  # a port nothing listens on: connection refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    started = time.monotonic()
    with pytest.raises(BadValue, match=f"not in the local Hugging Face cache and the hub is 127.0.0.1:{port} unreachable"):
        check_model("causal:org/not-cached")
    assert time.monotonic() - started < 5
    _cache_model(tmp_path / "hub", "org/not-cached")
    check_model("causal:org/not-cached")  # cached: no network needed
    with pytest.raises(BadValue, match="hub dataset 'org/no-data' is not in the local Hugging Face cache and the hub is"):
        check_values({"benchmark": "mmmu", "source": "org/no-data"}, "generation")


def test_local_model_folder(tmp_path):
    with pytest.raises(BadValue, match="no such model folder"):
        check_model(f"vlm:{tmp_path / 'missing'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadValue, match="has no config.json"):
        check_model(f"causal:{tmp_path / 'empty'}")
    (tmp_path / "empty" / "config.json").write_text("{}")
    check_model(f"causal:{tmp_path / 'empty'}")


@pytest.mark.parametrize("spec,needle", [
    ("llava", "did you mean 'tiny-llava'"),
    ("cuasal:org/x", "did you mean 'causal'"),
    ("vlm:", "needs a name after the colon"),
    ("random:abc", "must be an integer"),
    (3, "a model spec is a string"),
])
def test_bad_model_specs(spec, needle):
    with pytest.raises(BadValue, match=None) as e:
        check_model(spec)
    assert needle in str(e.value) and e.value.name == "model"


@pytest.mark.parametrize("values,name,needle", [
    ({"benchmark": "mmmu", "split": "valid"}, "split", "did you mean 'val'"),
    ({"benchmark": "cmmmu", "split": "validation"}, None, None),
    ({"benchmark": "mmmu", "subjects": ["Acounting"]}, "subjects", "did you mean 'Accounting'"),
    ({"benchmark": "mmmu", "subjects": ["acc", "Art Theory"]}, None, None),
    ({"benchmark": "cmmmu", "subjects": "buisness"}, "subjects", "did you mean 'business'"),
    ({"benchmark": "seed", "dimensions": [1, 13]}, "dimensions", "13 is not a seed dimension id"),
    ({"benchmark": "seed", "dimensions": "imgae"}, "dimensions", "did you mean 'image'"),
    ({"benchmark": "seed2", "dimensions": [27]}, None, None),
    ({"benchmark": "seed2", "level": "L4"}, "level", "use one of ['L1', 'L2', 'L3']"),
    ({"benchmark": "seed2", "part": "Singel-Image"}, "part", "use one of"),
    ({"benchmark": "seeds"}, "benchmark", "did you mean 'seed'"),
    ({"benchmark": "mmmu", "baseline": "frequnt"}, "baseline", "did you mean 'frequent'"),
    ({"benchmark": "mmmu", "source": "no/such/folder"}, "source", "no such folder"),
    ({"device": "gpu"}, "device", "cuda:<n>"),
    ({"dtype": "fp16"}, "dtype", "use one of"),
    ({"dtype": "bfloat16", "device_map": "auto", "max_memory": {0: "38GiB", "1": "38GiB", "cpu": "120GiB"}}, None, None),
    ({"device_map": {"model.layers.0": 0, "lm_head": "cuda:1", "model.norm": "disk"}, "max_memory": None}, None, None),
    ({"device_map": "atuo"}, "device_map", "use null (one device), auto"),
    ({"device_map": ["auto"]}, "device_map", "expected null, 'auto' or a non-empty dict"),
    ({"device_map": {"lm_head": "gpu1"}}, "device_map", "'lm_head': device 'gpu1' is not a GPU index"),
    ({"device_map": "auto", "max_memory": {"gpu0": "20GiB"}}, "max_memory", "key 'gpu0' is not a GPU index"),
    ({"device_map": "auto", "max_memory": {0: "20 gigs"}}, "max_memory", "size '20 gigs' is not a byte count"),
    ({"device_map": None, "max_memory": {0: "20GiB"}}, "max_memory", "a memory cap needs device_map"),
    ({"trust_remote_code": "maybe"}, "trust_remote_code", "use true or false"),
    ({"trust_remote_code": "yes"}, None, None),  # core.flags: the one rule for a yes/no value
    ({"compare_runs": ["no-such-run"]}, "compare_runs", "no run folder 'no-such-run'"),
])
def test_values(values, name, needle, monkeypatch, tmp_path):
    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path))
    if name is None:
        check_values(values)
        return
    with pytest.raises(BadValue) as e:
        check_values(values)
    assert e.value.name == name and needle in str(e.value), str(e.value)


def test_notebook_protocol_decides_the_benchmarks():
    with pytest.raises(BadValue, match="ranking benchmarks"):
        check_values({"benchmark": "mmmu"}, protocol="ranking")
    check_values({"benchmark": "seed2"}, protocol="ranking")


def test_a_baseline_without_a_model_does_not_check_the_model():
    check_values({"benchmark": "mmmu", "baseline": "random", "model": "causal:/no/such/model"})
    with pytest.raises(BadValue):
        check_values({"benchmark": "mmmu", "baseline": "all", "model": "causal:/no/such/model"})


def test_run_config_records_placement_and_passes_it_to_the_loader(tmp_path):
    from mmbench_lib.pipeline.config import RunConfig
    from mmbench_lib.pipeline.runs import model_settings

    settings = model_settings({"device": "cpu", "dtype": "auto", "revision": "", "trust_remote_code": False,
                               "device_map": "auto", "max_memory": {"0": "20GiB", "cpu": "60GiB"}, "benchmark": "x"})
    assert settings == {"device": "cpu", "trust_remote_code": False, "device_map": "auto",
                        "max_memory": {"0": "20GiB", "cpu": "60GiB"}}  # empty and "auto": the defaults
    c = RunConfig("mmmu", tmp_path, source="data/demo/mmmu", **settings)
    assert c.max_memory == {0: "20GiB", "cpu": "60GiB"}  # accelerate's keys: GPU indices as ints
    opts = c.adapter_options()
    assert opts["device_map"] == "auto" and opts["max_memory"] == {0: "20GiB", "cpu": "60GiB"}
    assert c.to_dict()["model"]["device_map"] == "auto"
    with pytest.raises(ValueError, match=r"^model.max_memory: a memory cap needs device_map"):
        RunConfig("mmmu", tmp_path, source="x", max_memory={0: "20GiB"})
    with pytest.raises(ValueError, match=r"^model.device_map: 'lm_head': device 'gpu' is not"):
        RunConfig("mmmu", tmp_path, source="x", device_map={"lm_head": "gpu"})


def test_engine_options_are_checked_before_the_run():
    """``engine_options`` (notebooks 10, 11, 20): the served engines' option names, only for a served model."""
    from mmbench_lib.pipeline.preflight import check_engine_options

    check_engine_options({}, "smollm2")  # the default: nothing to check
    check_engine_options({"tensor_parallel_size": 4, "max_model_len": 8192}, "vllm:org/model")
    check_engine_options({"concurrency": 64, "extra_body": {"top_k": 1}}, "openai:served-name")
    with pytest.raises(BadValue, match=r"unknown option\(s\) \['tensor_paralel_size'\]") as e:
        check_engine_options({"tensor_paralel_size": 4}, "vllm:org/model")
    assert e.value.name == "engine_options"
    with pytest.raises(BadValue, match="apply to vllm:<model> and openai:<model>, not 'smollm2'"):
        check_values({"model": "smollm2", "engine_options": {"tensor_parallel_size": 2}})
    with pytest.raises(BadValue, match="a mapping"):
        check_engine_options(["tensor_parallel_size"], "vllm:org/model")


def test_a_ranking_run_with_thinking_on_is_refused_before_it_runs(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    with pytest.raises(BadValue, match="not the papers' answer-ranking protocol") as e:
        check_values({"benchmark": "seed", "chat_template_kwargs": {"enable_thinking": True}})
    assert e.value.name == "chat_template_kwargs"
    check_values({"benchmark": "mmmu", "chat_template_kwargs": {"enable_thinking": True}})  # generation may think
    check_values({"benchmark": "seed", "chat_template_kwargs": {"enable_thinking": False}})
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "MMBENCH_OUTPUTS": str(tmp_path / "outputs"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "mmbench_lib.cli", "run", "notebooks/10_seed_bench.ipynb", "--model",
                           "smollm2", "--chat-template-kwargs", "{enable_thinking: true}"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("mmbench: error:")]
    assert proc.returncode == 2 and len(errors) == 1 and "answer-ranking" in errors[0], proc.stderr
    assert not (tmp_path / "outputs").exists()
