"""Transformers adapters: a text-only causal LM and image-text-to-text (LLaVA-style) models.

Both are decoder-only: ``prepare`` builds the prefix inputs with the family's processor and
chat template, the configured scorer (``mmbench_lib.scoring.reference``) does the likelihood arithmetic.
``generate`` batches requests (``mmbench_lib.models.batching``: left padding, the processor's own
image batching, finished rows dropped between decode chunks) unless the family sets
``batch_unsupported`` (then one ``generate`` call per request, the reason in ``describe()``).
A request's ``Video`` reaches a family with native video through ``videos=`` (``video_input``); the others
never receive one (the pipeline sends their frames as images).
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import torch

from mmbench_lib.core.requests import IMAGE, ChoiceScore, Generation, GenerateRequest, ScoreRequest, Video, interleave
from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy, OneAtATime, is_oom, stop_ids, stop_kwargs
from mmbench_lib.models.cpu.kv_decode import kv_decode_reason
from mmbench_lib.models.settings import NONE as NO_SETTINGS
from mmbench_lib.models.placement import pick_device, placement_record  # noqa: F401 - pick_device: loaders
from mmbench_lib.scoring import get_scorer, hf_internals
from mmbench_lib.scoring.devices import input_device, to_device
from mmbench_lib.scoring.reference import Prepared


_LOCKS = threading.Lock()  # creates each adapter's preparation lock once


def pick_dtype(dtype: str | None, device: str, said: str | None = None) -> torch.dtype:
    """fp32 on CPU; on GPUs the 16-bit dtype the checkpoint's config names (``said``: LLaVA-1.5's weights are
    fp16, and bf16 would drop 3 bits of each), else bf16 (fp16 where bf16 is unsupported); unless asked otherwise."""
    if dtype not in (None, "auto"):
        return getattr(torch, dtype)
    if device.startswith("cuda"):
        if said == "float16" or (said == "bfloat16" and torch.cuda.is_bf16_supported()):
            return getattr(torch, said)
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


class DecoderOnlyAdapter(OneAtATime):
    """Shared machinery: scoring through a scorer, greedy generation, continuation tokens."""

    sees_images = False
    can_output_images = False

    def __init__(self, model, tokenizer, name: str, scorer: str = "reference", append_eos: bool = False, info=None):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name
        self.scorer = get_scorer(scorer)
        self.append_eos = append_eos
        self.info = dict(info or {})
        self.device = input_device(model)  # a model spread over devices: where its embeddings run

    # -- to be provided by each family
    def prefix_inputs(self, prompt: str, images, chat: bool, generation: bool = False) -> dict:
        raise NotImplementedError

    def continuation_ids(self, text: str) -> list[int]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if self.append_eos and self.tokenizer.eos_token_id is not None:
            ids = ids + [self.tokenizer.eos_token_id]
        return list(ids)

    def extend_rules(self) -> dict:
        return {"attention_mask": 1}

    def prepare(self, request: ScoreRequest) -> Prepared:
        inputs = self.prefix_inputs(request.prompt, request.images, request.chat, **self.video_kw(request))
        return Prepared(
            inputs=inputs,
            continuations=[self.continuation_ids(c) for c in request.continuations],
            extend=self.extend_rules(),
        )

    def score_choices(self, requests: list[ScoreRequest]) -> list[list[ChoiceScore]]:
        prepared = [self._take_prepared(r) for r in requests]
        if hasattr(self.scorer, "score_many"):  # batches questions together (mmbench_lib.scoring.engine)
            return self.scorer.score_many(self.model, prepared)
        return [self.scorer.score(self.model, p) for p in prepared]

    #: requests prepared ahead (``prefetch``) and not scored yet; at most this many are kept
    PREFETCH_KEEP = 1024

    def prefetch(self, requests: list[ScoreRequest]) -> None:
        """Prepare ``requests`` now (the run loop calls this from a worker thread for the next batch while
        the model scores the current one); ``score_choices`` then takes them as they are. Each preparation
        holds a lock (a tokenizer is not safe to share between threads); taking a prepared one does not."""
        locks = self._locks()
        for r in requests:
            with locks[0]:
                p = self.prepare(r)
            with locks[1]:
                self._prefetched[id(r)] = (r, p)
                while len(self._prefetched) > self.PREFETCH_KEEP:
                    self._prefetched.popitem(last=False)

    def _locks(self) -> tuple[threading.Lock, threading.Lock]:
        """(preparing, the prefetched dict), made once per adapter."""
        with _LOCKS:
            if "_prefetch_locks" not in self.__dict__:
                self._prefetch_locks, self._prefetched = (threading.Lock(), threading.Lock()), OrderedDict()
        return self._prefetch_locks

    def _take_prepared(self, r: ScoreRequest) -> Prepared:
        prep, table = self._locks()
        with table:
            hit = self._prefetched.pop(id(r), None)
        if hit is not None and hit[0] is r:
            return hit[1]
        with prep:
            return self.prepare(r)

    #: why batched generation cannot reproduce one-at-a-time outputs for this family (None: it can)
    batch_unsupported: str | None = None
    #: processor keywords, system prompt, chat-template keywords, stop strings (``models.settings``)
    settings = NO_SETTINGS
    #: why the last batched call fell back to one request at a time (None: it did not); in ``describe()``
    batch_fallback: str | None = None
    #: why finished rows cannot leave a batch between decode chunks (None: they can); one generate call per batch
    row_drop_unsupported: str | None = None

    def generate_ids(self, requests: list[GenerateRequest], batched: bool = True) -> list[list[int]]:
        """The new token ids of each request (what ``generate`` decodes)."""
        if not batched or self.batch_unsupported or len(requests) < 2:
            return self.generate_ids_one_at_a_time(requests)
        try:
            return self.generator.run(self, requests)
        except Exception as e:  # noqa: BLE001 - out-of-memory is the generator's; anything else: the reference path
            if is_oom(e):
                raise
            why = f"batched generation raised {type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"
            out = self.generate_ids_one_at_a_time(requests)  # raises too: the error is the model's, not the batch's
            self.batch_fallback = why
            return out

    @property
    def generator(self) -> BatchedGenerator:
        if getattr(self, "_generator", None) is None:
            self._generator = BatchedGenerator(BatchPolicy())
        return self._generator

    @generator.setter
    def generator(self, value: BatchedGenerator) -> None:
        self._generator = value

    def kv_decode_reason(self) -> str | None:
        """Why batched generation cannot take the kv-decode path (None: it can; ``models.cpu.kv_decode``)."""
        if self.row_drop_unsupported:
            return self.row_drop_unsupported
        return kv_decode_reason(self.model, vlm=self.sees_images)

    def pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return pad if pad is not None else self.tokenizer.eos_token_id

    def stops(self) -> set[int]:
        return stop_ids(self.model, self.tokenizer)

    def finish(self, r: GenerateRequest, new: list[int]) -> Generation:
        """A response from its new tokens."""
        ended = bool(new) and new[-1] == self.tokenizer.eos_token_id
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        if self.settings.stop_strings and self.settings.cut(text)[1]:  # the tokens up to the first stop string
            k = next(k for k in range(1, len(new) + 1)
                     if self.settings.cut(self.tokenizer.decode(new[:k], skip_special_tokens=True))[1])
            return Generation(text=self.settings.cut(text)[0].strip(), num_tokens=k, hit_limit=False)
        return Generation(text=text.strip(), num_tokens=len(new), hit_limit=len(new) >= r.max_new_tokens and not ended)

    def reference_inputs(self, r: GenerateRequest) -> dict:
        """One request's prompt inputs for the reference generation (``batching.OneAtATime``)."""
        return self.prefix_inputs(r.prompt, r.images, r.chat, generation=True, **self.video_kw(r))

    def reference_kwargs(self, prompt_width: int) -> dict:
        # stop strings end generation (batching.ResponseStops)
        return {"pad_token_id": self.pad_id(), **stop_kwargs(self, prompt_width)}

    # -- batched generation: each family renders one request's text and encodes a batch of them
    def render(self, r: GenerateRequest) -> tuple[str, list, object]:
        """``(text, images, key)``: requests batch together only with equal keys."""
        raise NotImplementedError

    def encode_batch(self, texts: list[str], images: list[list], key=None) -> dict:
        raise NotImplementedError

    def video_kw(self, request) -> dict:
        """``{"video": clip}`` for a request carrying a native clip; only a native-video adapter takes one."""
        if request.video is None:
            return {}
        if getattr(self, "video_input", "frames") != "native":
            raise ValueError(f"{self.name} takes video frames as images, not a Video part: "
                             f"{getattr(self, 'native_video_reason', lambda: 'no video processor')()}")
        return {"video": request.video}

    def ranking_call_size(self, requested: int) -> int:
        """Questions per ``score_choices`` call of a run: the engine sizes it from free memory on CUDA
        (``SharedPrefixScorer.questions_per_call``); ``requested`` elsewhere. ``describe()`` records it."""
        size = getattr(self.scorer, "questions_per_call", lambda model, n: n)(self.model, requested)
        self._ranking_calls = {"batch_size_requested": requested, "questions_per_call": size}
        return size

    def ranking_description(self) -> dict:
        """The ranking path: the engine's settings on this model, questions per call, the prefetching loop."""
        d = {"device": str(self.device), "attn_implementation": hf_internals.attn_implementation(self.model)}
        if hasattr(self.scorer, "describe"):
            d.update(self.scorer.describe(self.model))
        d.update(getattr(self, "_ranking_calls", {}))
        d["prefetch"] = "batch k+1 prepared (processor, chat template, tokens) in a worker thread while batch k runs"
        return d

    def describe(self) -> dict:
        return {
            "adapter": type(self).__name__, "name": self.name, "scorer": self.scorer.name,
            "append_eos": self.append_eos, "dtype": str(next(self.model.parameters()).dtype),
            **({"settings": self.settings.describe()} if self.settings else {}),
            **placement_record(self.model, self.device), "generation": self.generation_mode(),
            "ranking": self.ranking_description(), **self.info,
        }

    def generation_mode(self) -> dict:
        if self.batch_unsupported:
            return {"mode": "one request at a time", "reason": self.batch_unsupported}
        if self.batch_fallback:
            return {"mode": "one request at a time (fallback)", "reason": self.batch_fallback}
        d = {"mode": "batched", **self.generator.policy.on(self.device).describe()}
        reason = self.generator.kv_reason(self)
        if reason is None:
            d["decoder"] = "kv-decode (shared prefix, continuous batching, one forward per step)"
            d.update(self.generator.paths(self))
        else:
            d.update(decoder="generate in chunks", decoder_note=reason)
        if self.row_drop_unsupported:
            d.update(chunk=0, chunk_note=self.row_drop_unsupported)
        return d

    def _to_device(self, batch) -> dict:
        out = {}
        for k, v in dict(batch).items():
            if isinstance(v, torch.Tensor):
                v = to_device(v, self.device)  # pinned, not blocking the host, on a GPU
                if v.is_floating_point():
                    v = v.to(next(self.model.parameters()).dtype)
            out[k] = v
        return out


