"""What every model adapter offers: score choices, generate text.

Requests carry the prompt text with images marked by ``IMAGE`` where they belong; an adapter
with no marker in the text puts all images before it (the LLaVA convention). A video item's
sampled frames travel either as images (the frames path) or as one ``Video`` part, which a family
with a native video processor takes through ``videos=`` before the text (``mmbench_lib.models.hf``). Adapters turn
requests into their family's inputs; the likelihood arithmetic lives in ``mmbench_lib.scoring.reference``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from PIL import Image

IMAGE = "<|mmbench:image|>"  # where one image goes in a request's text


def interleave(prompt: str, images) -> list[tuple[str, object]]:
    """The prompt as ``("text", str)`` and ``("image", image)`` pieces in order: each image where its
    ``IMAGE`` marker stands, or all images first when the prompt has no marker."""
    parts = prompt.split(IMAGE)
    if len(parts) - 1 not in (0, len(images)):
        raise ValueError(f"prompt has {len(parts) - 1} image markers but {len(images)} images were given")
    if len(parts) == 1:
        return [("image", im) for im in images] + [("text", prompt)]
    out = []
    for i, part in enumerate(parts):
        if part:
            out.append(("text", part))
        if i < len(images):
            out.append(("image", images[i]))
    return out


@dataclass
class Video:
    """One clip: its sampled frames in time order and, when decoded here, each frame's index in the
    source video (SEED-Bench §3.4 / docs/protocols.md §1.4 item 6: the official 8-frame rule); ``None`` for
    pre-extracted frame folders (SEED-2, v1 ``frames_root``)."""

    frames: list[Image.Image]
    indices: list[int] | None = None
    fps: float | None = None  # frames per second of the clip as sampled (source fps / mean index step); None: unknown


@dataclass
class ScoreRequest:
    """Rank ``continuations`` after ``prompt`` (SEED answer ranking)."""

    id: str
    prompt: str
    continuations: list[str]
    images: list[Image.Image] = field(default_factory=list)
    chat: bool = False  # wrap the prompt in the model's chat template (user turn, then assistant)
    video: Video | None = None  # native video input: the clip goes before the text, after any images


@dataclass
class GenerateRequest:
    id: str
    prompt: str
    images: list[Image.Image] = field(default_factory=list)
    chat: bool = True
    max_new_tokens: int = 128
    video: Video | None = None


@dataclass
class ChoiceScore:
    """Log-likelihood of one continuation: summed and mean over its tokens."""

    sum_logprob: float
    mean_logprob: float
    num_tokens: int


@dataclass
class Generation:
    text: str
    num_tokens: int
    hit_limit: bool  # stopped by max_new_tokens, not by an end token: flagged, not silently scored


@runtime_checkable
class Adapter(Protocol):
    name: str
    sees_images: bool  # False for text-only LLMs: the papers' blind "LLM" baseline row
    can_output_images: bool

    def score_choices(self, requests: list[ScoreRequest]) -> list[list[ChoiceScore]]: ...

    def generate(self, requests: list[GenerateRequest]) -> list[Generation]: ...

    def describe(self) -> dict: ...
