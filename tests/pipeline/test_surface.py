"""The flat surface derived from the spec (issue 38 item 4) and the one rule for a yes/no value (issue 41 item 3).

The spec's fields carry their flat name, types, shortcut and docs line (``config.SURFACE``): ``FLAT``, ``mmbench
run``'s shortcuts and the docs table are derived from them; the report notebooks take a task's data as one
mapping checked by the task's own names; a boolean is parsed once, in the spec, by ``core.flags.parse_bool``.
"""
import importlib.util
import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from mmbench_lib.core.flags import parse_bool
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import FLAT, PARTS, RUN_FIELDS, SHORTCUTS, SURFACE, RunSpec
from mmbench_lib.pipeline.params import surface_table, with_data
from mmbench_lib.reports import configs
from mmbench_lib.runner import check_params, notebook_parameters
from mmbench_lib.tasks.base import all_tasks

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ("50_protocol_sensitivity", "51_blind_solvability", "52_circular_eval")


def cli(tmp_path, *args):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MMBENCH_OUTPUTS": str(tmp_path / "outputs"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "mmbench_lib.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def one_line_error(proc, tmp_path, *needles):
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("mmbench: error:"), proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "outputs").exists()
    for needle in needles:
        assert needle in lines[0], lines[0]


# ------------------------------------------------------------------ the surface, derived
def test_every_field_declares_its_surface_and_everything_is_derived_from_it():
    for part, cls in PARTS.items():
        for f in fields(cls):
            assert f.metadata.get("kind") and f.metadata.get("doc"), f"{part}.{f.name} declares no type or docs line"
    names = [p.name for p in SURFACE]
    assert len(names) == len(set(names)) == len(FLAT) + len(RUN_FIELDS) == 46
    assert FLAT == {p.name: (p.part, p.key) for p in SURFACE if p.part != "run"}
    assert set(SHORTCUTS) == {p.name for p in SURFACE if p.cli}
    from mmbench_lib.cli import RUN_SHORTCUTS, build_parser

    assert RUN_SHORTCUTS == {n: kind for n, (kind, _) in SHORTCUTS.items()} and RUN_SHORTCUTS["limit"] is int
    run = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "run")[1]
    flags = {o for a in run._actions for o in a.option_strings}
    assert {"--" + n.replace("_", "-") for n in SHORTCUTS} <= flags and "--video-input" not in flags


def test_the_docs_table_is_the_spec_table():
    """docs/runs.md holds ``surface_table()`` verbatim: one row per flat name (part.field, type, shortcut, line)."""
    table = surface_table()
    docs = (ROOT / "docs" / "runs.md").read_text(encoding="utf-8")
    assert table in docs, "docs/runs.md: replace the run spec table with pipeline.params.surface_table()"
    assert table.count("\n") == 2 + len(SURFACE)


def test_a_place_listing_flat_names_is_counted_and_few(tmp_path):
    """scripts/count_flat_lists.py: 51 places in mmbench_lib/ before the surface was derived, 14 after (6 are the spec
    parts themselves, the one source)."""
    spec = importlib.util.spec_from_file_location("count_flat_lists", ROOT / "scripts" / "count_flat_lists.py")
    count = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(count)
    found = count.places(ROOT)
    assert len(found) <= 14, "\n".join(f"{p}:{line}" for p, line, *_ in found)
    assert not [f for f in found if f[0].endswith(("params.py", "configs.py", "cli.py"))
                and f[2] != "ClassDef"], "the notebook mapping and the CLI list flat names again"
    (tmp_path / "mmbench_lib").mkdir()
    (tmp_path / "mmbench_lib" / "x.py").write_text("A = ('model', 'limit', 'seed', 'recipe', 'split')\n"
                                                   "def f(model, limit, seed, recipe): pass\n")
    assert [(p, n) for p, n, *_ in count.places(tmp_path)] == [("mmbench_lib/x.py", 1)]  # 5 names count, 4 do not
    assert any(kind == "ClassDef" and "retry_failed" in hit for _, _, kind, hit in found)  # the spec's own parts too


