"""Batch k+1 is prepared while batch k runs (pipeline/loop.py with a protocol that has ``prefetch``), and an
adapter scores prefetched requests without preparing them again, to the same numbers."""
import threading

import pytest
from PIL import Image

from mmbench_lib.core.items import Item
from mmbench_lib.core.requests import ScoreRequest
from mmbench_lib.core.store import RunStore
from mmbench_lib.models.hf import ImageTextToText
from mmbench_lib.pipeline.loop import run_loop


def _item(i):
    return Item(id=f"q{i}", benchmark="seed", question=f"question {i}", choices=["a", "b"], answer="A")


class Overlapping:
    """A protocol whose call of batch 1 returns only once batch 2 has been prefetched (by another thread)."""

    desc, item_errors = "overlap", ()

    def __init__(self):
        self.prefetched = {}  # first id of a batch -> the thread that prefetched it
        self.second_ready = threading.Event()
        self.calls = []

    def prepare(self, item):
        return item.id

    def prefetch(self, pairs):
        self.prefetched[pairs[0][0].id] = threading.current_thread().name
        if pairs[0][0].id == "q2":
            self.second_ready.set()

    def call(self, pairs):
        self.calls.append([it.id for it, _ in pairs])
        if len(self.calls) == 1:
            assert self.second_ready.wait(60), "batch 2 was not prepared while batch 1 ran"
        return [0] * len(pairs)

    def finish(self, item, request, result):
        return {"id": item.id, "status": "ok"}

    def failed(self, item, error):
        return {"id": item.id, "status": "failed", "error": error}


def test_next_batch_is_prepared_while_the_current_one_runs(tmp_path):
    protocol = Overlapping()
    store = run_loop([_item(i) for i in range(5)], protocol, RunStore(tmp_path / "p.jsonl"), batch_size=2,
                     progress=False)
    assert protocol.calls == [["q0", "q1"], ["q2", "q3"], ["q4"]]
    assert set(protocol.prefetched) == {"q0", "q2", "q4"}
    assert all(name.startswith("mmbench-prefetch") for name in protocol.prefetched.values())
    assert [r["id"] for r in store.rows()] == ["q0", "q1", "q2", "q3", "q4"]


def test_prefetched_requests_are_not_prepared_again_and_score_the_same(tiny_llava):
    adapter = ImageTextToText(tiny_llava.model, tiny_llava.processor, "tiny-llava", scorer="shared-prefix")
    red = Image.new("RGB", (40, 30), (200, 30, 30))
    reqs = [ScoreRequest(f"q{i}", f"Question: what is {i}?\nAnswer:", [" Red", " Blue sky"], [red]) for i in range(3)]
    adapter.score_choices(reqs)  # the engine's one-time self-checks (their first group is scored the row way)
    expected = adapter.score_choices(reqs)
    adapter.prefetch(reqs)
    prepared = []
    original = adapter.prepare
    adapter.prepare = lambda r: prepared.append(r.id) or original(r)
    try:
        got = adapter.score_choices(reqs)
    finally:
        del adapter.prepare
    assert prepared == [] and got == expected
    again = [ScoreRequest(r.id, r.prompt, r.continuations, r.images) for r in reqs]  # other objects: prepared anew
    assert adapter.score_choices(again) == expected


@pytest.mark.parametrize("bad", ["q1"])
def test_a_prefetch_that_fails_leaves_the_error_to_the_scoring_call(tmp_path, bad):
    class Failing(Overlapping):
        def prefetch(self, pairs):
            raise RuntimeError("prefetch boom")

    with pytest.raises(RuntimeError, match="prefetch boom"):  # a protocol's own error is not swallowed by the loop
        run_loop([_item(i) for i in range(3)], Failing(), RunStore(tmp_path / "f.jsonl"), batch_size=2, progress=False)
