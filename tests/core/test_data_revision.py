"""The dataset revision every generation manifest and results.json records (datasets change in place)."""
import hashlib

from mmbench_lib.core.datasource import data_revision


def test_a_file_is_its_sha256(tmp_path):
    f = tmp_path / "validation.parquet"
    f.write_bytes(b"rows")
    assert data_revision(f) == {"kind": "file sha256", "value": hashlib.sha256(b"rows").hexdigest()}


def test_a_folder_changes_when_a_data_file_changes_not_when_an_image_is_added(tmp_path):
    (tmp_path / "Art").mkdir()
    (tmp_path / "Art" / "validation-00000-of-00001.parquet").write_bytes(b"v1")
    first = data_revision(tmp_path)
    assert first["kind"] == "sha256 of 1 data files"
    (tmp_path / "Art" / "img.png").write_bytes(b"\x89PNG")
    assert data_revision(tmp_path) == first
    (tmp_path / "Art" / "validation-00000-of-00001.parquet").write_bytes(b"v2")  # fixed in place
    assert data_revision(tmp_path)["value"] != first["value"]


def test_a_hub_id_is_the_cached_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    ref = tmp_path / "datasets--MMMU--MMMU" / "refs"
    ref.mkdir(parents=True)
    (ref / "main").write_text("86e0f5a7a4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5\n")
    assert data_revision("MMMU/MMMU") == {"kind": "hub commit", "value": "86e0f5a7a4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5",
                                          "repo": "MMMU/MMMU"}
    assert data_revision("MMMU/Other") is None and data_revision("") is None