class HFCausalLM(DecoderOnlyAdapter):
    """Any transformers causal LM. It sees only the text: image markers are dropped, which is
    the papers' blind "LLM" baseline row (SEED Table 3, MMMU Table 2 "Text-only LLMs")."""

    def _text(self, prompt, chat) -> tuple[str, bool]:
        """The model's text and whether the tokenizer adds its special tokens."""
        text = prompt.replace(IMAGE, "")
        if chat and self.tokenizer.chat_template:
            text = self.tokenizer.apply_chat_template(
                self.settings.messages(text), tokenize=False, add_generation_prompt=True,
                **self.settings.chat_template_kwargs)
            return text, False
        return text, True

    def prefix_inputs(self, prompt, images, chat, generation=False):
        text, special = self._text(prompt, chat)
        return self._to_device(self.tokenizer(text, add_special_tokens=special, return_tensors="pt"))

    def render(self, r):
        text, special = self._text(r.prompt, r.chat)
        return text, [], special

    def encode_batch(self, texts, images, key=True):
        enc = self.tokenizer(texts, add_special_tokens=key, return_tensors="pt", padding=True, padding_side="left")
        return self._to_device(enc)

    def token_ids(self, text: str, key=True) -> list[int]:
        """A rendered prompt's token ids, as ``prefix_inputs`` tokenises it (kv-decode path)."""
        return list(self.tokenizer(text, add_special_tokens=key)["input_ids"])


