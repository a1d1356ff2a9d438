"""The one resumable batch loop of both protocols (answer ranking and generation).

For each batch of items not yet in the ``RunStore``: ``protocol.prepare(item)`` gives a request or
an already finished row (n/a, a baseline's answer); an item whose media fails gets a failed row.
``protocol.call(pairs)`` runs the model on the batch's requests; when it raises, the batch is
bisected down to the failing item, which gets a failed row with the error while the others are
scored. ``protocol.finish(item, request, result)`` turns a result into a row. Every batch is
appended and flushed before the next starts, so an interrupted run resumes where it stopped.
A batch holds ``batch_size`` items: the evaluations pass ``pipeline.backend.call_size`` (a batched generator's
``BatchPolicy.requests_per_call``, so its continuous batcher sees that many pending requests at once).

More: docs/modules.md, ``mmbench_lib/pipeline/loop.py``.
"""
from __future__ import annotations

import logging
import traceback
from concurrent.futures import ThreadPoolExecutor

from mmbench_lib.core.items import Item
from mmbench_lib.core.media import MediaError
from mmbench_lib.core.progress import Progress
from mmbench_lib.core.store import RunStore, not_finite

log = logging.getLogger(__name__)


class Failed:
    """The result of a model call that failed for one item (after bisection)."""

    def __init__(self, error: str):
        self.error = error


def run_loop(items: list[Item], protocol, store: RunStore, batch_size: int = 8, retry_failed: bool = False,
             progress: bool = True, label: str | None = None) -> RunStore:
    """Give every item of ``items`` not yet in ``store`` one row (see module doc); returns ``store``.
    ``label`` names the loop in the progress lines (default: the benchmark and ``protocol.desc``)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    ids = {it.id for it in items}
    failed_before = {r["id"] for r in store.rows() if r.get("status") == "failed" and r["id"] in ids}
    if retry_failed and failed_before:  # a failure is not a result: a resumed run asks those items again
        store.drop(failed_before)
    note = f"retrying {len(failed_before)} failed item(s); -p retry_failed false keeps them" \
        if retry_failed and failed_before else ""
    done = store.done_ids()
    todo = [it for it in items if it.id not in done]
    bar = Progress(len(items), label or _label(items, protocol), initial=len(items) - len(todo),
                   failed=_failed(store, items), mode=None if progress else "off", note=note)
    batches = [todo[start:start + batch_size] for start in range(0, len(todo), batch_size)]
    threaded = getattr(protocol, "prefetch", None) is not None
    for batch, (rows, pairs) in look_ahead(batches, lambda b: _prepare(protocol, b), threaded):
        for (it, req), result in zip(pairs, bisect_call(protocol.call, pairs)):
            rows[it.id] = protocol.failed(it, result.error) if isinstance(result, Failed) else protocol.finish(it, req, result)
        for it in batch:  # predictions.jsonl is strict JSON: a NaN or infinite score fails its item
            bad = not_finite(rows[it.id])
            if bad:
                rows[it.id] = protocol.failed(it, f"the model gave a value that is not finite ({bad})")
        store.append([rows[it.id] for it in batch])
        bar.update(len(batch), failed=sum(rows[it.id].get("status") == "failed" for it in batch))
    bar.close()
    return store


def look_ahead(batches: list, prepare, threaded: bool = True):
    """``(batch, prepare(batch))`` for each batch in order; ``threaded``: batch k+1 is prepared in a worker
    thread while the caller works on batch k (an error of ``prepare`` is raised where its batch is reached)."""
    if not threaded or not batches:
        for batch in batches:
            yield batch, prepare(batch)
        return
    pool = ThreadPoolExecutor(1, thread_name_prefix="mmbench-prefetch")
    try:
        nxt = pool.submit(prepare, batches[0])
        for k, batch in enumerate(batches):
            got = nxt.result()
            if k + 1 < len(batches):
                nxt = pool.submit(prepare, batches[k + 1])
            yield batch, got
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _prepare(protocol, batch: list[Item]) -> tuple[dict, list]:
    """A batch's rows settled before the model (media errors, n/a) and its (item, request) pairs; a protocol
    with ``prefetch`` also prepares the pairs' model inputs here (the loop's worker thread)."""
    rows, pairs = {}, []
    for it in batch:
        try:
            got = protocol.prepare(it)
        except MediaError as e:
            rows[it.id] = protocol.failed(it, str(e))
            continue
        except protocol.item_errors as e:  # noqa: PERF203 - e.g. an unreadable image for OCR: this item only
            rows[it.id] = protocol.failed(it, f"{type(e).__name__}: {e}")
            continue
        if isinstance(got, dict):
            rows[it.id] = got
        else:
            pairs.append((it, got))
    if pairs and getattr(protocol, "prefetch", None) is not None:
        protocol.prefetch(pairs)
    return rows, pairs


def _label(items: list[Item], protocol) -> str:
    benchmark = items[0].benchmark if items else ""
    return f"{benchmark} {protocol.desc}".strip()


def _failed(store: RunStore, items: list[Item]) -> int:
    ids = {it.id for it in items}
    return sum(r.get("status") == "failed" and r["id"] in ids for r in store.rows())


def bisect_call(call, pairs: list) -> list:
    """``call(pairs)``, one result per pair; when it raises, the halves are retried until the failing
    item stands alone and gets a ``Failed`` result (KeyboardInterrupt and the like still stop the run)."""
    if not pairs:
        return []
    try:
        results = list(call(pairs))
    except Exception as e:  # noqa: BLE001 - any model error is isolated to its item
        if len(pairs) == 1:
            if getattr(e, "item_failure", False):  # an expected per-item failure (an endpoint's answer): one line
                log.warning("item %s failed: %s", pairs[0][0].id, e)
            else:
                log.warning("item %s failed:\n%s", pairs[0][0].id, traceback.format_exc())
            return [Failed(f"model call failed: {traceback.format_exc(limit=2).strip().splitlines()[-1]}")]
        mid = len(pairs) // 2
        return bisect_call(call, pairs[:mid]) + bisect_call(call, pairs[mid:])
    if len(results) != len(pairs):
        raise RuntimeError(f"the model returned {len(results)} results for {len(pairs)} requests")
    return results
