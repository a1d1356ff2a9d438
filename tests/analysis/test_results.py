"""results.json at the top of a run folder (analysis/results.py): every sub-run of either protocol with its
metrics in the shared schema and one headline entry; the printed table; `mmbench metrics RUN_FOLDER`
prints the same table (it used to fail with a pandas KeyError); group tables name benchmark and model."""
import json

import pytest

from mmbench_lib.analysis import results, tables
from mmbench_lib.cli import main
from mmbench_lib.core.metrics import ENTRY_KEYS, SCHEMA_VERSION
from mmbench_lib.pipeline import generation, runs
from mmbench_lib.pipeline.config import RunConfig


@pytest.fixture(scope="module")
def top(demo, tmp_path_factory):
    """A run folder as the quickstart leaves it: sub-runs below it, none at the top."""
    root = tmp_path_factory.mktemp("results") / "quick"
    runs.evaluate(RunConfig("seed", root / "seed__random", data=runs.demo_args("seed", demo), model="random:3",
                            progress=False))
    runs.evaluate(RunConfig("seed2", root / "seed2__random", data=runs.demo_args("seed2", demo, level="L2"),
                            model="random", limit=20, progress=False))
    generation.evaluate_generation(RunConfig("mmmu", root / "mmmu" / "random", source=demo["mmmu"]["source"],
                                             model="random", baseline="random", progress=False))
    return root


def _metrics(folder):
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))


def test_results_json_covers_every_sub_run_in_the_metrics_schema(top):
    body = results.write_results(top)
    assert json.loads((top / "results.json").read_text(encoding="utf-8")) == body
    assert body["schema_version"] == SCHEMA_VERSION
    by_run = {r["run"]: r for r in body["runs"]}
    assert list(by_run) == ["seed__random", "seed2__random", "mmmu/random"]  # the order they finished
    for name, r in by_run.items():
        assert r["metrics"] == _metrics(top / name) and set(r["summary"]) == set(ENTRY_KEYS)
    seed, seed2, mmmu = by_run.values()
    assert (seed["benchmark"], seed["model"], seed["protocol"], seed["recipe"]) == ("seed", "random", "ranking", "seed1-ppl")
    all_group = next(g for g in seed["metrics"]["groups"] if g["group"] == "All")
    assert seed["scope"] == "All"  # every v1 dimension: the pooled value is the "All" group's
    for k in ("n", "correct", "accuracy", "failed", "n/a", "ci_low", "ci_high"):
        assert seed["summary"][k] == pytest.approx(all_group[k]), k
    assert seed2["summary"]["n"] == 20 and seed2["scope"].endswith("dimensions")  # 20 items: not a whole level
    assert seed2["summary"]["ci_low"] <= seed2["summary"]["accuracy"] <= seed2["summary"]["ci_high"]
    assert (mmmu["protocol"], mmmu["scope"], mmmu["model"]) == ("generation (official)", "overall", "random")
    assert mmmu["summary"] == {k: _metrics(top / "mmmu" / "random")["overall"][k] for k in ENTRY_KEYS}


def test_the_table_has_one_row_per_sub_run_with_percentages(top):
    text = results.format_table(results.collect(top))
    lines = text.splitlines()
    assert [c.strip() for c in lines[0].strip("|").split("|")] == list(results.COLUMNS)
    assert len(lines) == 2 + 3
    m = _metrics(top / "mmmu" / "random")["overall"]
    cells = [c.strip() for c in lines[-1].strip("|").split("|")]
    assert cells[:8] == ["mmmu/random", "mmmu", "overall", "random", "demo data", "generation (official)", "validation",
                         str(m["n"])]  # the setting: MMMU has several splits
    assert cells[8:] == [f"{100 * m['accuracy']:.1f}", f"{100 * m['ci_low']:.1f}-{100 * m['ci_high']:.1f}",
                         str(m["failed"]), str(m["n/a"]), "0.0%"]  # the random baseline's answers are never cut
    assert [c.strip() for c in lines[2].strip("|").split("|")][-1] == "-"  # a ranking run has no budget


