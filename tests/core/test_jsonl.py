"""The one JSONL reader (``core/jsonl.py``, issue 38 item 5): bounded per file and per line, universal newlines,
blank and SEED's comma-terminated lines counted, a bad line one line naming file, line number and problem."""
import os
import sys

import pytest

from mmbench_lib.core import jsonl
from mmbench_lib.core.items import DataError


def _write(tmp_path, data: bytes, name="f.jsonl"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_rows_numbered_as_open_numbers_lines(tmp_path):
    """\\n, \\r\\n and a lone \\r end a line, as ``open()``'s universal newlines do; blank lines are skipped, counted."""
    data = b'{"id": 1}\r\n\r\n{"id": 2}\r{"id": 3}\n  \n{"id": 4}'
    p = _write(tmp_path, data)
    counts = {}
    rows = list(jsonl.read_rows(p, counts=counts))
    with open(p, encoding="utf-8") as f:  # the lines open() sees
        expected = [(n, line) for n, line in enumerate(f, 1) if line.strip()]
    assert [n for n, _ in rows] == [n for n, _ in expected] == [1, 3, 4, 6]
    assert [r["id"] for _, r in rows] == [1, 2, 3, 4] and counts == {"blank_lines": 2}


def test_seed_leaderboard_lines_end_with_a_comma(tmp_path):
    """SEED-Bench's published result files: ``{...},`` per line (docs/protocols.md §1.5); the comma is dropped and
    counted only when asked (without the option such a line is not valid JSON)."""
    p = _write(tmp_path, b'{"question_id": "1_0", "prediction": "A"},\n{"question_id": "1_1", "prediction": "B"}\n')
    counts = {}
    assert [r["question_id"] for _, r in jsonl.read_rows(p, comma_terminated=True, counts=counts)] == ["1_0", "1_1"]
    assert counts == {"comma_terminated_lines": 1}
    with pytest.raises(DataError, match=r"f.jsonl: line 1 is not valid JSON \(Extra data\)"):
        list(jsonl.read_rows(p))


@pytest.mark.skipif(not os.environ.get("MMBENCH_SEED2_GPT4V"), reason="set MMBENCH_SEED2_GPT4V to the published "
                    "SEED-Bench-2 GPT-4V result file (SEED-Bench-2_GPT-4V.json)")
def test_the_published_seed2_file_reads_line_by_line():
    path = os.environ["MMBENCH_SEED2_GPT4V"]
    counts = {}
    rows = list(jsonl.read_rows(path, comma_terminated=True, counts=counts))
    with open(path, encoding="utf-8") as f:
        lines = [x for x in f if x.strip()]
    assert len(rows) == len(lines) and counts["comma_terminated_lines"] == sum(x.rstrip().endswith(",") for x in lines)
    assert all({"question_id", "prediction", "gt_answer"} <= set(r) for _, r in rows)


@pytest.mark.parametrize("data,needle", [
    (b'{"id": 1}\n\xff{"id": 2}\n', "line 2 is not UTF-8 (byte 0xff)"),
    (b'{"id": 1}\n\n{"id": \n', "line 3 is not valid JSON (Expecting value)"),
    (b'{"id": 1}\n[1, 2]\n', "line 2 is not a JSON object (got list)"),
    (b'{"id": 1}\n' + b"[" * 200000 + b"\n", "line 2 is not valid JSON (nested too deep)"),
])
def test_a_bad_line_is_one_line_naming_file_and_line(tmp_path, data, needle):
    p = _write(tmp_path, data)
    with pytest.raises(DataError) as e:
        list(jsonl.read_rows(p))
    assert str(e.value) == f"{p}: {needle}"


def test_objects_false_returns_any_value_and_other_words_for_a_bad_line(tmp_path):
    p = _write(tmp_path, b'5\n"x"\n')
    assert [v for _, v in jsonl.read_rows(p, objects=False)] == [5, "x"]
    with pytest.raises(DataError, match="line 1 is not a JSON object \\(Expecting value\\)"):
        list(jsonl.read_rows(_write(tmp_path, b"nope\n", "g.jsonl"), invalid="not a JSON object"))


def test_limits_per_line_and_per_file_are_named(tmp_path):
    p = _write(tmp_path, b'{"id": 1}\n{"id": "' + b"x" * 100 + b'"}\n{"id": 3}\n')
    with pytest.raises(DataError) as e:
        list(jsonl.read_rows(p, max_line=50))
    assert str(e.value) == f"{p}: line 2 is longer than the limit of 50 bytes (core.jsonl.MAX_LINE_BYTES)"
    assert [r["id"] for _, r in jsonl.read_rows(p, max_line=len(b'{"id": "' + b"x" * 100 + b'"}'))] == [1, "x" * 100, 3]
    with pytest.raises(DataError) as e:
        list(jsonl.read_rows(p, max_file=20))
    assert str(e.value) == (f"{p}: a JSONL file of {p.stat().st_size:,} bytes is larger than the limit of 20 bytes "
                            "(core.jsonl.MAX_FILE_BYTES)")
    assert jsonl.MAX_FILE_BYTES == 1 << 30 and jsonl.MAX_LINE_BYTES == 1 << 26


@pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs on Windows")
def test_a_fifo_or_a_folder_is_refused_before_it_is_read(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="expected a data file, found a FIFO"):
        list(jsonl.read_rows(fifo))  # never opened: it would block
    with pytest.raises(DataError, match="found a folder"):
        list(jsonl.read_rows(tmp_path))


def test_first_row_is_none_for_what_a_detector_cannot_read(tmp_path):
    assert jsonl.first_row(_write(tmp_path, b'\n{"a": 1}\nbad\n')) == {"a": 1}
    assert jsonl.first_row(_write(tmp_path, b"bad\n", "g.jsonl")) is None
    assert jsonl.first_row(tmp_path / "missing.jsonl") is None


def test_the_store_parses_its_lines_with_the_reader(tmp_path):
    """The run store keeps its policy (a bad line quarantined, not raised) and takes the reader's reason."""
    from mmbench_lib.core.store import scan_jsonl

    rows, bad = scan_jsonl(b'{"id": "a"}\n\xff\n{"id": "b"}\n')
    assert [r["id"] for r in rows] == ["a", "b"] and [(n, reason) for n, _, _, reason in bad] == [
        (2, "not UTF-8 (byte 0xff)")]
