"""No traceback reaches a user (issue 41, item 6): routes that would fail every item are refused before the run in
one line — ``openai:`` with ``server: vllm`` on an image ranking notebook, and a model that writes no text
(``random``) asked to generate (notebook 50's generated protocols and generation part, notebook 20, a
generated-letter recipe)."""
import pytest

from mmbench_lib.cli import main
from mmbench_lib.pipeline import preflight


@pytest.mark.parametrize("argv, says", [
    (["notebooks/10_seed_bench.ipynb", "--model", "openai:m", "-p", "engine_options",
      '{server: vllm, base_url: "http://127.0.0.1:9/v1"}'],
     "parameter model='openai:m': 'openai:m' on a vLLM server ranks through /v1/completions, which takes token ids "
     "and no images"),
    (["notebooks/50_protocol_sensitivity.ipynb", "--model", "random"],
     "parameter model='random': 'random' writes no text (it only ranks given answers); generation_benchmark 'cmmmu' "
     "and protocols ['gen-lmms-eval', 'gen-vlmevalkit'] need(s) text"),
    (["notebooks/20_generation.ipynb", "--model", "random", "-p", "benchmark", "mmmu"],
     "'random' writes no text (it only ranks given answers); benchmark 'mmmu' need(s) text"),
    (["notebooks/10_seed_bench.ipynb", "--model", "random", "--recipe", "lmms-eval-gen"],
     "recipe 'lmms-eval-gen' need(s) text"),
])
def test_a_route_that_would_fail_every_item_is_one_line_before_the_run(outputs, capsys, argv, says):
    assert main(["run", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not any(outputs.iterdir())  # no run folder


def test_random_still_ranks_and_is_a_generation_baseline():
    preflight.check_values({"benchmark": "seed", "model": "random", "recipe": "seed1-ppl"})
    preflight.check_values({"benchmark": "mmmu", "model": "random", "baseline": "random"})  # the baseline, not a model
    preflight.check_values({"model": "random", "ranking_benchmark": "seed", "protocols": ["content-sum", "letters"],
                            "generation_benchmark": ""})


def test_a_protocol_the_ranking_task_does_not_declare_is_refused_before_the_run():
    with pytest.raises(preflight.BadValue, match="MMBench has no protocol 'gen-vlmevalkit'; use some of \\['official', "
                                                  ".*did you mean 'gen-lmms-eval'"):
        preflight.check_values({"ranking_benchmark": "mmb", "protocols": ["gen-vlmevalkit"]})
    preflight.check_values({"ranking_benchmark": "mmb", "protocols": ["official", "letters"]})
    preflight.check_values({"ranking_benchmark": "seed", "protocols": []})  # empty: the task's defaults
