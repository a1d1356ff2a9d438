"""Open an item's images, frames and video; a broken file becomes a ``MediaError`` naming the
item and the field, so the run marks that one item and goes on."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from PIL import Image

from mmbench_lib.core.items import Item
from mmbench_lib.core.requests import Video
from mmbench_lib.core.video import read_video_clip, selected_frames


class MediaError(RuntimeError):
    def __init__(self, item_id: str, field: str, message: str):
        super().__init__(f"item {item_id!r}, field {field!r}: {message}")
        self.item_id, self.field = item_id, field


def open_image(path: str, item_id: str, field: str) -> Image.Image:
    if not Path(path).is_file():
        raise MediaError(item_id, field, f"image file not found: {path}")
    try:
        with Image.open(path) as im:
            return im.convert("RGB")
    except Exception as e:  # PIL raises several types for corrupt files
        raise MediaError(item_id, field, f"unreadable image {path}: {e}") from None


@lru_cache(maxsize=4096)
def _decode_error(path: str, mtime_ns: int, size: int) -> str | None:
    try:
        with Image.open(path) as im:
            im.convert("RGB")
    except Exception as e:  # PIL raises several types for corrupt files
        return f"unreadable image {path}: {e}"
    return None


def _check_decodes(path: str, item_id: str, field: str) -> None:
    st = os.stat(path)
    err = _decode_error(str(path), st.st_mtime_ns, st.st_size)
    if err:
        raise MediaError(item_id, field, err)


def check_media(item: Item, decode: bool = True) -> None:
    """What every model needs, the blind baseline too, so all models score the same items: files
    present, images decodable (``decode``, cached per file) and a video segment that selects frames."""
    if item.meta.get("media_error"):
        field, _, msg = item.meta["media_error"].partition(": ")
        raise MediaError(item.id, field, msg)
    for field, paths in (("images", item.images), ("frames", item.frames), ("choice_images", item.choice_images)):
        for p in paths:
            if not Path(p).is_file():
                raise MediaError(item.id, field, f"file not found: {p}")
            if decode:
                _check_decodes(p, item.id, field)
    if item.video is not None and not item.frames:
        if not Path(item.video.path).is_file():
            raise MediaError(item.id, "video", f"video file not found: {item.video.path}")
        try:
            selected_frames(item.video.path, item.video.rule, item.video.segment, item.video.num_frames)
        except Exception as e:  # PyAV raises several types for a broken file
            raise MediaError(item.id, "video", f"cannot decode {item.video.path}: {e}") from None


def load_visual_inputs(item: Item) -> list[Image.Image]:
    """The images a model sees for this item, in order: images, then frames (or decoded video).
    A video item that yields no frame is a ``MediaError``, never an item scored without them."""
    images, video = load_media(item)
    return images + (video.frames if video else [])


def load_media(item: Item) -> tuple[list[Image.Image], Video | None]:
    """The item's still images, and its clip (``None`` for an image item): pre-extracted frames, or
    the frames the official rule selects from the video with their indices (``core.video``)."""
    check_media(item, decode=False)  # opening the images below decodes them
    images = [open_image(p, item.id, "images") for p in item.images]
    if item.frames:
        return images, Video([open_image(p, item.id, "frames") for p in item.frames])
    if item.video is None:
        return images, None
    try:
        frames, indices = read_video_clip(item.video.path, item.video.rule, item.video.segment, item.video.num_frames)
        fps = selected_frames(item.video.path, item.video.rule, item.video.segment, item.video.num_frames)[1]
    except Exception as e:
        raise MediaError(item.id, "video", f"cannot decode {item.video.path}: {e}") from None
    if not frames:
        raise MediaError(item.id, "video", f"no frame selected from {item.video.path}")
    return images, Video(frames, indices, clip_fps(indices, fps))


def clip_fps(indices: list[int], fps: float) -> float | None:
    """The sampled clip's frame rate: the source fps over the mean step between its frame indices."""
    if not fps:
        return None
    span = indices[-1] - indices[0]
    return fps * (len(indices) - 1) / span if len(indices) > 1 and span > 0 else fps