# ------------------------------------------------------------------ booleans: one rule
@pytest.mark.parametrize("value,parsed", [(True, True), (False, False), ("true", True), ("False", False),
                                          ("yes", True), ("NO", False), ("1", True), (0, False), (1, True),
                                          (" yes ", True)])
def test_one_rule_reads_a_yes_no_value(value, parsed):
    assert parse_bool(value) is parsed


@pytest.mark.parametrize("value", ["maybe", 2, -1, 1.0, None, "", "on", "y", [True]])
def test_a_wrong_spelling_is_refused_naming_part_and_field(value, tmp_path):
    with pytest.raises(ValueError, match=r"^run\.retry_failed: expected bool \(true/false, yes/no, 1/0\), got "):
        RunSpec.from_params("mmmu", tmp_path, source="x", retry_failed=value)
    with pytest.raises(ValueError, match=r"^selection\.lettered_only: expected bool"):
        RunSpec.from_params("mmmu", tmp_path, source="x", lettered_only=value)


def test_the_spec_holds_the_parsed_value(tmp_path):
    spec = RunSpec.from_params("mmmu", tmp_path, source="x", retry_failed="yes", trust_remote_code="no",
                               use_random=0, chat_template_kwargs={"enable_thinking": "false", "other": "yes"})
    assert spec.retry_failed is True and spec.model.trust_remote_code is False and spec.generation.use_random is False
    assert spec.model.chat_template_kwargs == {"enable_thinking": False, "other": "yes"}  # only the switch is a flag
    with pytest.raises(ValueError, match=r"^model\.chat_template_kwargs\.enable_thinking: expected bool"):
        RunSpec.from_params("mmmu", tmp_path, source="x", chat_template_kwargs={"enable_thinking": "maybe"})


def test_nested_flags_follow_the_same_rule(tmp_path):
    """A batch policy's and a vLLM engine's yes/no options: parsed by the rule, held parsed, a wrong spelling one line."""
    spec = RunSpec.from_params("mmmu", tmp_path, source="x", backend="batched", batch_policy={"kv_decode": "no"})
    assert spec.generation.batch_policy == {"kv_decode": False} and spec.policy().kv_decode is False
    served = RunSpec.from_params("mmmu", tmp_path, source="x", model="vllm:m", endpoint={"enforce_eager": "yes"})
    assert served.model.engine_options == {"enforce_eager": True}
    with pytest.raises(ValueError, match=r"^model\.engine_options\.enforce_eager: expected bool \(true/false"):
        RunSpec.from_params("mmmu", tmp_path, source="x", model="vllm:m", endpoint={"enforce_eager": "maybe"})
    with pytest.raises(ValueError, match=r"^generation\.batch_policy: kv_decode: expected bool \(true/false"):
        RunSpec.from_params("mmmu", tmp_path, source="x", backend="batched", batch_policy={"kv_decode": 2})


@pytest.mark.parametrize("value", [True, "true", 1, "yes"])
def test_ranking_refuses_thinking_however_it_is_spelled(value, demo, tmp_path):
    with pytest.raises(ValueError, match=r"^model\.chat_template_kwargs: .*thinking on .* ranking run"):
        RunSpec.from_params("seed", tmp_path, data=runs.demo_args("seed", demo),
                            chat_template_kwargs={"enable_thinking": value})
    off = RunSpec.from_params("seed", tmp_path, data=runs.demo_args("seed", demo),
                              chat_template_kwargs={"enable_thinking": "false"})
    assert off.model.chat_template_kwargs == {"enable_thinking": False}


