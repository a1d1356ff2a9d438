"""Notebook 30 run headless by ``mmbench run`` (papermill): its sample, tables, figure and results.json go to its
own run folder (nothing into the analysed run), the end table counts hand tags and automatic suggestions apart,
the run exits 0 with that table (no "no finished sub-run"), and the saved notebook holds no widget."""
import json
from pathlib import Path

import pytest

from mmbench_lib.cli import main
from mmbench_lib.error_analysis import BrowserState, errors

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_notebook_30_ends_with_its_own_table_in_its_own_folder(demo_dir, outputs, tmp_path, capsys):
    from mmbench_lib.demo import ensure_demo
    from mmbench_lib.pipeline import generation
    from mmbench_lib.pipeline.config import RunConfig

    analysed = outputs / "analysed"  # a quick generation run to analyse (Random Choice: no model to load)
    generation.evaluate_generation(RunConfig("mmmu", analysed, source=ensure_demo(demo_dir)["mmmu"]["source"],
                                             model="random", baseline="random", progress=False))
    before = sorted(p.relative_to(analysed) for p in analysed.rglob("*"))
    ann = tmp_path / "ann"
    cases = errors.load_cases(analysed)
    ids = errors.sample_errors(cases, 8, "subject", 0)  # the sample the notebook draws (demo.yaml: subject, seed 0)
    state = BrowserState([c for c in cases if c["id"] in ids], "analysed", annotations_dir=ann)
    state.tag("perceptual error", case=state.cases[0])  # two cases tagged by hand before the run
    state.tag("reasoning error", case=state.cases[1])
    auto = sum(bool(errors.suggested_category(errors.auto_tags(c))) for c in state.cases[2:])

    rc = main(["run", str(ROOT / "notebooks/30_error_analysis.ipynb"), "-f", str(ROOT / "params/30_error_analysis/demo.yaml"),
               "-p", "source_run", "analysed",  # a run id under outputs/, the docs' form (one resolver)
               "-p", "n_sample", "8", "-p", "annotations_dir", str(ann), "--run-id", "ea"])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    full = json.loads((outputs / "ea" / "results.json").read_text())
    res = full["report"]
    assert full["runs"] == []  # the analysis evaluates nothing: its headline is the report section
    assert res["counts"] == {"sampled": 8, "by_hand": 2, "automatic": auto, "untagged": 6 - auto,
                             "items": len(cases), "wrong": len(errors.wrong_cases(cases))}
    assert res["columns"][:5] == ["category", "by hand (n)", "by hand %", "automatic (n)", "automatic %"]
    rows = {r[0]: r for r in res["rows"]}
    assert rows["perceptual error"][1:3] == [1, 50.0] and rows["reasoning error"][1:3] == [1, 50.0]
    assert rows["all"][1] == 2 and rows["all"][3] == auto  # suggestions never counted as tags
    assert sum(r[3] for k, r in rows.items() if k != "all") == auto
    assert rows["other"][5:] == [None, None]  # the papers have no "other"
    assert res["name"] in printed and "no finished sub-run" not in printed
    assert printed.count("|perceptual error") == 1  # once: mmbench run's, from results.json (the notebook displays it)
    for f in ("error_sample.json", "tables/error_categories.csv", "figures/error_categories.png", "30_error_analysis.ipynb"):
        assert (outputs / "ea" / f).is_file(), f
    assert sorted(p.relative_to(analysed) for p in analysed.rglob("*")) == before  # the analysed run untouched
    nb = json.loads((outputs / "ea" / "30_error_analysis.ipynb").read_text())
    outs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outs)  # nothing frozen