def test_every_run_records_its_data_revision(top):
    by_run = {r["run"]: r for r in results.collect(top)["runs"]}
    for name, r in by_run.items():
        rev = r["data_revision"]
        assert rev, name  # ranking: the annotation files' sha256; generation: the source's revision
        if r["benchmark"] == "mmmu":
            assert rev["kind"].startswith("sha256 of") and len(rev["value"]) == 64
        else:
            assert all(len(v) == 64 for v in rev.values())


def test_the_table_says_the_thinking_step_ran_and_the_truncation_rate(top, tmp_path):
    import shutil

    from mmbench_lib.tasks.thinking import STEP

    run = tmp_path / "thinking"
    shutil.copytree(top / "mmmu" / "random", run)
    m = json.loads((run / "metrics.json").read_text())
    m["counts"]["truncated"] = m["counts"]["ok"] - 1  # a budget that cut all responses but one
    m["steps"] = [STEP]
    (run / "metrics.json").write_text(json.dumps(m))
    row = [c.strip() for c in results.format_table(results.collect(run)).splitlines()[-1].strip("|").split("|")]
    assert row[5] == f"generation (official), {STEP}"
    assert row[-1] == f"{100 * (m['counts']['ok'] - 1) / m['counts']['ok']:.1f}%"


def test_mmbench_metrics_on_a_run_folder_prints_the_table(top, capsys):
    assert main(["metrics", str(top)]) == 0
    assert results.format_table(results.read_results(top)) in capsys.readouterr().out
    # --benchmark recomputes one run from its predictions; on the folder of sub-runs it is one line, not a KeyError
    assert main(["metrics", str(top), "--benchmark", "seed"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mmbench: error: {top}: no predictions.jsonl") and err.count("\n") == 1
    assert main(["metrics", str(top / "seed__random"), "--benchmark", "seed"]) == 0
    assert "accuracy_micro" in capsys.readouterr().out
    assert main(["metrics", str(top / "nothing")]) == 2 and "no such run folder" in capsys.readouterr().err


def test_group_table_names_benchmark_and_model_from_the_metrics(top):
    m = _metrics(top / "seed__random")
    for key in ("random:3", ("seed", "random:3")):  # notebook 10 keys by model, the quickstart by (benchmark, model)
        df = tables.group_table({key: m})
        assert list(df.columns[:4]) == ["run", "benchmark", "model", "group"]
        assert set(df["benchmark"]) == {"seed"} and set(df["model"]) == {"random"}
        assert set(df["group"]) == {"Image", "Video", "All"}


def test_a_seed_run_whose_recipe_generates_the_letter_is_not_called_ranking():
    """lmms-eval-gen / vlmevalkit-gen runs are stored like ranking runs but the model wrote its answer."""
    assert results._protocol("ranking", "lmms-eval-gen") == "generated letters"
    assert results._protocol("ranking", "vlmevalkit-gen") == "generated letters"
    assert results._protocol("ranking", "qwen-vl-letters") == "ranking"  # letters ranked by likelihood
    assert results._protocol("ranking", "my-own-recipe") == "ranking"
    assert results._protocol("generation", None) == "generation (official)"
    assert results._protocol("generation", None, "cot") == "generation (cot)"


def test_mmbench_metrics_takes_a_run_id(demo, outputs, capsys):
    """One resolver (core.paths.find_run) for every command: `mmbench metrics <run-id>` as `compare` takes it."""
    runs.evaluate(RunConfig("seed", outputs / "rid" / "seed__random", data=runs.demo_args("seed", demo),
                            model="random", limit=4, progress=False))
    assert main(["metrics", "rid"]) == 0 and "seed__random" in capsys.readouterr().out
    assert main(["metrics", "rid/seed__random", "--benchmark", "seed"]) == 0
    assert "Scene Understanding" in capsys.readouterr().out
    assert main(["metrics", "no-such-id"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-id: no such run folder (neither a folder nor a run id under" in err[0]
