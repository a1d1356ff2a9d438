"""Generated letters (a non-paper protocol) run through the one resumable loop and run store: SmolLM2 (real
weights) on the SEED v1 demo set with the lmms-eval-gen / vlmevalkit-gen recipes chosen in RunConfig."""
import json

import pytest

from mmbench_lib.analysis import reader
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.tasks.letters import extract_all


def _rows(folder):
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


def _config(demo, out, recipe="lmms-eval-gen", limit=3, max_new_tokens=8):
    return RunConfig("seed", out, data=runs.demo_args("seed", demo), model="smollm2", recipe=recipe, reduction="sum",
                     limit=limit, max_new_tokens=max_new_tokens, batch_size=2, progress=False)


def test_generated_letters_are_stored_resumable_and_read_by_both_extractors(demo, smollm2, tmp_path):
    out = tmp_path / "gen"
    metrics = runs.evaluate(_config(demo, out), smollm2)
    assert metrics["recipe"] == "lmms-eval-gen" and metrics["reduction"] is None  # reduction does not apply
    first = _rows(out)
    assert len(first) == 3
    items = {it.id: it for it in runs.load_items("seed", runs.demo_args("seed", demo))}
    for r in first:
        it = items[r["id"]]
        assert r["status"] == "ok" and isinstance(r["response"], str) and r["max_new_tokens"] == 8
        want = {k: v.letter for k, v in extract_all(r["response"], it.letters, it.choices).items()}
        assert r["extracted"] == want and r["extractor"] == "lmms-eval"
        assert r["prediction"] == want["lmms-eval"] and r["correct"] == (want["lmms-eval"] == it.answer)
    man = json.loads((out / "manifest.json").read_text())
    assert man["generation"]["max_new_tokens"] == 8 and man["recipe"]["continuation"] == "generate"

    runs.evaluate(_config(demo, out, limit=5), smollm2)  # resumes: the first three rows are kept as they were
    second = _rows(out)
    assert second[:3] == first and len({r["id"] for r in second}) == 5
    samples = reader.samples_df(out)
    assert samples["extracted"].map(lambda e: set(e)).eq({"lmms-eval", "vlmevalkit"}).all()

    with pytest.raises(ValueError, match="holds a run of benchmark"):  # another generation setting: refused
        runs.evaluate(_config(demo, out, limit=5, max_new_tokens=4), smollm2)
    with pytest.raises(ValueError, match="holds a run of benchmark"):  # another recipe: refused
        runs.evaluate(_config(demo, out, recipe="vlmevalkit-gen", limit=5), smollm2)


def test_vlmevalkit_recipe_predicts_by_exact_matching(demo, smollm2, tmp_path):
    out = tmp_path / "vlm"
    runs.evaluate(_config(demo, out, recipe="vlmevalkit-gen", limit=2), smollm2)
    for r in _rows(out):
        assert r["extractor"] == "vlmevalkit" and r["prediction"] == r["extracted"]["vlmevalkit"]
        assert r["correct"] == (r["prediction"] == r["answer"])