@pytest.mark.parametrize("value", ["true", '"true"', "1"])
def test_mmbench_run_refuses_thinking_for_ranking_however_spelled(value, tmp_path):
    """``-p chat_template_kwargs '{enable_thinking: ...}'``: true, the string "true" and 1 alike (issue 41)."""
    proc = cli(tmp_path, "run", "notebooks/10_seed_bench.ipynb", "-p", "chat_template_kwargs",
               f"{{enable_thinking: {value}}}", "--run-id", "t")
    one_line_error(proc, tmp_path, "chat_template_kwargs", "thinking on", "ranking run")


def test_mmbench_run_reads_a_notebook_flag_by_the_rule(tmp_path):
    known = notebook_parameters(ROOT / "notebooks" / "10_seed_bench.ipynb")
    params = {"merge_shards": "yes", "trust_remote_code": 0}
    check_params("10_seed_bench.ipynb", params, known)
    assert params == {"merge_shards": True, "trust_remote_code": False}  # the notebook gets bools
    proc = cli(tmp_path, "run", "notebooks/10_seed_bench.ipynb", "-p", "merge_shards", "maybe")
    one_line_error(proc, tmp_path, "merge_shards='maybe'", "expected bool")


# ------------------------------------------------------------------ a task's data: one mapping
def test_report_notebooks_name_no_task_data_parameter():
    """Adding a benchmark adds no line to a report notebook: 50-52 take the task's data as one mapping."""
    data_names = {n for t in all_tasks() for n in t.data_parameters()}
    for nb in REPORTS:
        known = notebook_parameters(ROOT / "notebooks" / f"{nb}.ipynb")
        assert not data_names & set(known), (nb, sorted(data_names & set(known)))
        assert {n for n in known if n == "data" or n.endswith("_data")}, nb


@pytest.mark.parametrize("benchmark,before", [
    ("seed", {"dimensions": "all"}), ("seed2", {"level": "L2", "part": "all", "dimensions": "all"}),
    ("seed2plus", {"dimensions": "all"})])
def test_a_report_spec_equals_the_one_made_from_the_old_flat_names(benchmark, before, demo, tmp_path):
    """``data: {}`` stands for the task's notebook defaults: the report runs keep their identity."""
    new = configs.base_config({"benchmark": benchmark, "data": {}, "model": "random", "recipe": "seed1-ppl",
                               "max_new_tokens": 16}, tmp_path, demo)
    old = RunSpec.from_params(benchmark, tmp_path, data=runs.demo_args(benchmark, demo, **before), model="random",
                              recipe="seed1-ppl")
    assert new.identity() == old.identity() and new.to_dict() == old.to_dict()


def test_a_wrong_data_name_is_one_line(tmp_path):
    with pytest.raises(ValueError, match=r"^data: seed takes no \['sourse'\]; it takes \['annotation_file'"):
        with_data({"benchmark": "seed", "data": {"sourse": "x"}})
    assert with_data({"benchmark": "mmmu", "data": {"split": "dev"}}) == {"benchmark": "mmmu", "split": "dev"}
    from mmbench_lib.runner import ParameterError, check_param_values

    nb = "notebooks/51_blind_solvability.ipynb"
    with pytest.raises(ParameterError, match=r"parameter data\.dimensions=\[99\]: 99 is not a seed dimension id"):
        check_param_values(nb, {"data": {"dimensions": [99]}}, notebook_parameters(ROOT / nb))
    proc = cli(tmp_path, "run", "notebooks/51_blind_solvability.ipynb", "-p", "data", "{level: L1}")
    one_line_error(proc, tmp_path, "parameter data: seed takes no ['level']")
    proc = cli(tmp_path, "run", "notebooks/50_protocol_sensitivity.ipynb", "-p", "ranking_data",
               "{annotation_file: /no/such.json}")
    one_line_error(proc, tmp_path, "ranking_data.annotation_file", "no such file")


