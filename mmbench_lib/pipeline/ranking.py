"""The ranking protocol: items -> adapter -> choice scores -> predictions store.

Runs in the shared resumable loop (``mmbench_lib.pipeline.loop``): finished ids in the store are
skipped, each batch is flushed before the next starts, a failing item is marked and the run goes on.
"""
from __future__ import annotations

from mmbench_lib.core.items import Item
from mmbench_lib.core.media import MediaError, check_media, load_media
from mmbench_lib.core.rows import base_row, cluster_key, failed_row, na_row, ok_row  # noqa: F401 - re-exported
from mmbench_lib.core.store import RunStore
from mmbench_lib.pipeline.loop import run_loop
from mmbench_lib.scoring.reference import pick
from mmbench_lib.tasks.recipes import Recipe, paper_preprocess, score_request

NO_IMAGE_MODEL = "needs image output; this model cannot produce images and no generated images were given"


def scored_row(item: Item, scores, recipe: Recipe) -> dict:
    idx = pick(scores, recipe.reduction)
    pred = item.letters[idx]
    return ok_row(item, prediction=pred, correct=None if item.answer is None else pred == item.answer,  # None: withheld
                  scores={"sum": [s.sum_logprob for s in scores], "mean": [s.mean_logprob for s in scores]},
                  num_tokens=[s.num_tokens for s in scores], reduction=recipe.reduction)


VIDEO_INPUTS = ("native", "frames")


def set_video_input(adapter, mode: str = "native") -> dict:
    """Ask ``adapter`` for a video path; the manifest's ``video_input``: requested, used and, when native
    was asked of a family without it, why frames are used. Text-only models use ``"none"``."""
    if mode not in VIDEO_INPUTS:
        raise ValueError(f"video_input must be one of {VIDEO_INPUTS}, got {mode!r}")
    if not adapter.sees_images:
        return {"requested": mode, "used": "none", "note": "text-only model: no frames are shown"}
    setter = getattr(adapter, "set_video_input", None)
    used = setter(mode) if setter else "frames"
    out = {"requested": mode, "used": used}
    if mode == "native" and used != "native":
        reason = getattr(adapter, "native_video_reason", lambda: f"{type(adapter).__name__} takes images only")()
        out["note"] = f"{reason}: frames passed as images"
    return out


def visual_inputs(item: Item, adapter, image_size: int = 0):
    """``(images, video)`` an adapter sees. A video item's frames (the official 8-frame rule, or the shipped
    frames) go as one ``Video`` to an adapter whose ``video_input`` is ``"native"``, else as images after the
    still images, as they always have. ``image_size`` squashes still images only (video frames keep the
    processor's own resize)."""
    if not adapter.sees_images:
        check_media(item)  # a blind model skips decoding but scores the same items
        return [], None
    images, video = load_media(item)
    images = paper_preprocess(images, image_size)
    if video is not None and getattr(adapter, "video_input", "frames") != "native":
        return images + video.frames, None
    return images, video


def video_path(item: Item, request) -> dict:
    """The row field naming how a video item reached the model: ``native``, ``frames`` or ``none`` (blind)."""
    if not item.is_video:
        return {}
    return {"video_input": "native" if request.video is not None else "frames" if request.images else "none"}


def _request(item: Item, adapter, recipe: Recipe):
    images, video = visual_inputs(item, adapter, recipe.image_size)
    return score_request(item, recipe, images, video)


class RankingProtocol:
    """Answer ranking for the shared loop. SEED-2 §3.4: "image" items are judged by CLIP choice
    alone; "text+image" items need the ranked text answer right first, then the generated image,
    and are correct only if both are."""

    item_errors = ()  # only media errors mark a single item while preparing

    def __init__(self, adapter, recipe: Recipe, image_output=None):
        self.adapter, self.recipe, self.image_output = adapter, recipe, image_output
        self.desc = adapter.name

    def prepare(self, item: Item):
        if item.needs_image_output and (self.image_output is None or not self.image_output.available_for(self.adapter)):
            return na_row(item, NO_IMAGE_MODEL)
        return _request(item, self.adapter, self.recipe)

    def call(self, pairs) -> list:
        """Choice scores per pair (``None`` for "image" items, which rank no text); text items and
        text+image items go to the model as separate calls."""
        out = [None] * len(pairs)
        for output in ("text", "text+image"):
            idx = [i for i, (it, _) in enumerate(pairs) if it.output == output]
            if idx:
                for i, s in zip(idx, self.adapter.score_choices([pairs[i][1] for i in idx])):
                    out[i] = s
        return out

    def prefetch(self, pairs) -> None:
        """Prepare the model inputs of a batch ahead (the loop's worker thread, while the model scores the
        batch before): the adapter's processor, chat template and tokenisation leave the critical path.
        Anything that fails here is prepared again, and reported, when the batch is scored."""
        ahead = getattr(self.adapter, "prefetch", None)
        if ahead is None:
            return
        try:
            ahead([req for it, req in pairs if it.output in ("text", "text+image")])
        except Exception:  # noqa: BLE001 - the error shows, per item, when the batch is scored
            pass

    def failed(self, item: Item, error: str) -> dict:
        return failed_row(item, error)

    def finish(self, item: Item, request, scores) -> dict:
        return {**self._finish(item, request, scores), **video_path(item, request)}

    def _finish(self, item: Item, request, scores) -> dict:
        if item.output == "text":
            return scored_row(item, scores, self.recipe)
        row = ok_row(item)
        if item.output == "text+image":
            text = scored_row(item, scores, self.recipe)
            row.update(text_prediction=text["prediction"], text_correct=text["correct"], scores=text["scores"],
                       num_tokens=text["num_tokens"], reduction=self.recipe.reduction)
            if not text["correct"]:  # the image is scored only when the text is right
                return {**row, "prediction": None, "image_prediction": None, "correct": False}
        try:
            idx, sims = self.image_output.choose(item, self.adapter)
        except MediaError as e:
            return failed_row(item, str(e))
        pred = item.letters[idx]
        row.update(image_prediction=pred, clip_similarity=sims, prediction=pred, correct=pred == item.answer)
        return row


def rank_items(items: list[Item], adapter, store: RunStore, recipe: Recipe, batch_size: int = 8,
               retry_failed: bool = False, progress: bool = True, image_output=None) -> RunStore:
    """Score every item not yet in ``store`` by answer ranking and append its row.

    Items needing image output (SEED-2 dims 25-27) are scored by ``image_output`` (an
    ``ImageOutputScorer``) when the adapter generates images or a folder of generated images
    is given; otherwise they get an ``n/a`` row, as SEED-2 Table 2 does.
    """
    return run_loop(items, RankingProtocol(adapter, recipe, image_output), store, batch_size=batch_size,
                    retry_failed=retry_failed, progress=progress)


__all__ = ["RankingProtocol", "rank_items", "set_video_input", "visual_inputs", "video_path", "scored_row", "base_row", "cluster_key", "failed_row", "na_row"]
