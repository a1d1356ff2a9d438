"""Transformers adapters: a text-only causal LM and image-text-to-text (LLaVA-style) models.

Both are decoder-only: ``prepare`` builds the prefix inputs with the family's processor and
chat template, the configured scorer (``mmbench_lib.scoring.reference``) does the likelihood arithmetic.
"""
from __future__ import annotations

import torch

from mmbench_lib.scoring import Prepared, get_scorer
from mmbench_lib.core.requests import IMAGE, ChoiceScore, Generation, GenerateRequest, ScoreRequest, interleave


def pick_device(device: str = "auto") -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def pick_dtype(dtype: str | None, device: str) -> torch.dtype:
    """fp32 on CPU; bf16 on GPUs (fp16 where bf16 is unsupported) unless asked otherwise."""
    if dtype not in (None, "auto"):
        return getattr(torch, dtype)
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


class DecoderOnlyAdapter:
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
        self.device = next(model.parameters()).device

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
        inputs = self.prefix_inputs(request.prompt, request.images, request.chat)
        return Prepared(
            inputs=inputs,
            continuations=[self.continuation_ids(c) for c in request.continuations],
            extend=self.extend_rules(),
        )

    def score_choices(self, requests: list[ScoreRequest]) -> list[list[ChoiceScore]]:
        if hasattr(self.scorer, "score_many"):  # batches questions together (mmbench_lib.scoring.engine)
            return self.scorer.score_many(self.model, [self.prepare(r) for r in requests])
        return [self.scorer.score(self.model, self.prepare(r)) for r in requests]

    @torch.inference_mode()
    def generate(self, requests: list[GenerateRequest]) -> list[Generation]:
        out = []
        eos = self.tokenizer.eos_token_id
        for r in requests:
            inputs = self.prefix_inputs(r.prompt, r.images, r.chat, generation=True)
            gen = self.model.generate(
                **inputs, max_new_tokens=r.max_new_tokens, do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos,
            )
            new = gen[0, inputs["input_ids"].shape[1]:].tolist()
            ended = bool(new) and new[-1] == eos
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            out.append(Generation(text=text.strip(), num_tokens=len(new), hit_limit=len(new) >= r.max_new_tokens and not ended))
        return out

    def describe(self) -> dict:
        return {
            "adapter": type(self).__name__, "name": self.name, "scorer": self.scorer.name,
            "append_eos": self.append_eos, "dtype": str(next(self.model.parameters()).dtype),
            "device": str(self.device), **self.info,
        }

    def _to_device(self, batch) -> dict:
        out = {}
        for k, v in dict(batch).items():
            if isinstance(v, torch.Tensor):
                v = v.to(self.device)
                if v.is_floating_point():
                    v = v.to(next(self.model.parameters()).dtype)
            out[k] = v
        return out


class HFCausalLM(DecoderOnlyAdapter):
    """Any transformers causal LM. It sees only the text: image markers are dropped, which is
    the papers' blind "LLM" baseline row (SEED Table 3, MMMU Table 2 "Text-only LLMs")."""

    def prefix_inputs(self, prompt, images, chat, generation=False):
        text = prompt.replace(IMAGE, "")
        if chat and self.tokenizer.chat_template:
            text = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
            )
            enc = self.tokenizer(text, add_special_tokens=False, return_tensors="pt")
        else:
            enc = self.tokenizer(text, return_tensors="pt")
        return self._to_device(enc)


class ImageTextToText(DecoderOnlyAdapter):
    """Vision-language models behind transformers' processor + chat template (LLaVA-1.5 style).

    Images go where ``IMAGE`` markers stand in the prompt, in order; with no marker they all
    go before the text, as LLaVA's ``<image>\\n{question}`` convention does.
    """

    sees_images = True

    def __init__(self, model, processor, name: str, **kw):
        super().__init__(model, processor.tokenizer, name, **kw)
        self.processor = processor

    def _segments(self, prompt: str, images) -> list[dict]:
        """Chat-template content parts: ``{"type": "image"}`` where each image goes."""
        return [{"type": "image"} if kind == "image" else {"type": "text", "text": v} for kind, v in interleave(prompt, images)]

    def prefix_inputs(self, prompt, images, chat, generation=False):
        content = self._segments(prompt, images)
        if chat:
            text = self.processor.apply_chat_template(
                [{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True
            )
        else:
            token = self.processor.image_token
            text = "".join(c["text"] if c["type"] == "text" else token + ("\n" if len(images) == 1 else "") for c in content)
        enc = self.processor(text=text, images=list(images) or None, return_tensors="pt")
        return self._to_device(enc)

    def extend_rules(self) -> dict:
        return {"attention_mask": 1, "token_type_ids": 0, "mm_token_type_ids": 0}
