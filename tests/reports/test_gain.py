"""MG and ML (MMStar §4.3, Eq. 1-2) from three real runs on the MMStar demo set: tiny-llava with the images and
with them withheld, SmolLM2 as the text-only LLM base; every number recomputed from the stored rows."""
import json
from types import SimpleNamespace

import pytest

from mmbench_lib.core.uncertainty import compare_runs
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.ranking import visual_inputs
from mmbench_lib.reports import gain
from mmbench_lib.tasks import load_items

pytestmark = pytest.mark.slow


def _rows(folder):
    return {r["id"]: r for r in map(json.loads, (folder / "predictions.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def made(demo, smollm2, tiny_llava, tmp_path_factory):
    out = tmp_path_factory.mktemp("gain")
    # coarse perception and math (6 items): two complete capabilities, each run a few CPU minutes at most
    config = runs.RunConfig("mmstar", out, data=runs.demo_args("mmstar", demo, dimensions=[1, 2, 3, 16, 17, 18]),
                            model="tiny-llava", recipe="seed1-ppl",
                            scorer="shared-prefix", device="cpu", progress=False)
    folders = gain.three_runs(config, "tiny-llava", "smollm2", out, adapters={"tiny-llava": tiny_llava, "smollm2": smollm2})
    return SimpleNamespace(folders=folders, table=gain.gain_leakage(folders))


def test_mg_and_ml_follow_eq_1_and_2_per_capability(made):
    rows = {k: _rows(f) for k, f in made.folders.items()}
    assert list(rows) == list(gain.RUNS) and all(len(r) == 6 for r in rows.values())
    t = made.table.set_index("group")
    assert list(t.index) == ["coarse perception", "math", "Overall"]
    for group, r in t.iterrows():
        pick = {k: [x for x in v.values() if group == "Overall" or x["group"] == group] for k, v in rows.items()}
        acc = {k: 100 * sum(x["correct"] for x in v) / len(v) for k, v in pick.items()}
        assert r["n"] == len(pick["with images"]) and r["with images %"] == pytest.approx(acc["with images"])
        assert r["MG"] == pytest.approx(acc["with images"] - acc["without images"])
        assert r["ML"] == pytest.approx(max(0.0, acc["without images"] - acc["LLM base"]))
        assert r["MG low"] <= r["MG"] <= r["MG high"] and 0 <= r["ML low"] <= r["ML"] <= r["ML high"]
        paired = compare_runs(pick["without images"], pick["with images"])
        assert (r["MG low"], r["MG high"]) == pytest.approx((paired["low"], paired["high"]))


def test_the_model_without_images_gets_none(demo, tiny_llava):
    item = load_items("mmstar", runs.demo_args("mmstar", demo))[0]
    images, video = visual_inputs(item, tiny_llava)
    assert len(images) == 1 and video is None
    blind = gain.WithoutImages(tiny_llava)
    assert visual_inputs(item, blind) == ([], None) and blind.name.endswith("(images withheld)")
    assert blind.generate.__self__ is tiny_llava  # everything else is the model's own


def test_a_text_only_model_cannot_be_the_vision_model(demo, smollm2, tmp_path):
    config = runs.RunConfig("mmstar", tmp_path, data=runs.demo_args("mmstar", demo), model="smollm2", device="cpu",
                            progress=False)
    with pytest.raises(ValueError, match="does not see images"):
        gain.three_runs(config, "smollm2", "smollm2", tmp_path, adapters={"smollm2": smollm2})
