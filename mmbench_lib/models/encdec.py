"""Encoder-decoder vision-language models: BLIP-2 and InstructBLIP with a T5 language model.

This is the SEED-Bench v1 reference recipe (docs/protocols.md §1.4: InstructBLIP-FlanT5 via LAVIS): the
prompt (``Question: {q}\\nAnswer:``) goes to the T5 encoder after the visual query tokens (and,
for InstructBLIP, to the Q-Former too); each choice is scored as **decoder targets**, tokenised
with the T5 tokenizer convention (``</s>`` appended, so EOS is part of the scored sequence), and
the score is the summed token log-likelihood (``mean`` is the HF-wrapper variant, P-S3).

``EncoderDecoderScorer`` encodes once per question (vision tower, Q-Former and T5 encoder), then
decodes all choices as ONE right-padded batch against the shared encoder states; pad positions
are ignored. ``OneAtATimeScorer`` is the plain reference: a full model forward per choice with
``labels`` (what the HF wrapper does), used by the exactness test.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from mmbench_lib.core.requests import IMAGE, ChoiceScore, GenerateRequest, Generation, ScoreRequest
from mmbench_lib.models.batching import BatchedGenerator, BatchPolicy, OneAtATime, stop_ids
from mmbench_lib.models.placement import placement_record
from mmbench_lib.scoring.devices import input_device
from mmbench_lib.scoring.reference import choice_scores


@dataclass
class EncDecPrepared:
    inputs: dict  # processor outputs of the prompt: pixel_values, input_ids, attention_mask (+ qformer_*)
    targets: list[list[int]]  # decoder target ids of each choice (EOS included)


def _image_features(model, inputs: dict):
    kw = {"return_dict": True}
    if "qformer_input_ids" in inputs:  # InstructBLIP: the Q-Former reads the instruction
        kw["qformer_input_ids"] = inputs["qformer_input_ids"]
        kw["qformer_attention_mask"] = inputs.get("qformer_attention_mask")
    return model.get_image_features(inputs["pixel_values"], **kw)


def _decoder_inputs(model, targets: list[list[int]], device):
    """Right-padded targets, teacher-forced decoder inputs (start token + targets[:-1]) and mask."""
    cfg = model.config.get_text_config()
    pad = cfg.pad_token_id if cfg.pad_token_id is not None else 0
    start = cfg.decoder_start_token_id if cfg.decoder_start_token_id is not None else pad
    width = max(len(t) for t in targets)
    labels = torch.full((len(targets), width), pad, dtype=torch.long, device=device)
    dec_in = torch.full((len(targets), width), pad, dtype=torch.long, device=device)
    mask = torch.zeros((len(targets), width), dtype=torch.long, device=device)
    for r, t in enumerate(targets):
        ids = torch.tensor(t, dtype=torch.long, device=device)
        labels[r, : len(t)] = ids
        dec_in[r, 0] = start
        dec_in[r, 1 : len(t)] = ids[:-1]
        mask[r, : len(t)] = 1
    return labels, dec_in, mask


def _token_logprobs(logits, labels, mask) -> list[torch.Tensor]:
    lp = torch.log_softmax(logits.float(), dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1).cpu()
    return [lp[r, : int(mask[r].sum())] for r in range(labels.shape[0])]


class EncoderDecoderScorer:
    """Encode once, decode every choice in one batch (LAVIS's batched targets, summed NLL)."""

    name = "encdec-batched"

    @torch.inference_mode()
    def score(self, model, prepared: EncDecPrepared) -> list[ChoiceScore]:
        keep = [i for i, t in enumerate(prepared.targets) if t]
        out = [torch.zeros(0) for _ in prepared.targets]
        if not keep:
            return choice_scores(out)
        inputs = prepared.inputs
        device = inputs["input_ids"].device
        # 1) encode: vision tower + Q-Former + projection, spliced into the prompt embeddings, T5 encoder
        feats = _image_features(model, inputs)
        embeds = model.get_input_embeddings()(inputs["input_ids"])
        image_mask = model.get_placeholder_mask(inputs["input_ids"], inputs_embeds=embeds)
        embeds = embeds.masked_scatter(image_mask, feats.pooler_output.to(embeds.device, embeds.dtype))
        lm = model.language_model
        encoder_out = lm.get_encoder()(inputs_embeds=embeds, attention_mask=inputs["attention_mask"], return_dict=True)
        # 2) decode all choices as one batch against the shared encoder states
        targets = [prepared.targets[i] for i in keep]
        labels, dec_in, dec_mask = _decoder_inputs(model, targets, device)
        n = len(targets)
        hidden = encoder_out.last_hidden_state.expand(n, -1, -1)
        logits = lm(
            encoder_outputs=(hidden,), attention_mask=inputs["attention_mask"].expand(n, -1),
            decoder_input_ids=dec_in, decoder_attention_mask=dec_mask, return_dict=True,
        ).logits
        for i, lp in zip(keep, _token_logprobs(logits, labels, dec_mask)):
            out[i] = lp
        return choice_scores(out)


class OneAtATimeScorer:
    """Reference: the whole model (``model(**inputs, labels=choice)``) once per choice."""

    name = "encdec-reference"

    @torch.inference_mode()
    def score(self, model, prepared: EncDecPrepared) -> list[ChoiceScore]:
        out = []
        device = prepared.inputs["input_ids"].device
        for t in prepared.targets:
            if not t:
                out.append(torch.zeros(0))
                continue
            labels, _, mask = _decoder_inputs(model, [t], device)
            logits = model(**prepared.inputs, labels=labels).logits
            out.extend(_token_logprobs(logits, labels, mask))
        return choice_scores(out)


ENCDEC_SCORERS = {"reference": EncoderDecoderScorer, "shared-prefix": EncoderDecoderScorer,
                  "encdec-batched": EncoderDecoderScorer, "encdec-reference": OneAtATimeScorer}


class Blip2EncoderDecoder(OneAtATime):
    """BLIP-2 / InstructBLIP with a T5 LM behind ``score_choices`` and ``generate``.

    One image per prompt (the Q-Former takes one); ``IMAGE`` markers are removed, since the query
    tokens always come first. ``chat`` is ignored: these models have no chat template, the SEED
    prompt is plain text. The decoder-only scorers (``reference``, ``shared-prefix``) map to the
    batched encoder-decoder scorer, which is exact (the decoder is causal, pads are masked).
    """

    sees_images = True
    can_output_images = False
    max_images = 1

    def __init__(self, model, processor, name: str, scorer: str = "reference", append_eos: bool = True, info=None):
        self.model = model.eval()
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.name = name
        if scorer not in ENCDEC_SCORERS:
            raise ValueError(f"unknown scorer {scorer!r} for an encoder-decoder model; available: {sorted(ENCDEC_SCORERS)}")
        self.scorer = ENCDEC_SCORERS[scorer]()
        self.append_eos = append_eos  # the T5 convention (LAVIS): </s> is scored
        self.info = dict(info or {})
        self.device = input_device(model)
        self.family = getattr(model.config, "model_type", "blip-2")

    def prefix_inputs(self, prompt: str, images) -> dict:
        images = list(images)
        if len(images) != 1:
            raise ValueError(f"{self.family} (encoder-decoder) takes exactly 1 image per prompt, got {len(images)}")
        try:
            enc = self.processor(images=images, text=prompt.replace(IMAGE, ""), return_tensors="pt")
        except Exception as e:  # noqa: BLE001
            raise ValueError(f"{self.family} processor rejected the prompt: {type(e).__name__}: {e}") from e
        dtype = next(self.model.parameters()).dtype
        return {k: (v.to(self.device).to(dtype) if v.is_floating_point() else v.to(self.device))
                for k, v in dict(enc).items()}

    def continuation_ids(self, text: str) -> list[int]:
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        if self.append_eos and self.tokenizer.eos_token_id is not None:
            ids.append(self.tokenizer.eos_token_id)
        return ids

    def prepare(self, request: ScoreRequest) -> EncDecPrepared:
        return EncDecPrepared(self.prefix_inputs(request.prompt, request.images),
                              [self.continuation_ids(c) for c in request.continuations])

    def score_choices(self, requests: list[ScoreRequest]) -> list[list[ChoiceScore]]:
        return [self.scorer.score(self.model, self.prepare(r)) for r in requests]

    #: finished rows stay in their batch: one ``generate`` call per batch
    row_drop_unsupported = "encoder-decoder: each batch is one generate call (finished rows are not dropped)"

    def generate_ids(self, requests: list[GenerateRequest], batched: bool = True) -> list[list[int]]:
        if not batched or len(requests) < 2:
            return self.generate_ids_one_at_a_time(requests)
        if getattr(self, "generator", None) is None:
            self.generator = BatchedGenerator(BatchPolicy())
        return self.generator.run(self, requests)

    def reference_inputs(self, r: GenerateRequest) -> dict:
        """One request's encoder inputs for the reference generation (``batching.OneAtATime``)."""
        return self.prefix_inputs(r.prompt, r.images)

    def finish(self, r: GenerateRequest, new: list[int]) -> Generation:
        eos = self.tokenizer.eos_token_id
        ended = eos in new
        if ended:
            new = new[: new.index(eos) + 1]
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        return Generation(text=text.strip(), num_tokens=len(new), hit_limit=len(new) >= r.max_new_tokens and not ended)

    def render(self, r: GenerateRequest):
        images = list(r.images)
        if len(images) != 1:
            raise ValueError(f"{self.family} (encoder-decoder) takes exactly 1 image per prompt, got {len(images)}")
        return r.prompt.replace(IMAGE, ""), images, None

    def encode_batch(self, texts, images, key=None) -> dict:
        enc = self.processor(images=[row[0] for row in images], text=texts, return_tensors="pt", padding=True)
        dtype = next(self.model.parameters()).dtype
        return {k: (v.to(self.device).to(dtype) if v.is_floating_point() else v.to(self.device))
                for k, v in dict(enc).items()}

    def stops(self) -> set[int]:
        return stop_ids(self.model.language_model, self.tokenizer)  # generate runs the LM's own generate

    def pad_id(self) -> int:
        return self.tokenizer.pad_token_id

    def describe(self) -> dict:
        return {
            "adapter": type(self).__name__, "name": self.name, "family": self.family, "scorer": self.scorer.name,
            "append_eos": self.append_eos, "dtype": str(next(self.model.parameters()).dtype),
            **placement_record(self.model, self.device),
            "image_placement": "one image, its query tokens first; image markers in the prompt are removed",
            "generation": {"mode": "batched", **(self.generator.policy if getattr(self, "generator", None)
                                                 else BatchPolicy()).describe(),
                           "chunk": 0, "chunk_note": self.row_drop_unsupported},
            **self.info,
        }
