"""SEED-2 part 3: CLIP-scored image outputs, text-then-image for dim 27, N/A without images."""
import shutil

import pytest

from mmbench_lib import tasks as benchmarks
from mmbench_lib.pipeline.ranking import rank_items
from mmbench_lib.scoring.clip_judge import ClipJudge, ImageOutputScorer
from mmbench_lib.models import RandomChoice
from mmbench_lib.core.requests import ChoiceScore
from mmbench_lib.tasks.recipes import get_recipe
from mmbench_lib.core.store import RunStore


class TextOracle(RandomChoice):
    """Ranks the gold text choice first (or, with ``wrong=True``, last): isolates the image half."""

    def __init__(self, answers, wrong=False):
        super().__init__()
        self.answers, self.wrong = answers, wrong

    def score_choices(self, requests):
        out = []
        for r in requests:
            gold = "ABCD".index(self.answers[r.id])
            out.append([ChoiceScore(float((i == gold) != self.wrong), 0.0, 1) for i in range(len(r.continuations))])
        return out


@pytest.fixture(scope="module")
def judge():
    return ClipJudge("ViT-S-32", None)  # random weights: enough to find a near-copy of a candidate


@pytest.fixture
def part3(demo):
    d = demo["seed2"]
    return benchmarks.get("seed2").load(d["annotation_file"], d["cc3m_dir"], d["seed_bench_v2_dir"], level="L3", part="all",
                                        dimensions=[25, 26, 27])


def _run(items, adapter, tmp_path, scorer):
    return {r["id"]: r for r in rank_items(items, adapter, RunStore(tmp_path), get_recipe("seed1-ppl"), progress=False,
                                            image_output=scorer).rows()}


def test_generated_folder_is_judged_by_clip(part3, demo, judge, tmp_path):
    # a "generated" image identical to one candidate has cosine similarity 1 with it, whatever the weights
    folder = tmp_path / "gen"
    folder.mkdir()
    picks = {}
    for k, it in enumerate(part3):
        letter = "ABCD"[k % 4]
        shutil.copy(it.choice_images["ABCD".index(letter)], folder / f"{it.id}.png")
        picks[it.id] = letter
    answers = {it.id: it.answer for it in part3}
    rows = _run(part3, TextOracle(answers), tmp_path / "run", ImageOutputScorer(judge, str(folder)))
    for it in part3:
        r = rows[it.id]
        assert r["status"] == "ok" and len(r["clip_similarity"]) == 4
        assert r["image_prediction"] == picks[it.id]
        assert max(r["clip_similarity"]) == pytest.approx(1.0, abs=1e-5)
        assert r["correct"] is (picks[it.id] == it.answer)
    assert {it.output for it in part3} == {"image", "text+image"}


def test_demo_generated_images_are_scored_by_the_most_similar_candidate(part3, demo, judge, tmp_path):
    rows = _run(part3, TextOracle({it.id: it.answer for it in part3}), tmp_path,
                ImageOutputScorer(judge, demo["seed2"]["generated_dir"]))
    for r in rows.values():
        sims = r["clip_similarity"]
        assert r["image_prediction"] == "ABCD"[sims.index(max(sims))]


def test_dim27_wrong_text_means_wrong_without_scoring_the_image(part3, demo, judge, tmp_path):
    scorer = ImageOutputScorer(judge, demo["seed2"]["generated_dir"])
    answers = {it.id: it.answer for it in part3}
    rows = _run(part3, TextOracle(answers, wrong=True), tmp_path, scorer)
    for it in part3:
        if it.output == "text+image":
            r = rows[it.id]
            assert r["text_correct"] is False and r["image_prediction"] is None and r["correct"] is False
            assert "clip_similarity" not in r


def test_no_image_output_means_na(part3, tmp_path, judge):
    rows = _run(part3, RandomChoice(), tmp_path, ImageOutputScorer(judge, None))
    assert all(r["status"] == "n/a" for r in rows.values())


def test_missing_generated_image_and_unknown_clip_mark_items(part3, demo, judge, tmp_path):
    folder = tmp_path / "gen"
    shutil.copytree(demo["seed2"]["generated_dir"], folder)
    missing = next(it for it in part3 if it.output == "image")
    for p in folder.glob(f"{missing.id}.*"):
        p.unlink()
    rows = _run(part3, RandomChoice(), tmp_path / "a", ImageOutputScorer(judge, str(folder)))
    assert rows[missing.id]["status"] == "failed" and "no generated image" in rows[missing.id]["error"]
    assert sum(r["status"] == "ok" for r in rows.values()) >= len(part3) - 1 - sum(it.output == "text+image" for it in part3)

    rows = _run(part3, TextOracle({it.id: it.answer for it in part3}), tmp_path / "b",
                ImageOutputScorer(ClipJudge("ViT-Nope-99", None), str(folder)))
    assert all(r["status"] == "failed" and "ViT-Nope-99" in r["error"] and "'clip_model'" in r["error"]
               for r in rows.values() if r["id"] != missing.id)