class ImageTextToText(DecoderOnlyAdapter):
    """Vision-language models behind transformers' processor + chat template (LLaVA-1.5 style).

    Images go where ``IMAGE`` markers stand in the prompt, in order; with no marker they all
    go before the text, as LLaVA's ``<image>\\n{question}`` convention does.
    """

    sees_images = True
    #: the family takes a clip through its processor's ``videos=`` and video token (set per family)
    native_video = False
    video_requested = "native"  # "native" or "frames" (``set_video_input``)

    def __init__(self, model, processor, name: str, **kw):
        super().__init__(model, processor.tokenizer, name, **kw)
        self.processor = processor

    # -- video input: native clip or frames as images
    def native_video_reason(self) -> str | None:
        """Why this adapter cannot take a clip natively (None: it can)."""
        if not self.native_video:
            return f"{getattr(self, 'family', type(self).__name__)} has no native video path here"
        if getattr(self.processor, "video_processor", None) is None or not getattr(self.processor, "video_token", None):
            return f"{type(self.processor).__name__} has no video processor or video token"
        return None

    def set_video_input(self, mode: str) -> str:
        """Ask for ``"native"`` or ``"frames"``; returns the path used (frames where native is unsupported)."""
        if mode not in ("native", "frames"):
            raise ValueError(f"video_input must be 'native' or 'frames', got {mode!r}")
        self.video_requested = mode
        return self.video_input

    @property
    def video_input(self) -> str:
        return "native" if self.video_requested == "native" and self.native_video_reason() is None else "frames"

    def video_description(self) -> dict:
        """What ``describe()`` records about video: the path used and, when native was refused, why."""
        d = {"video_input": self.video_input}
        if self.video_requested == "native" and self.video_input != "native":
            d["video_input_note"] = f"native requested; {self.native_video_reason()}: frames passed as images"
        return d

    def _video_text(self) -> str:
        return self.processor.video_token + "\n"  # LLaVA convention, as for one image

    def _segments(self, prompt: str, images, video=None) -> list[dict]:
        """Chat-template content parts: ``{"type": "image"}`` where each image goes, a clip first."""
        parts = [{"type": "image"} if kind == "image" else {"type": "text", "text": v} for kind, v in interleave(prompt, images)]
        return ([{"type": "video"}] if video is not None else []) + parts

    def _text(self, prompt, images, chat, video=None) -> str:
        content = self._segments(prompt, images, video)
        if chat:
            return self.processor.apply_chat_template(
                self.settings.messages(content), tokenize=False, add_generation_prompt=True,
                **self.settings.chat_template_kwargs)
        token = self.processor.image_token
        return "".join(c["text"] if c["type"] == "text" else self._video_text() if c["type"] == "video"
                       else token + ("\n" if len(images) == 1 else "") for c in content)

    def _videos(self, clips) -> dict:
        """Processor keywords for clips: each one video of its frames, never re-sampled by the processor, with
        its frame rate (Qwen2.5-VL's temporal positions are in seconds; unknown: the processor's default) and the
        frames' indices in the clip (Qwen3-VL writes each temporal patch's time, index / fps, before it)."""
        clips = [c for c in clips if c is not None]
        if not clips:
            return {}
        return {"videos": [list(c.frames) for c in clips], "do_sample_frames": False,  # Qwen3-VL: timestamps from
                "video_metadata": [{"total_num_frames": len(c.frames), "fps": c.fps,  # the clip's frame indices
                                    "frames_indices": list(range(len(c.frames)))} for c in clips]}

    def prefix_inputs(self, prompt, images, chat, generation=False, video=None):
        text = self._text(prompt, images, chat, video)
        enc = self.processor(text=text, images=list(images) or None, return_tensors="pt", **self._videos([video]),
                             **self.settings.processor_kwargs)
        return self._to_device(enc)

    def render(self, r):
        """A clip travels as the first entry of the media list; video rows batch only with video rows."""
        media = ([r.video] if r.video is not None else []) + list(r.images)
        return self._text(r.prompt, r.images, r.chat, self.video_kw(r).get("video")), media, \
            ("video" if r.video is not None else None)

    @staticmethod
    def _split_media(rows) -> tuple[list, list]:
        """A batch's media rows as (still images, clips), each flat in row order."""
        flat = [m for row in rows for m in row]
        return [m for m in flat if not isinstance(m, Video)], [m for m in flat if isinstance(m, Video)]

    def encode_batch(self, texts, images, key=None):
        """One processor call for the batch: left-padded text, the images of each row in order."""
        flat, clips = self._split_media(images)
        enc = self.processor(text=texts, images=flat or None, return_tensors="pt", padding=True, padding_side="left",
                             **self._videos(clips), **self.settings.processor_kwargs)
        return self._to_device(enc)

    def describe(self) -> dict:
        return {**super().describe(), **self.video_description()}

    def extend_rules(self) -> dict:
        return {"attention_mask": 1, "token_type_ids": 0, "mm_token_type_ids": 0}