def test_report_50s_data_is_notebook_10s(demo):
    """Report 50's empty ``ranking_data`` loads what notebook 10's defaults load, so a notebook-10 run is reused (its
    SEED-2 data now also says ``part: all``, as notebook 10 records it); a generation mapping keeps its split."""
    nb10 = {"dimensions": "all", "level": "L2", "part": "all"}
    for bench in ("seed", "seed2", "seed2plus"):
        assert runs.task_data(bench, {}, demo) == runs.run_data(bench, demo, **nb10), bench
    gen = runs.task_data("mmmu-pro", {"split": "standard10-direct", "subjects": "all"}, demo)
    assert gen == {"source": demo["mmmu-pro"]["source"], "split": "standard10-direct", "subjects": None, "cache_dir": None}


# ------------------------------------------------------------------ names read from the parts, not restated
def test_the_loader_takes_the_model_parts_own_fields(tmp_path):
    """``adapter_options()``: the model part's fields that ``LoadOptions`` names, and the scorer; a local family's
    loader gets them with the placement as one ``Placement``; anything else is an endpoint option."""
    from mmbench_lib.models import LoadOptions, load_adapter
    from mmbench_lib.models.placement import Placement

    spec = RunSpec.from_params("mmmu", tmp_path, source="x", device="cpu", dtype="float32", revision="r1",
                               scorer="reference")
    opts = spec.adapter_options()
    assert opts == {"device": "cpu", "dtype": "float32", "revision": "r1", "trust_remote_code": False,
                    "device_map": None, "max_memory": None, "scorer": "reference"}
    args = LoadOptions(**opts).loader_args()
    assert args["placement"] == Placement("cpu", None, None) and "device_map" not in args and args["append_eos"] is False
    with pytest.raises(ValueError, match=r"endpoint options \['base_url'\] apply only to openai:"):
        load_adapter("random", base_url="http://127.0.0.1:9/v1")
    served = RunSpec.from_params("mmmu", tmp_path, source="x", model="openai:m", endpoint={"base_url": "http://h/v1"})
    assert served.adapter_options()["base_url"] == "http://h/v1"


def test_the_identity_takes_the_fields_marked_so(tmp_path):
    """A model field marked ``identity`` changes ``identity()``; display name and placement never do."""
    base = RunSpec.from_params("mmmu", tmp_path, source="x", model="smollm2")
    marked = {f.name for f in fields(PARTS["model"]) if f.metadata["identity"]}
    assert set(base.identity()["model"]) == marked | {"engine"}
    assert set(base.identity()["task"]) == {f.name for f in fields(PARTS["task"])}
    assert base.with_params(model_name="x", device="cpu", device_map="auto").identity() == base.identity()
    assert base.with_params(revision="r2").identity()["model"]["revision"] == "r2"
    assert base.with_params(system_prompt="Be brief.").identity() != base.identity()


def test_a_demo_spec_is_the_run_the_demo_always_made(demo, tmp_path):
    """``demo.runs.demo_spec``: the same spec (so the same identity and predictions) as the long keyword calls."""
    from mmbench_lib.demo.runs import demo_spec

    params = {"demo": True, "benchmark": "seed2", "model": "smollm2"}
    old = RunSpec.from_params("seed2", tmp_path, data=runs.demo_args("seed2", demo, level="L2"), model="smollm2",
                              recipe="seed1-ppl", reduction="sum", scorer="shared-prefix", parameters=params)
    assert demo_spec("seed2", "smollm2", demo, tmp_path).to_dict() == old.to_dict()
    params = {"demo": True, "benchmark": "cmmmu", "model": "frequent"}
    old = RunSpec.from_params("cmmmu", tmp_path, source=demo["cmmmu"]["root"], model="frequent", baseline="frequent",
                              split="val", parameters=params)
    assert demo_spec("cmmmu", "frequent", demo, tmp_path).to_dict() == old.to_dict()
    mine = demo_spec("mmmu", "smollm2", demo, tmp_path, baseline="none", max_new_tokens=16)
    assert (mine.generation.baseline, mine.task.split, mine.generation.max_new_tokens) == ("none", "validation", 16)
