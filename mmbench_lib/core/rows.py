"""Row helpers shared by both protocols (answer ranking and generation).

Every row a run stores starts with :func:`base_row`, so ranking rows (SEED) and generation rows
(MMMU / CMMMU) carry the same names for the shared fields: ``id``, ``benchmark``, ``split``,
``dimension_id``, ``dimension``, ``group``, ``level``, ``part``, ``question_type``, ``difficulty``,
``answer``, ``cluster``, and (from :func:`ok_row`, :func:`failed_row`, :func:`na_row`) ``status``,
``prediction``, ``correct``, ``error``. ``subject``/``discipline`` repeat ``dimension``/``group``
under the names the MMMU / CMMMU readers use. An item shown with its options in another order
(``mmbench_lib.tasks.options``) adds ``option_order`` (shown position -> original option index).
"""
from __future__ import annotations

from mmbench_lib.core.items import Item


def cluster_key(item: Item) -> str:
    """Questions sharing an image or video share a cluster (for clustered bootstrap intervals)."""
    data_id = item.meta.get("data_id")
    if data_id:
        return data_id if isinstance(data_id, str) else "|".join(map(str, data_id))
    return (item.images or item.frames or [item.video.path if item.video else item.id])[0]


def base_row(item: Item) -> dict:
    """The item's fields every stored row carries."""
    row = {
        "id": item.id, "benchmark": item.benchmark, "split": item.split, "dimension_id": item.dimension_id,
        "dimension": item.dimension, "group": item.group, "level": item.level, "part": item.part,
        "question_type": item.question_type, "difficulty": item.difficulty, "answer": item.answer,
        "num_choices": len(item.choices), "cluster": cluster_key(item),
        "subject": item.dimension, "discipline": item.group, "image_type": list(item.image_type),
        "num_images": len(item.images),
    }
    if "type" in item.meta:  # the benchmark's own answer kind (CMMMU 选择 / 判断 / 填空)
        row["type"] = item.meta["type"]
    if item.meta.get("quirk"):  # a data quirk the loader scored as given, said per item (tasks.seed2plus)
        row["quirk"] = item.meta["quirk"]
    if "option_order" in item.meta:  # options shown in another order (mmbench_lib.tasks.options): shown -> original
        row["option_order"] = list(item.meta["option_order"])
    return row


def ok_row(item: Item, **fields) -> dict:
    """A finished item: ``prediction``/``correct`` are ``None`` until something judges it."""
    return {**base_row(item), "status": "ok", "prediction": None, "correct": None, "error": None, **fields}


def failed_row(item: Item, error: str, **fields) -> dict:
    """An item whose media or model call failed; counted as failed, never as answered."""
    return {**base_row(item), "status": "failed", "prediction": None, "correct": False, "error": error, **fields}


def na_row(item: Item, reason: str) -> dict:
    """An item this run cannot answer at all (e.g. SEED-2 image output without an image model)."""
    return {**base_row(item), "status": "n/a", "prediction": None, "correct": None, "error": reason}
