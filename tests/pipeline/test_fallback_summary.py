"""A batched generation that fell back to one request at a time shows in the run's results table (the line
``mmbench run`` prints at the end), not only in the manifest."""
import json

from mmbench_lib.analysis import results
from mmbench_lib.models.batching import BatchedGenerator
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.pipeline.generation import evaluate_generation


def test_a_fallback_to_one_at_a_time_is_in_the_results_table(tmp_path, demo, smollm2, monkeypatch):
    def broken(self, adapter, requests):  # the batched path fails as Gemma 3's nested images once did
        raise TypeError("images must be nested per row")

    top = tmp_path / "run"
    src = demo["mmmu"]["source"]
    evaluate_generation(RunConfig("mmmu", top / "batched", source=src, model="smollm2", limit=2, max_new_tokens=4,
                                  progress=False), smollm2)
    monkeypatch.setattr(BatchedGenerator, "run", broken)
    smollm2.batch_fallback = None
    try:
        evaluate_generation(RunConfig("mmmu", top / "fallback", source=src, model="smollm2", limit=2, max_new_tokens=4,
                                      progress=False), smollm2)
    finally:
        smollm2.batch_fallback = None
    man = json.loads((top / "fallback" / "manifest.json").read_text(encoding="utf-8"))
    assert man["model"]["generation"]["mode"] == "one request at a time (fallback)"
    body = results.collect(top)
    by_run = {r["run"]: r for r in body["runs"]}
    assert by_run["batched"]["protocol"] == "generation (official)" and by_run["batched"]["generation_fallback"] is None
    assert by_run["fallback"]["protocol"] == "generation (official), one at a time"
    assert "TypeError: images must be nested per row" in by_run["fallback"]["generation_fallback"]
    table = results.format_table(body)
    assert table.splitlines()[-1] == ("fallback: batched generation fell back to one request at a time: batched "
                                      "generation raised TypeError: images must be nested per row")
    assert "batched: batched generation fell back" not in table
