"""CircularEval with real components: SmolLM2 (real weights) by letter ranking on the SEED v1 demo set, the MMMU
demo set through the generation path (Random Choice baseline), an interrupted rotation run resumed."""
import json

import pytest

from mmbench_lib.pipeline import runs
from mmbench_lib.reports import circular
from mmbench_lib.tasks.options import rotation_order, to_original

pytestmark = pytest.mark.slow


def _rows(folder):
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


def _config(demo, out, recipe="qwen-vl-letters", limit=4, **kw):
    return runs.RunConfig("seed", out, data=runs.demo_args("seed", demo), model="smollm2", recipe=recipe, device="cpu",
                          limit=limit, progress=False, **{"scorer": "shared-prefix", **kw})


@pytest.fixture(scope="module")
def letters(demo, smollm2, tmp_path_factory):
    out = tmp_path_factory.mktemp("circ")
    folders = circular.order_runs(_config(demo, out), out, adapter=smollm2)
    return out, folders, circular.report(folders)


def test_one_run_per_rotation_and_every_answer_maps_back(demo, letters):
    _out, folders, _r = letters
    assert list(folders) == ["rot-0", "rot-1", "rot-2", "rot-3"]
    originals = {it.id: it for it in runs.load_items("seed", runs.demo_args("seed", demo))[:4]}
    for k, folder in enumerate(folders.values()):
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["options"] == {"rotation": k, "permutation_seed": None, "lettered_only": True}
        rows = _rows(folder)
        assert [r["id"] for r in rows] == list(originals)
        for r in rows:
            it = originals[r["id"]]
            assert r["option_order"] == rotation_order(4, k)
            assert to_original(r["answer"], r["option_order"]) == it.answer
            shown = "ABCD".index(r["prediction"])  # the shown option's content is the original option's content
            assert it.choices["ABCD".index(to_original(r["prediction"], r["option_order"]))] == \
                it.choices[r["option_order"][shown]]


def test_circular_accuracy_is_right_under_every_rotation(letters):
    _out, folders, r = letters
    correct = {}
    for folder in folders.values():
        for row in _rows(folder):
            correct.setdefault(row["id"], []).append(bool(row["correct"]))
    items = r.items.set_index("id")
    for item_id, cs in correct.items():
        assert items.loc[item_id, "circular_correct"] == all(cs)
        assert items.loc[item_id, "plain_correct"] == cs[0]
        assert items.loc[item_id, "mean_correct"] == pytest.approx(sum(cs) / 4)
    overall = r.per_dimension.iloc[-1]
    assert overall["dimension"] == "All" and overall["plain"]["n"] == 4 and overall["circular"]["n"] == 4
    assert overall["circular"]["correct"] == sum(all(c) for c in correct.values()) <= overall["plain"]["correct"]
    assert overall["chance_circular"] == pytest.approx(0.25 ** 4)
    gold = r.letters.set_index("letter")["gold"]
    assert [gold[x] for x in "ABCD"] == [4, 4, 4, 4]  # each item's gold sits once at each letter
    predicted = [row["prediction"] for f in folders.values() for row in _rows(f)]
    assert [r.letters.set_index("letter")["predicted"].get(x, 0) for x in "ABCD"] == [predicted.count(x) for x in "ABCD"]


def test_report_files_and_figure(letters):
    out, _folders, r = letters
    path = circular.write(r, out)
    body = json.loads(path.read_text())
    assert body["mode"] == "rotations" and body["orders"] == ["rot-0", "rot-1", "rot-2", "rot-3"]
    assert {"n", "correct", "accuracy", "ci_low", "ci_high", "failed", "n/a"} <= set(body["overall"]["circular"])
    table = circular.summary_table(r)
    assert list(table["dimension"])[-1] == "All" and (table["circular %"] <= table["plain %"]).all()
    fig = circular.figure(r)
    fig.savefig(out / "c.png")
    assert (out / "c.png").stat().st_size > 10_000


def test_content_ranking_is_order_free(demo, smollm2, tmp_path):
    # SEED-Bench §3.4: ranking the choices' content "eliminates the impact of the order of the options"
    folders = circular.order_runs(_config(demo, tmp_path, recipe="seed1-ppl", limit=3, scorer="reference"), tmp_path,
                                  adapter=smollm2)
    r = circular.report(folders)
    assert (r.items["consistency"] == 1.0).all()
    assert list(r.items["circular_correct"]) == list(r.items["plain_correct"])


class Interrupting:
    """The real adapter, interrupted (as by Ctrl-C) at its ``after + 1``-th call."""

    def __init__(self, inner, after):
        self.inner, self.after, self.calls = inner, after, 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def score_choices(self, requests):
        self.calls += 1
        if self.calls > self.after:
            raise KeyboardInterrupt
        return self.inner.score_choices(requests)


def test_an_interrupted_rotation_run_resumes_without_duplicates(demo, smollm2, tmp_path):
    config = _config(demo, tmp_path, batch_size=2)
    with pytest.raises(KeyboardInterrupt):  # rot-0 takes 2 calls; rot-1 stops after its first batch
        circular.order_runs(config, tmp_path, adapter=Interrupting(smollm2, after=3))
    rot0 = (tmp_path / "rot-0" / "predictions.jsonl").read_bytes()
    partial = _rows(tmp_path / "rot-1")
    assert len(partial) == 2 and not (tmp_path / "rot-2").exists()
    folders = circular.order_runs(config, tmp_path, adapter=smollm2)
    assert (tmp_path / "rot-0" / "predictions.jsonl").read_bytes() == rot0  # nothing scored twice
    resumed = _rows(tmp_path / "rot-1")
    assert resumed[:2] == partial and len(resumed) == len({r["id"] for r in resumed}) == 4
    assert circular.report(folders).per_dimension.iloc[-1]["circular"]["n"] == 4


def test_a_run_of_another_option_order_is_not_resumed(demo, smollm2, tmp_path):
    runs.evaluate(_config(demo, tmp_path, limit=2, rotation=1), smollm2)
    with pytest.raises(ValueError, match="option order"):
        runs.evaluate(_config(demo, tmp_path, limit=2, rotation=2), smollm2)
    with pytest.raises(ValueError, match="not both"):
        _config(demo, tmp_path, rotation=1, permutation_seed=3)


def test_generation_path_maps_parsed_letters_back(demo, tmp_path):
    # MMMU demo, official prompt and parser; Random Choice answers the same shown letter under every rotation
    # (seeded by the item id), so it is right under exactly one rotation of each item and never circularly
    config = runs.RunConfig("mmmu", tmp_path, source=demo["mmmu"]["source"], split="validation", model="random",
                            limit=5, progress=False)
    folders = circular.order_runs(config, tmp_path)
    assert list(folders) == ["rot-0", "rot-1", "rot-2", "rot-3"]
    r = circular.report(folders)
    items = r.items
    assert len(items) == 5 and not items["circular_correct"].any()
    assert (items["mean_correct"] * items["orders"] == 1).all()
    assert (items["consistency"] * items["orders"] == 1).all()  # a different original option every time
    scored = [json.loads(x) for x in (folders["rot-1"] / "scored.jsonl").read_text().splitlines()]
    assert all(s["option_order"] for s in scored) and r.mode == "rotations"
