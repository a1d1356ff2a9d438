"""The MMMU / CMMMU demo sets let the papers' baselines score plausibly: within each subject (MMMU) or
subcategory (CMMMU) and answer kind the golds differ, so Frequent Choice (the most frequent gold per
subject and kind, MMMU / CMMMU §4.1) is right on one question per group and never on a whole discipline,
and Random Choice stays near chance."""
from collections import defaultdict

import pytest

from mmbench_lib import tasks
from mmbench_lib.pipeline import generation as g
from mmbench_lib.pipeline.config import RunConfig

SPLITS = {"mmmu": ("source", "validation"), "cmmmu": ("root", "val")}


@pytest.mark.parametrize("bench", ["mmmu", "cmmmu"])
def test_golds_differ_within_each_subject_and_kind(demo, bench):
    key, split = SPLITS[bench]
    items = tasks.get(bench).load(demo[bench][key], split=split)
    groups = defaultdict(list)
    for it in items:
        groups[it.dimension, tasks.get(bench).answer_kind(it)].append(str(it.answer))
    assert all(len(set(golds)) == len(golds) for golds in groups.values()), dict(groups)
    assert sum(len(v) > 1 for v in groups.values()) >= len(groups) // 2  # most groups hold several questions


@pytest.mark.parametrize("bench", ["mmmu", "cmmmu"])
def test_random_and_frequent_choice_score_plausibly(demo, bench, tmp_path):
    key, split = SPLITS[bench]
    out = {}
    for base in ("random", "frequent"):
        out[base] = g.evaluate_generation(RunConfig(bench, tmp_path / base, source=demo[bench][key], split=split,
                                                    model=base, baseline=base, progress=False))
    freq, rand = out["frequent"], out["random"]
    assert freq["overall"]["accuracy"] <= 0.5  # was 16/24 (MMMU) and 20/20 (CMMMU)
    assert all(d["accuracy"] < 1 for d in freq["per_discipline"].values()), freq["per_discipline"]
    assert 0.1 <= rand["overall"]["accuracy"] <= 0.35  # chance: 1/4 of the multiple-choice, 1/2 of true/false
    assert rand["overall"]["accuracy"] <= freq["overall"]["accuracy"]
