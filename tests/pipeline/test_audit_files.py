"""The audit on the files researchers hold (issue 40 item 1): a VLMEvalKit ``.xlsx`` and a ``.tsv`` with Windows
line endings, a plain ``{id, response}`` JSONL with ``--gold`` the benchmark's own data copy (its folder, or a hub
id under either lmms-eval owner held in the hub cache), and this suite's runs by folder, top folder or run id."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mmbench_lib.cli import main
from mmbench_lib.demo import copies
from mmbench_lib.demo.audit import own_run
from mmbench_lib.pipeline import audit as A
from tests.pipeline.test_audit import write_formats


@pytest.fixture
def files(tmp_path):
    return write_formats(tmp_path)


def _per_item(result, n=0):
    return result["files"][n]["scores"].drop(columns="response").set_index("id").sort_index()


def test_a_vlmevalkit_xlsx_reads_as_its_tsv(files, tmp_path):
    xlsx = tmp_path / "Model_MMMU_DEV_VAL.xlsx"
    pd.read_csv(files["vlmevalkit"], sep="\t", dtype={"answer": str}).to_excel(xlsx, index=False)  # VLMEvalKit's default
    assert A.detect(xlsx, "mmmu") == "vlmevalkit"
    pd.testing.assert_frame_equal(_per_item(A.audit([xlsx], "mmmu")), _per_item(A.audit([files["vlmevalkit"]], "mmmu")))


def test_a_tsv_with_windows_line_endings_reads_as_with_unix_ones(files, tmp_path):
    text = files["vlmevalkit"].read_text()
    crlf = tmp_path / "Model_crlf_MMMU_DEV_VAL.tsv"
    crlf.write_bytes(text.replace("\n", "\r\n").encode())
    pd.testing.assert_frame_equal(_per_item(A.audit([crlf], "mmmu")), _per_item(A.audit([files["vlmevalkit"]], "mmmu")))
    items, _ = A.read_items(crlf, "mmmu")
    assert not any(it["response"].endswith("\r") for it in items)


def _demo_items(demo_dir):
    """The demo's own run (Random Choice on MMMU validation) and its responses as a plain JSONL."""
    return own_run(Path(demo_dir).parent / f"{Path(demo_dir).name}-run", demo_dir)


def test_a_plain_jsonl_with_the_benchmarks_data_copy_as_gold(demo_dir, tmp_path, capsys):
    run = _demo_items(demo_dir)
    items, _ = A.read_items(run, "mmmu")
    plain = tmp_path / "responses.jsonl"
    plain.write_text("".join(json.dumps({"id": it["id"], "response": it["response"]}) + "\n" for it in items))
    copy = Path(demo_dir) / "mmmu"
    result = A.audit([plain], "mmmu", gold=copy)
    assert result["files"][0]["format"] == "plain-jsonl"
    assert result["files"][0]["stats"]["missing"] == 0  # the validation split, not dev nor test
    pd.testing.assert_frame_equal(_per_item(result).drop(columns=["file's own"], errors="ignore"),
                                  _per_item(A.audit([run], "mmmu")).drop(columns=["file's own"], errors="ignore"))
    assert main(["audit", str(plain), "--benchmark", "mmmu", "--gold", str(copy), "--reported", "30"]) == 0
    assert "answer:" in capsys.readouterr().out


@pytest.mark.parametrize("owner", ["lmms-lab", "lmms-lab-encoder"])
def test_gold_as_a_hub_id_of_either_lmms_eval_owner(demo_dir, tmp_path, monkeypatch, owner):
    run = _demo_items(demo_dir)
    paths = json.loads((Path(demo_dir) / "paths.json").read_text())["paths"]["mmmu"]
    made = copies.mmmu_copies(paths, tmp_path / "copies")
    merged = {str(p.relative_to(made["merged"])): p for p in Path(made["merged"]).rglob("*.parquet")}
    monkeypatch.setenv("HF_HUB_CACHE", copies.hub_cache(tmp_path / f"hf-{owner}", f"{owner}/MMMU", merged))
    items, _ = A.read_items(run, "mmmu")
    plain = tmp_path / "responses.jsonl"
    plain.write_text("".join(json.dumps({"id": it["id"], "response": it["response"]}) + "\n" for it in items))
    result = A.audit([plain], "mmmu", gold=f"{owner}/MMMU")
    assert result["files"][0]["stats"]["items"] == len(items) and result["files"][0]["stats"]["missing"] == 0
    cached = A.audit([plain], "mmmu")  # no --gold: the copy held in the hub cache
    assert f"questions from the hub cache's {owner}/MMMU (no --gold given)" in cached["notes"]
    pd.testing.assert_frame_equal(_per_item(cached), _per_item(result))


def test_a_run_by_folder_top_folder_or_run_id(demo_dir, outputs, capsys):
    run = own_run(outputs / "top", demo_dir)  # outputs/top/own_run: a run's top folder holding its sub-run
    expected = _per_item(A.audit([run], "mmmu"))
    for ref in ("top/own_run", "top", str(outputs / "top")):
        result = A.audit([ref], "mmmu")
        pd.testing.assert_frame_equal(_per_item(result), expected)
    assert any("a folder of 1 runs" in n for n in A.audit(["top"], "mmmu")["notes"])
    assert main(["audit", "top", "--benchmark", "mmmu"]) == 0
    assert main(["audit", "no-such-run", "--benchmark", "mmmu"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no-such-run" in err and "run id" in err


def test_a_subject_folder_for_a_part_without_its_reader_is_one_line(tmp_path):
    """MMBench's audit part reads no ``<Subject>/output.json`` (it has no ``from_official``): such a folder is refused
    in one line naming what the part reads, not an AttributeError."""
    (tmp_path / "Art").mkdir()
    (tmp_path / "Art" / "output.json").write_text("[]", encoding="utf-8")
    with pytest.raises(A.DataError) as e:
        A.detect(tmp_path, "mmb")
    assert "not an official output here; expected no official output but VLMEvalKit's" in str(e.value)
    assert "\n" not in str(e.value)
    assert A.detect(tmp_path, "mmmu") == "official-folders"
