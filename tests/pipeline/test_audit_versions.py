"""Peer rules with versions (issue 40 item 2): VLMEvalKit ``can_infer`` before #1175, at #1175 and at #1552
(``tasks/peer_rules.py``, each version's source in its docstring) on worked examples, chosen by name, commit or
date, and picked from a VLMEvalKit file's ``T<date>_G<commit>`` run folder or reported from lmms-eval's recorded
``git_hash``."""
from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from mmbench_lib.cli import main
from mmbench_lib.pipeline import audit as A
from mmbench_lib.tasks import peer_rules as P
from mmbench_lib.tasks.letters import vlmevalkit_infer
from tests.pipeline.test_audit import write_formats

CHOICES = {"A": "a cat", "B": "a dog", "C": "a red bus", "D": "a tree"}
#: response -> letter under (before #1175, #1175, #1552)
EXAMPLES = {
    # one letter token, first of many: anywhere before #1175; since #1175 it must be among the last five tokens
    "B is right because the animal barks at the mailman every single morning": ("B", None, None),
    # "answer is X" (#1552) where the letter is not among the last five tokens
    "After looking closely, the correct answer is C since the vehicle is large and stops for people": ("C", None, "C"),
    # the text pass: an answer longer than twice the options' text is not read for option text since #1175
    "I think it is a red bus, because it is large, red, and it carries many people around the city": ("C", None, None),
    # a bare letter at the end: every version
    "The answer: D": ("D", "D", "D"),
}


@pytest.mark.parametrize("response", list(EXAMPLES))
def test_can_infer_versions_on_worked_examples(response):
    got = []
    for v in P.CAN_INFER:
        with P.using(v):
            got.append(vlmevalkit_infer(response, CHOICES).letter)
    assert tuple(got) == EXAMPLES[response]
    assert vlmevalkit_infer(response, CHOICES).letter == EXAMPLES[response][-1]  # default: the current rule


def test_a_version_by_name_commit_or_date():
    assert P.can_infer_version("#1175").commit == "c3371551"
    assert P.can_infer_version("a67ace50").name == "#1552"
    assert P.can_infer_version("2025-08-03").name == "before #1175"
    assert P.can_infer_version("20250804").name == "#1175"
    assert P.can_infer_version("2026-07-01").name == "#1552"
    with pytest.raises(ValueError, match="unknown VLMEvalKit can_infer version 'v9'"):
        P.can_infer_version("v9")


def _vlm_file(tmp_path, folder):
    files = write_formats(tmp_path / "src")
    tsv = pd.read_csv(files["vlmevalkit"], sep="\t", dtype={"answer": str})
    # validation_Art_1 (C): the letter first of many tokens; right only before #1175
    tsv.loc[tsv["id"] == "validation_Art_1", "prediction"] = "C is Hermione, the woman standing at the left of the painting"
    dest = tmp_path / "Model" / folder
    dest.mkdir(parents=True)
    tsv.to_csv(dest / "Model_MMMU_DEV_VAL.tsv", sep="\t", index=False)
    return dest / "Model_MMMU_DEV_VAL.tsv"


@pytest.mark.parametrize("folder,version,art1", [("T20250101_G1a2b3c4d", "before #1175", True),
                                                 ("T20250901_G1a2b3c4d", "#1175", False),
                                                 ("T20260701_G1a2b3c4d", "#1552", False),
                                                 ("predictions", "#1552", False)])
def test_the_rule_of_a_vlmevalkit_files_time_is_picked_and_said(tmp_path, folder, version, art1):
    path = _vlm_file(tmp_path, folder)
    result = A.audit([path], "mmmu")
    f = result["files"][0]
    assert f["rule_versions"].startswith(f"VLMEvalKit can_infer {version} (")
    assert bool(f["scores"].set_index("id").loc["validation_Art_1", "vlmevalkit"]) is art1
    assert f"Rules applied: VLMEvalKit can_infer {version}" in result["answer"]
    if folder.startswith("T"):
        assert folder[1:5] in f["rule_versions"]  # the date it was picked by


def test_an_older_version_by_name_from_the_cli(tmp_path, capsys):
    path = _vlm_file(tmp_path, "predictions")
    assert main(["audit", str(path), "--benchmark", "mmmu", "--can-infer", "before #1175"]) == 0
    out = capsys.readouterr().out
    assert "VLMEvalKit can_infer before #1175 (c6bdffd3, 2024-03-19): asked for" in out
    assert main(["audit", str(path), "--benchmark", "mmmu", "--can-infer", "nope"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_lmms_evals_recorded_commit_is_reported(tmp_path):
    files = write_formats(tmp_path)
    log = tmp_path / "20260801_120000_samples_mmmu_val.jsonl"
    shutil.copy(files["lmms-eval"], log)
    (tmp_path / "20260801_120000_results.json").write_text(json.dumps({"git_hash": "75571cfe", "results": {}}))
    f = A.audit([log], "mmmu")["files"][0]
    assert "lmms-eval 75571cfe (from 20260801_120000_results.json)" in f["rule_versions"]
