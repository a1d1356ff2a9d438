"""Real papermill runs of the report notebooks (51 blind-solvability, 52 CircularEval) through `mmbench run`,
and the blind ids handed to an evaluation notebook (10) as its `blind_ids` parameter."""
import json
from pathlib import Path

import pandas as pd
import pytest

from mmbench_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _run(notebook, params, run_id, *overrides):
    args = ["run", str(ROOT / "notebooks" / notebook), "--run-id", run_id]
    if params:
        args += ["-f", str(ROOT / "params" / params)]
    for name, value in overrides:
        args += ["-p", name, value]
    return main(args)


def test_blind_ids_of_notebook_51_drive_the_vision_required_score_of_notebook_10(demo_dir, outputs):
    assert _run("51_blind_solvability.ipynb", "51_blind_solvability/seed1_demo_smollm2.yaml", "blind",
                ("data_dir", str(demo_dir)), ("limit", "12")) == 0
    report = outputs / "blind"
    for f in ("51_blind_solvability.ipynb", "blind_solvable.json", "blind_audit.json", "blind__smollm2/metrics.json",
              "tables/blind_solvability.csv", "figures/blind_solvability.png", "figures/blind_solvability.svg"):
        assert (report / f).is_file(), f
    ids = json.loads((report / "blind_solvable.json").read_text())
    blind_rows = [json.loads(x) for x in (report / "blind__smollm2" / "predictions.jsonl").read_text().splitlines()]
    assert ids["ids"] == sorted(r["id"] for r in blind_rows if r["correct"]) and ids["n_items"] == 12
    reference = pd.read_csv(report / "tables" / "blind_reference.csv")  # beside the MMStar paper's Tables 1-2
    ours = reference.iloc[0]
    assert ours["source"] == "ours" and ours["n"] == 12 and ours["accuracy %"] == round(100 * len(ids["ids"]) / 12, 1)
    assert set(reference["same model"].dropna()) == {"reference", "chance"}

    # the same model and recipe evaluated "with" images it cannot see: every item it solves is blind-solvable
    assert _run("10_seed_bench.ipynb", "10_seed_bench/seed1_demo_smollm2.yaml", "eval",
                ("data_dir", str(demo_dir)), ("limit", "12"), ("blind_ids", str(report / "blind_solvable.json"))) == 0
    table = pd.read_csv(outputs / "eval" / "tables" / "vision_required.csv")
    overall = table[table["dimension"] == "all"].iloc[0]
    assert overall["all n"] == 12 and overall["vision_required n"] == 12 - len(ids["ids"])
    assert overall["vision_required %"] == 0 and overall["all %"] == pytest.approx(100 * len(ids["ids"]) / 12)
    vision = json.loads((outputs / "eval" / "vision_required.json").read_text())
    assert vision["blind_solvable_in_run"] == len(ids["ids"]) and vision["schema_version"] == 2


def test_circular_eval_notebook_on_mmmu_defaults(demo_dir, outputs, capsys):
    assert _run("52_circular_eval.ipynb", None, "circ", ("data_dir", str(demo_dir)), ("limit", "8")) == 0
    report = outputs / "circ"
    printed = capsys.readouterr().out
    assert "the first 8 (limit 8: a subsample; limit 0 runs all) of 20 lettered" in printed  # said, not silent
    assert "[rotation 3 of 4 (rot-2)] mmmu smollm2:" in printed  # progress lines name the rotation
    headline = json.loads((report / "results.json").read_text())["report"]
    assert headline["columns"][:7] == ["dimension", "items", "incomplete", "plain %", "plain 95%", "circular %",
                                       "circular 95%"] and "mean over orders %" in headline["columns"]
    assert headline["rows"][-1][:2] == ["All", 8] and "circular 95%" in printed and "no finished sub-run" not in printed
    body = json.loads((report / "circular.json").read_text())
    assert body["benchmark"] == "mmmu" and body["orders"] == ["rot-0", "rot-1", "rot-2", "rot-3"]
    assert body["overall"]["plain"]["n"] == 8 and body["overall"]["circular"]["correct"] <= body["overall"]["plain"]["correct"]
    for k in range(4):
        assert (report / f"rot-{k}" / "scored.jsonl").is_file()
    assert (report / "figures" / "circular_eval.png").is_file() and (report / "tables" / "circular_items.csv").is_file()


def test_circular_eval_notebook_with_seeded_permutations_through_a_vlm(demo_dir, outputs):
    assert _run("52_circular_eval.ipynb", "52_circular_eval/seed1_demo_tiny_llava_letters.yaml", "perm",
                ("data_dir", str(demo_dir))) == 0
    body = json.loads((outputs / "perm" / "circular.json").read_text())
    assert body["mode"] == "permutations" and body["orders"] == ["rot-0", "perm-1", "perm-2"]
    assert body["overall"]["plain"]["n"] == 6 and body["model"] == "tiny-llava"
    manifest = json.loads((outputs / "perm" / "perm-2" / "manifest.json").read_text())
    assert manifest["options"]["permutation_seed"] == 2 and manifest["model"]["adapter"] == "ImageTextToText"


def test_an_order_check_of_a_content_recipe_is_refused_before_the_run(demo_dir, outputs, capsys):
    assert _run("52_circular_eval.ipynb", None, "content", ("data_dir", str(demo_dir)), ("benchmark", "seed"),
                ("recipe", "seed1-ppl")) == 2
    err = capsys.readouterr().err
    assert "parameter recipe='seed1-ppl'" in err and "the option order cannot change its answer" in err
    assert not (outputs / "content").exists()
