"""Secrets are never stored or printed (issue 41, item 2): a credential in a URL's userinfo, a vLLM ``server_args``
list, headers, ``extra_body`` or an inline option is refused before the run in one line that does not hold it, and
a key taken from the environment (``api_key_env``) appears nowhere in the run folder or the printed output."""
import pytest

from mmbench_lib.cli import main
from mmbench_lib.core.secrets import check_parameters, credential, redact
from mmbench_lib.pipeline.config import ModelSpec

KEY = "sk-PLANTEDkey0123456789"


@pytest.mark.parametrize("values, where", [
    ({"endpoint_url": f"http://user:{KEY}@127.0.0.1:8000/v1"}, "endpoint_url: a URL with credentials"),
    ({"endpoint_url": f"https://{KEY}@api.example.org/v1"}, "endpoint_url: a URL with credentials"),
    ({"engine_options": {"server_args": ["--port", "8001", "--api-key", KEY]}},
     "engine_options.server_args[2]: --api-key passes a credential"),
    ({"engine_options": {"server_args": [f"--api-key={KEY}"]}}, "engine_options.server_args[0]: --api-key passes"),
    ({"engine_options": {"server_args": ["--token", "abc"]}}, "engine_options.server_args[0]: --token passes"),
    ({"engine_options": {"extra_body": {"headers": {"Authorization": "Bearer abc"}}}},
     "engine_options.extra_body.headers.Authorization: a credential given as a value"),
    ({"engine_options": {"extra_body": {"user_key": KEY}}}, "engine_options.extra_body.user_key: an API key"),
    ({"engine_options": {"api_key": "plain-words"}}, "engine_options.api_key: a credential given as a value"),
    ({"engine_options": {f"api_key:{KEY}": None}}, "engine_options: a name holding an API key"),  # YAML {a:b}
    ({"api_key_env": KEY}, "api_key_env: not an environment variable's name"),
    ({"system_prompt": "hf_" + "A" * 30}, "system_prompt: a Hugging Face token"),
])
def test_every_credential_is_refused_naming_where_never_what(values, where):
    with pytest.raises(ValueError) as e:
        check_parameters(values)
    message = str(e.value)
    assert message.startswith(where) and "api_key_env" in message and len(message.splitlines()) == 1
    assert KEY not in message and "plain-words" not in message and "Bearer" not in message


@pytest.mark.parametrize("values", [
    {"endpoint_url": "http://127.0.0.1:8000/v1", "api_key_env": "MY_KEY", "model": "openai:gpt-4o"},
    {"engine_options": {"server_args": ["--port", "8001", "--api-key-file"], "tokenizer": "x", "max_tokens": 3}},
    {"data_dir": "/data/risk-assessment-2024", "subjects": ["Accounting"], "stop_strings": ["\n\n"]},
    {"engine_options": {"extra_body": {"top_k": 1, "token_budget": None}}},
])
def test_ordinary_parameters_pass(values):
    assert credential(values, "") is None


def test_the_run_spec_refuses_a_credential_in_its_engine_options():
    with pytest.raises(ValueError, match=r"^model.engine_options.base_url: a URL with credentials") as e:
        ModelSpec(spec="openai:gpt-4o", engine_options={"base_url": f"http://u:{KEY}@h/v1"})
    assert KEY not in str(e.value)
    assert redact(f"http://u:{KEY}@h/v1 and {KEY}") == "http://[REDACTED]@h/v1 and [REDACTED]"


@pytest.mark.parametrize("args", [
    ["-p", "endpoint_url", f"http://user:{KEY}@127.0.0.1:9/v1"],
    ["-p", "engine_options", f"{{extra_body: {{api_key: {KEY}}}}}"],
    ["-p", "engine_options", f"{{api_key:{KEY}}}"],
    ["-p", "api_key", KEY],
])
def test_mmbench_run_refuses_before_the_run_folder_and_prints_no_key(outputs, capsys, args):
    rc = main(["run", "notebooks/20_generation.ipynb", "--model", "openai:x", "-p", "benchmark", "mmmu",
               "--limit", "1", *args])
    captured = capsys.readouterr()
    assert rc == 2 and KEY not in captured.out + captured.err
    assert "parameter" in captured.err and "api_key_env" in captured.err and len(captured.err.splitlines()) == 1
    assert not any(outputs.iterdir())  # no run folder: nothing recorded


@pytest.mark.slow
def test_a_key_from_the_environment_is_nowhere_in_the_run_folder_or_the_output(outputs, demo_dir, capfd, monkeypatch):
    """A cheap real run (the endpoint refuses the connection: every item fails at once) with the key planted."""
    monkeypatch.setenv("PLANTED_KEY", KEY)
    rc = main(["run", str(_repo() / "notebooks" / "20_generation.ipynb"),
               "--model", "openai:x", "-p", "benchmark", "mmmu", "--limit", "1", "-p", "data_dir",
               str(demo_dir / "mmmu"), "-p", "endpoint_url", "http://127.0.0.1:9/v1", "-p", "api_key_env",
               "PLANTED_KEY", "-p", "engine_options", "{max_retries: 0}", "--run-id", "keyrun"])
    printed = capfd.readouterr()
    assert rc == 3 and "failed" in printed.err  # every item failed (nothing listens on port 9)
    assert KEY not in printed.out + printed.err
    files = [p for p in (outputs / "keyrun").rglob("*") if p.is_file()]
    assert {"params.yaml", "manifest.json", "20_generation.ipynb"} <= {p.name for p in files}
    assert not [p for p in files if KEY.encode() in p.read_bytes()]


def _repo():
    from pathlib import Path

    return Path(__file__).resolve().parents[2]
