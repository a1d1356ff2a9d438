"""``merge`` scores each row against the task's gold, not the row's own answer (issue 41, item 5): shards whose gold
answers were edited are refused in one line naming the shard file, the item and the field; unedited shards merge."""
import json

from mmbench_lib.cli import main
from mmbench_lib.core.store import RunStore
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig


def _sharded(demo, folder):
    for k in range(2):
        runs.evaluate(RunConfig("seed", folder, data=runs.demo_args("seed", demo), model="random", limit=12,
                                shard_index=k, num_shards=2, progress=False))
    return folder


def test_shards_with_edited_golds_are_refused_not_merged_by_their_own_answers(demo, tmp_path, capsys):
    r = _sharded(demo, tmp_path / "r")
    assert main(["merge", str(r), "--out", str(tmp_path / "plain")]) == 0
    plain = [x for x in RunStore(tmp_path / "plain", readonly=True).rows()]
    right = sum(x["correct"] for x in plain)
    assert len(plain) == 12 and right < 12
    capsys.readouterr()
    edited = []
    for path in sorted(r.rglob("predictions.shard-*.jsonl")):  # every wrong row's gold set to its prediction
        rows = [json.loads(x) for x in path.read_text().splitlines()]
        for x in rows:
            if not x["correct"]:
                x["answer"], x["correct"] = x["prediction"], True
                edited.append((path, x["id"]))
        path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    assert len(edited) == 12 - right
    assert main(["merge", str(r), "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    path, item = next((p, i) for p, i in edited if f"item {i!r}" in err)
    assert f"{path}: item {item!r}, field 'answer':" in err and "the task's gold is" in err
    assert not (tmp_path / "m" / "predictions.jsonl").exists()  # nothing merged
