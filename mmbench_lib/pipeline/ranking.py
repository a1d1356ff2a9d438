"""The ranking loop: items -> adapter -> scores -> predictions store.

Resumable: finished ids in the store are skipped, each batch is flushed before the next
starts, a failing item is marked and the run goes on.
"""
from __future__ import annotations

import logging
import traceback

from tqdm.auto import tqdm

from mmbench_lib.core.items import Item
from mmbench_lib.core.media import MediaError, check_media, load_visual_inputs
from mmbench_lib.tasks.recipes import Recipe, paper_preprocess, score_request
from mmbench_lib.scoring import pick
from mmbench_lib.core.store import RunStore

log = logging.getLogger(__name__)


def base_row(item: Item) -> dict:
    return {
        "id": item.id, "benchmark": item.benchmark, "dimension_id": item.dimension_id, "dimension": item.dimension,
        "group": item.group, "level": item.level, "part": item.part, "question_type": item.question_type,
        "answer": item.answer, "num_choices": len(item.choices), "cluster": cluster_key(item),
    }


def cluster_key(item: Item) -> str:
    """Questions sharing an image or video share a cluster (for clustered bootstrap intervals)."""
    data_id = item.meta.get("data_id")
    if data_id:
        return data_id if isinstance(data_id, str) else "|".join(map(str, data_id))
    return (item.images or item.frames or [item.video.path if item.video else item.id])[0]


def scored_row(item: Item, scores, recipe: Recipe) -> dict:
    idx = pick(scores, recipe.reduction)
    pred = item.letters[idx]
    return {
        **base_row(item), "status": "ok", "prediction": pred, "correct": pred == item.answer,
        "scores": {"sum": [s.sum_logprob for s in scores], "mean": [s.mean_logprob for s in scores]},
        "num_tokens": [s.num_tokens for s in scores], "reduction": recipe.reduction,
    }


def failed_row(item: Item, error: str) -> dict:
    return {**base_row(item), "status": "failed", "prediction": None, "correct": False, "error": error}


def na_row(item: Item, reason: str) -> dict:
    return {**base_row(item), "status": "n/a", "prediction": None, "correct": None, "error": reason}


def _request(item: Item, adapter, recipe: Recipe):
    if adapter.sees_images:
        images = load_visual_inputs(item)
        if recipe.image_size:  # still images only: video frames keep the processor's short-side resize + crop
            n = len(item.images)
            images = paper_preprocess(images[:n], recipe.image_size) + images[n:]
    else:
        check_media(item)  # a blind model skips decoding but scores the same items
        images = []
    return score_request(item, recipe, images)


def rank_items(items: list[Item], adapter, store: RunStore, recipe: Recipe, batch_size: int = 8,
               retry_failed: bool = False, progress: bool = True, image_output=None) -> RunStore:
    """Score every item not yet in ``store`` by answer ranking and append its row.

    Items needing image output (SEED-2 dims 25-27) are scored by ``image_output`` (an
    ``ImageOutputScorer``) when the adapter generates images or a folder of generated images
    is given; otherwise they get an ``n/a`` row, as SEED-2 Table 2 does.
    """
    if retry_failed:
        store.drop({r["id"] for r in store.rows() if r.get("status") == "failed"})
    done = store.done_ids()
    todo = [it for it in items if it.id not in done]
    bar = tqdm(total=len(items), initial=len(items) - len(todo), desc=f"ranking ({adapter.name})", disable=not progress)
    for start in range(0, len(todo), batch_size):
        batch = todo[start:start + batch_size]
        rows, reqs = {}, []
        for it in batch:
            if it.needs_image_output and (image_output is None or not image_output.available_for(adapter)):
                rows[it.id] = na_row(it, "needs image output; this model cannot produce images and no generated images were given")
                continue
            try:
                reqs.append((it, _request(it, adapter, recipe)))
            except MediaError as e:
                rows[it.id] = failed_row(it, str(e))
        rows.update(_score([r for r in reqs if r[0].output == "text"], adapter, recipe))
        rows.update(_score_image_output([r for r in reqs if r[0].output != "text"], adapter, recipe, image_output))
        store.append([rows[it.id] for it in batch])
        bar.update(len(batch))
    bar.close()
    return store


def _score(reqs, adapter, recipe) -> dict:
    if not reqs:
        return {}
    try:
        results = adapter.score_choices([r for _, r in reqs])
        return {it.id: scored_row(it, s, recipe) for (it, _), s in zip(reqs, results)}
    except Exception:
        if len(reqs) == 1:
            it = reqs[0][0]
            log.warning("item %s failed:\n%s", it.id, traceback.format_exc())
            return {it.id: failed_row(it, f"model call failed: {traceback.format_exc(limit=2).strip().splitlines()[-1]}")}
        out = {}
        for pair in reqs:  # isolate the failing item
            out.update(_score([pair], adapter, recipe))
        return out


def _score_image_output(reqs, adapter, recipe, image_output) -> dict:
    """SEED-2 §3.4: "image" items by CLIP choice alone; "text+image" items need the ranked text
    answer right first, then the generated image, and are correct only if both are."""
    out = {}
    text_rows = _score([r for r in reqs if r[0].output == "text+image"], adapter, recipe) if reqs else {}
    for it, _ in reqs:
        row = {**base_row(it), "status": "ok"}
        if it.output == "text+image":
            text = text_rows[it.id]
            if text["status"] != "ok":
                out[it.id] = text
                continue
            row.update(text_prediction=text["prediction"], text_correct=text["correct"], scores=text["scores"],
                       num_tokens=text["num_tokens"], reduction=recipe.reduction)
            if not text["correct"]:  # the image is scored only when the text is right
                out[it.id] = {**row, "prediction": None, "image_prediction": None, "correct": False}
                continue
        try:
            idx, sims = image_output.choose(it, adapter)
        except MediaError as e:
            out[it.id] = failed_row(it, str(e))
            continue
        pred = it.letters[idx]
        row.update(image_prediction=pred, clip_similarity=sims, prediction=pred, correct=pred == it.answer)
        out[it.id] = row
    return out
