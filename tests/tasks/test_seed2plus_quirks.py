"""SEED-Bench-2-Plus items with identical options are scored as given, never silently (issue 41, "still open"): one
warning counts them and names the first, and each item's row carries the mark (``quirk``)."""
import json

import pytest

from mmbench_lib.core.store import RunStore
from mmbench_lib.models.random_choice import RandomChoice
from mmbench_lib.pipeline.ranking import rank_items
from mmbench_lib.tasks import seed2plus
from mmbench_lib.tasks.recipes import get_recipe


def test_identical_options_are_counted_once_and_marked_per_item(demo, tmp_path):
    d = demo["seed2plus"]
    data = json.loads(open(d["annotation_file"], encoding="utf-8").read())
    rows = data["questions"] if isinstance(data, dict) else data
    rows[0]["choice_C"] = rows[0]["choice_A"]
    rows[3]["choice_D"] = rows[3]["choice_B"]
    bad = tmp_path / "SEED-Bench-2-plus-text-rich.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.warns(UserWarning) as caught:
        items = seed2plus.load(bad, d["image_root"])
    lines = [str(w.message) for w in caught]
    qid = str(rows[0]["question_id"])
    assert lines == [f"{bad}: 2 item(s) have identical options, scored as given and marked 'quirk' in their rows "
                     f"(e.g. item {qid!r}: choices: options A and C are identical ({rows[0]['choice_A']!r}): ranking can "
                     f"never pick the second)"]
    assert len(items) == 12 and sum("quirk" in it.meta for it in items) == 2
    store = rank_items(items, RandomChoice(), RunStore(tmp_path / "run"), get_recipe("seed1-ppl"), progress=False)
    by_id = {r["id"]: r for r in store.rows()}
    assert by_id[qid]["status"] == "ok" and by_id[qid]["quirk"].startswith("choices: options A and C are identical")
    assert by_id[str(rows[3]["question_id"])]["quirk"].startswith("choices: options B and D are identical")
    assert sum("quirk" in r for r in by_id.values()) == 2


def test_a_clean_file_loads_without_a_word(demo, recwarn):
    d = demo["seed2plus"]
    assert len(seed2plus.load(d["annotation_file"], d["image_root"])) == 12
    assert not [w for w in recwarn if "identical options" in str(w.message)]
