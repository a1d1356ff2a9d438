"""Prompt modes in the protocol-sensitivity report: each mode one more generation protocol row, read from its own
run (cot+answer-line from the cot run, through its answer lines), on the same items as the parser variants."""
import shutil

import pytest

from mmbench_lib.core.store import RunStore
from mmbench_lib.pipeline.generation import load_items, score_run
from mmbench_lib.reports import protocol as pr


def test_modes_are_protocol_rows_read_from_their_runs(tmp_path, demo, monkeypatch):
    monkeypatch.setenv("MMBENCH_OUTPUTS", str(tmp_path / "outputs"))
    src = demo["mmmu"]["source"]
    rep = pr.parser_report("mmmu", src, tmp_path / "report", model="smollm2", limit=3, max_new_tokens=8, seeds=20,
                           device="cpu", modes=("cot", "cot+answer-line"), mode_max_new_tokens=24)
    src_table = rep.sources.set_index("key")
    assert list(rep.sources["key"]) == ["official", "lenient-mc", "fixed-split", "no-fallback", "cot", "cot+answer-line"]
    assert src_table.loc["cot", "run"] == src_table.loc["cot+answer-line", "run"] != src_table.loc["official", "run"]
    assert src_table.loc["cot", "kind"].startswith("NOT official")
    acc = pr.accuracy_table(rep.long).set_index("key")
    assert acc.loc["cot", "n"] == acc.loc["official", "n"] == 3  # the same items
    assert rep.seed_summary["n"] == 3  # the fallback seeds of the official run

    cot_run = tmp_path / "report" / "mmmu__generation__cot"
    copy = tmp_path / "copy"
    shutil.copytree(cot_run, copy)
    items = load_items("mmmu", src, "validation")[:3]
    rows, metrics = score_run(items, RunStore(copy), write=False, mode="cot+answer-line")
    assert metrics["prompt_mode"] == "cot+answer-line"
    got = rep.long[rep.long["key"] == "cot+answer-line"].set_index("id")["prediction"]
    assert {r["id"]: pr._pred_text(r["parsed_pred"]) for r in rows} == got.to_dict()  # the report reads as a cot+answer-line run scores
    with pytest.raises(ValueError, match="no prompt mode 'think'"):
        pr.parser_report("mmmu", src, tmp_path / "bad", modes=("think",))
