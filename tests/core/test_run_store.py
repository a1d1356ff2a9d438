"""Run store: resume after an interrupted run, no duplicates, same metrics; torn lines dropped."""
import json

import pytest

from mmbench_lib import tasks as benchmarks
from mmbench_lib.pipeline.ranking import rank_items
from mmbench_lib.core.metrics import summarize
from mmbench_lib.models import RandomChoice
from mmbench_lib.tasks.recipes import get_recipe
from mmbench_lib.core.store import RunStore


class Interrupted(Exception):
    pass


class StopsAfter(RandomChoice):
    """Random Choice that dies (like Ctrl-C or a killed job) after scoring ``n`` requests."""

    def __init__(self, n):
        super().__init__(seed=7)
        self.left = n

    def score_choices(self, requests):
        if self.left < len(requests):
            raise KeyboardInterrupt
        self.left -= len(requests)
        return super().score_choices(requests)


@pytest.fixture
def seed_items(demo):
    d = demo["seed"]
    return benchmarks.get("seed").load(d["annotation_file"], d["image_root"], d["video_roots"])


def _ids(path):
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_resume_after_interruption_gives_no_duplicates_and_same_metrics(seed_items, tmp_path):
    recipe = get_recipe("seed1-ppl")
    groups = benchmarks.get("seed").GROUPS
    full = rank_items(seed_items, RandomChoice(seed=7), RunStore(tmp_path / "full"), recipe, batch_size=4, progress=False)

    with pytest.raises(KeyboardInterrupt):
        rank_items(seed_items, StopsAfter(10), RunStore(tmp_path / "cut"), recipe, batch_size=4, progress=False)
    partial = _ids(tmp_path / "cut" / "predictions.jsonl")
    assert 0 < len(partial) < len(seed_items)  # finished batches were flushed before the crash

    scored = []

    class Counting(RandomChoice):
        def score_choices(self, requests):
            scored.extend(r.id for r in requests)
            return super().score_choices(requests)

    resumed = rank_items(seed_items, Counting(seed=7), RunStore(tmp_path / "cut"), recipe, batch_size=4, progress=False)
    assert not set(scored) & set(partial)  # nothing redone
    ids = _ids(tmp_path / "cut" / "predictions.jsonl")
    assert len(ids) == len(set(ids)) == len(seed_items)  # nothing lost, nothing duplicated
    assert summarize(resumed.rows(), groups) == summarize(full.rows(), groups)


def test_torn_last_line_is_dropped_and_rescored(seed_items, tmp_path):
    recipe = get_recipe("seed1-ppl")
    store = rank_items(seed_items[:6], RandomChoice(), RunStore(tmp_path), recipe, batch_size=3, progress=False)
    path = store.predictions_path
    text = path.read_text()
    path.write_text(text + text.splitlines()[0][:25])  # a write cut off mid-line
    reopened = RunStore(tmp_path)
    assert len(reopened.rows()) == 6
    assert path.read_text() == text
    rank_items(seed_items[:7], RandomChoice(), reopened, recipe, progress=False)
    assert len(_ids(path)) == 7


def test_failed_items_can_be_retried(seed_items, tmp_path):
    import shutil

    recipe = get_recipe("seed1-ppl")
    broken = seed_items[0]
    saved = tmp_path / "saved"
    shutil.copy(broken.images[0], saved)
    open(broken.images[0], "wb").write(b"not an image")
    try:
        from mmbench_lib.models import load_adapter

        store = rank_items(seed_items[:3], load_adapter("tiny-llava"), RunStore(tmp_path / "r"), recipe, progress=False)
        assert store.rows()[0]["status"] == "failed"
    finally:
        shutil.copy(saved, broken.images[0])
    store = rank_items(seed_items[:3], RandomChoice(), RunStore(tmp_path / "r"), recipe, retry_failed=True, progress=False)
    assert [r["status"] for r in store.rows()] == ["ok"] * 3


def test_resuming_with_other_settings_is_refused(demo, tmp_path):
    from mmbench_lib.pipeline import runs
    from mmbench_lib.pipeline.config import RunConfig

    args = runs.demo_args("seed", demo)
    runs.evaluate(RunConfig("seed", tmp_path, data=args, model="random", limit=4, progress=False))
    runs.evaluate(RunConfig("seed", tmp_path, data=args, model="random", limit=6, progress=False))  # same settings: resumes
    with pytest.raises(ValueError, match="holds a run of benchmark 'seed', model 'random'"):
        runs.evaluate(RunConfig("seed", tmp_path, data=args, model="random", reduction="mean", progress=False))
