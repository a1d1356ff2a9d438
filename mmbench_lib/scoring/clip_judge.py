"""SEED-Bench-2 part 3: image outputs scored by CLIP similarity to the candidate images.

SEED-Bench-2 §3.4 and docs/protocols.md §2.4: for dims 25-26 the model generates an image (from the
question, plus the context images for dim 26); the candidate image most similar to it under
CLIP is the prediction. Dim 27: the text answer is ranked first; only if it is right is the
generated image scored, and the item is correct only if both are. The paper does not name its
CLIP: the model and pretrained tag are parameters (default ViT-L-14 / openai, cosine similarity
of L2-normalised image embeddings), recorded in the manifest as our choice.
"""
from __future__ import annotations

from pathlib import Path

import torch

from mmbench_lib.core.items import Item
from mmbench_lib.core.media import MediaError, open_image
from mmbench_lib.core.paths import PathEscape, inside

DEFAULT_CLIP = ("ViT-L-14", "openai")
IMAGE_EXTS = (".png", ".jpg", ".jpeg", ".webp")


class ClipJudge:
    """Open_clip image embeddings; loaded on first use (``pretrained=None``: random weights, tests only)."""

    def __init__(self, model: str = DEFAULT_CLIP[0], pretrained: str | None = DEFAULT_CLIP[1], device: str = "cpu"):
        self.model_name, self.pretrained, self.device = model, pretrained or None, device
        self._model = self._preprocess = None

    def _load(self):
        if self._model is None:
            import open_clip

            if self.model_name not in open_clip.list_models():
                raise ValueError(f"open_clip does not know the CLIP model {self.model_name!r} (see open_clip.list_models())")
            model, _, preprocess = open_clip.create_model_and_transforms(self.model_name, pretrained=self.pretrained)
            self._model, self._preprocess = model.eval().to(self.device), preprocess
        return self._model, self._preprocess

    @torch.inference_mode()
    def similarities(self, generated, candidates) -> list[float]:
        """Cosine similarity of the generated image to each candidate image."""
        model, preprocess = self._load()
        batch = torch.stack([preprocess(im) for im in [generated, *candidates]]).to(self.device)
        emb = model.encode_image(batch).float()
        emb = emb / emb.norm(dim=-1, keepdim=True)
        return (emb[1:] @ emb[0]).tolist()

    def describe(self) -> dict:
        return {"clip_model": self.model_name, "clip_pretrained": self.pretrained, "similarity": "cosine of L2-normalised image embeddings",
                "note": "the paper of the image-output dimensions does not specify its CLIP; this is the suite's configurable choice"}


class ImageOutputScorer:
    """Scores items whose answer is an image, from the adapter's own images or a folder of
    images generated elsewhere (``<folder>/<question_id>.png``, .jpg, .jpeg or .webp)."""

    def __init__(self, judge: ClipJudge, generated_dir: str | None = None):
        self.judge = judge
        self.generated_dir = Path(generated_dir) if generated_dir else None

    def available_for(self, adapter) -> bool:
        return getattr(adapter, "can_output_images", False) or self.generated_dir is not None

    def generated_image(self, item: Item, adapter):
        if getattr(adapter, "can_output_images", False):
            context = [open_image(p, item.id, "images") for p in item.images]
            return adapter.generate_image(item.question, context)
        for ext in IMAGE_EXTS:
            try:  # the question id names a file inside generated_dir, never elsewhere (core/paths.py)
                p = inside(self.generated_dir, f"{item.id}{ext}")
            except PathEscape as e:
                raise MediaError(item.id, "generated image", str(e)) from None
            if p.is_file():
                return open_image(str(p), item.id, "generated image")
        raise MediaError(item.id, "generated image", f"no generated image for this question in {self.generated_dir}")

    def choose(self, item: Item, adapter) -> tuple[int, list[float]]:
        generated = self.generated_image(item, adapter)
        candidates = [open_image(p, item.id, "choice_images") for p in item.choice_images]
        try:
            sims = self.judge.similarities(generated, candidates)
        except ValueError as e:
            raise MediaError(item.id, "clip_model", str(e)) from None
        best = max(range(len(sims)), key=lambda i: (sims[i], -i))  # ties to the first candidate
        return best, sims

    def describe(self) -> dict:
        return {**self.judge.describe(), "generated_dir": str(self.generated_dir) if self.generated_dir else None}
