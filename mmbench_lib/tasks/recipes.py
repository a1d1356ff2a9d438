"""How an item becomes a ranking request: prompt template, continuation form, chat wrapping.

Every number the suite reports names the recipe that produced it (docs/protocols.md §2.6 P-T1: SEED-Bench-2 has
no single official recipe). ``seed1-ppl`` is the v1 reference (InstructBLIP via LAVIS):
prompt ``Question: {q}\\nAnswer:``, the choice *content* as continuation, summed NLL.
The SEED leaderboard also accepts "PPL for A/B/C/D" (``qwen-vl-letters``: the options listed in
the prompt, the letters ranked) and lmms-eval's ``seedbench_ppl`` (``lmms-eval-ppl``), docs/protocols.md §1.4.

Generated letters (``continuation="generate"``, NOT a paper protocol): the model *writes* an answer to
the question with its options listed, and a letter is read out of the text the way lmms-eval
(``lmms-eval-gen``: its ``seedbench`` prompt, first character) or VLMEvalKit (``vlmevalkit-gen``: its
multiple-choice prompt, exact matching) do; ``mmbench_lib.tasks.letters`` holds the extraction rules.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from mmbench_lib.core.items import Item
from mmbench_lib.core.requests import IMAGE, GenerateRequest, ScoreRequest, Video


@dataclass(frozen=True)
class Recipe:
    name: str = "seed1-ppl"
    prompt: str = "Question: {question}\nAnswer:"
    separator: str = " "  # put between the prompt and each choice's content
    chat: bool = False  # wrap the prompt in the model's chat template (LLaVA wrapper style)
    reduction: str | None = "sum"  # which log-likelihood reduction decides: "sum" or "mean" (None: generated answers)
    image_size: int = 0  # >0: squash each image to NxN (bicubic, no crop) before the processor, as the reference wrappers do
    continuation: str = "content"  # "content": each choice's text is ranked; "letter": its option letter (A, B, ...);
    # "generate": no ranking, the model writes an answer and ``extractor`` reads a letter out of it (non-paper)
    extractor: str = ""  # generated answers only: "lmms-eval" or "vlmevalkit" (mmbench_lib.tasks.letters)

    @property
    def generates(self) -> bool:
        return self.continuation == "generate"

    def to_dict(self) -> dict:
        return asdict(self)


RECIPES = {
    # the SEED v1 reference preprocessing too: images bicubic-resized to 224x224 with no crop (docs/protocols.md §1.4 item 4)
    "seed1-ppl-lavis224": Recipe(name="seed1-ppl-lavis224", image_size=224),
    # SEED-2 LLaVA-1.5 wrapper with its preprocessing: bicubic 336x336, no crop (docs/protocols.md §2.4)
    "llava-chat-336": Recipe(name="llava-chat-336", prompt="{question}", separator=" ", chat=True, reduction="mean", image_size=336),
    # SEED v1 reference recipe (docs/protocols.md §1.4): summed log-likelihood of the choice content
    "seed1-ppl": Recipe(),
    # SEED-2 LLaVA-1.5 wrapper (docs/protocols.md §2.4): question as the user turn, the candidate as the
    # assistant's answer, no options and no "Answer:", mean token NLL
    "llava-chat": Recipe(name="llava-chat", prompt="{question}", separator=" ", chat=True, reduction="mean"),
    # Qwen-VL's SEED recipe, leaderboard "PPL for A/B/C/D" (docs/protocols.md §1.4): options in the prompt, the
    # letters " A" ... " D" ranked by mean NLL (one token each with most tokenizers)
    "qwen-vl-letters": Recipe(name="qwen-vl-letters", prompt="Question: {question}\nOptions: {options}\nAnswer:",
                              separator=" ", reduction="mean", continuation="letter"),
    # lmms-eval seedbench_ppl (docs/protocols.md §1.4): "{question} Answer :" + the choice contents, summed
    "lmms-eval-ppl": Recipe(name="lmms-eval-ppl", prompt="{question} Answer :"),
    # NOT a paper protocol. lmms-eval seedbench (generate_until, docs/protocols.md §1.4 / P-S8): the question, the
    # "A. ..." lines, the instruction; the first character of the stripped answer is the letter
    "lmms-eval-gen": Recipe(name="lmms-eval-gen", prompt="{question}\n{options}\nAnswer with the option's letter "
                            "from the given choices directly.", separator="", chat=True, reduction=None,
                            continuation="generate", extractor="lmms-eval"),
    # MMBench's official prompt: VLMEvalKit ImageMCQDataset.build_prompt (vlmeval/dataset/image_mcq.py at e8e78f05) with
    # the hint line when the item has one, its trailing " \n" dropped as vlmevalkit-gen does; exact matching (can_infer)
    "mmbench-gen": Recipe(name="mmbench-gen", prompt="{hint}Question: {question}\nOptions:\n{options}\nPlease select the "
                          "correct answer from the options above.", separator="", chat=True, reduction=None,
                          continuation="generate", extractor="vlmevalkit"),
    # MMBench by ranking (no official ranking recipe): the same prompt ending in "Answer:", the letters ranked by mean NLL
    "mmbench-letters": Recipe(name="mmbench-letters", prompt="{hint}Question: {question}\nOptions:\n{options}\nAnswer:",
                              separator=" ", reduction="mean", continuation="letter"),
    # NOT a paper protocol. VLMEvalKit's multiple-choice prompt (ImageMCQDataset.build_prompt, no hint; its
    # trailing " \n" dropped, as most of its model wrappers strip it) and exact matching (can_infer)
    # NOT a paper protocol for SEED; MMStar's generation protocol: lmms-eval's mmstar prompt (the question as the
    # file writes it, options inline, then its post_prompt) and MMStar's official rule (letters.mmstar_letter)
    "mmstar-gen": Recipe(name="mmstar-gen", prompt="{question}{options_as_written}\nAnswer with the option's letter "
                         "from the given choices directly.", separator="", chat=True, reduction=None, continuation="generate",
                         extractor="mmstar"),
    "vlmevalkit-gen": Recipe(name="vlmevalkit-gen", prompt="Question: {question}\nOptions:\n{options}\nPlease select "
                             "the correct answer from the options above.", separator="", chat=True, reduction=None,
                             continuation="generate", extractor="vlmevalkit"),
}


#: the recipe a run uses when none is named: the SEED v1 reference recipe
DEFAULT_RECIPE = "seed1-ppl"


def get_recipe(name: str | Recipe = DEFAULT_RECIPE, **overrides) -> Recipe:
    if isinstance(name, Recipe):
        base = name
    else:
        try:
            base = RECIPES[name]
        except KeyError:
            raise ValueError(f"unknown recipe {name!r}; available: {sorted(RECIPES)}") from None
    if overrides:
        base = Recipe(**{**base.to_dict(), **{k: v for k, v in overrides.items() if v is not None}})
    return base


def question_text(item: Item) -> str:
    """The question with the benchmark's image placeholder turned into the adapters' marker."""
    if item.image_marker and item.image_marker in item.question:
        return item.question.replace(item.image_marker, IMAGE)
    return item.question


def paper_preprocess(images, size: int):
    """Bicubic resize of each image to ``size x size`` with no crop (aspect ratio not kept), the
    reference wrappers' preprocessing; the processor's own normalisation still applies after it."""
    from PIL import Image

    return [im.resize((size, size), Image.BICUBIC) for im in images] if size else list(images)


def hint_text(item: Item) -> str:
    """``Hint: {hint}\n`` of an item with a hint (``meta["hint"]``, MMBench), else empty: the ``{hint}`` field."""
    hint = item.meta.get("hint")
    return f"Hint: {hint}\n" if hint else ""


def options_as_written(item: Item) -> str:
    """The options as the data file writes them after the question, separator included (``meta["options_as_written"]``:
    MMStar's inline ``\nOptions: A: ...``), else a newline and the ``A. ...`` lines."""
    return item.meta.get("options_as_written") or f"\n{options_text(item)}"


def prompt_text(item: Item, recipe: Recipe) -> str:
    """A recipe's prompt for ``item``: ``{question}``, ``{options}``, ``{options_as_written}`` and ``{hint}`` filled in."""
    return recipe.prompt.format(question=question_text(item), options=options_text(item),
                                options_as_written=options_as_written(item) if "{options_as_written}" in recipe.prompt else "",
                                hint=hint_text(item))


def options_text(item: Item) -> str:
    """``A. first\nB. second ...``: the options block of the letter recipes."""
    return "\n".join(f"{letter}. {choice}" for letter, choice in zip(item.letters, item.choices))


def score_request(item: Item, recipe: Recipe, images=(), video: Video | None = None) -> ScoreRequest:
    if recipe.continuation not in ("content", "letter"):
        raise ValueError(f"recipe {recipe.name!r}: continuation must be 'content' or 'letter', got {recipe.continuation!r}")
    answers = item.letters if recipe.continuation == "letter" else item.choices
    return ScoreRequest(
        id=item.id,
        prompt=prompt_text(item, recipe),
        continuations=[recipe.separator + a for a in answers],
        images=list(images),
        chat=recipe.chat,
        video=video,
    )


def generate_request(item: Item, recipe: Recipe, images=(), max_new_tokens: int = 32,
                     video: Video | None = None) -> GenerateRequest:
    """The request of a generated-letter recipe: the prompt with the options listed, greedy decoding."""
    if not recipe.generates:
        raise ValueError(f"recipe {recipe.name!r} ranks choices; it makes no generation request")
    return GenerateRequest(item.id, prompt_text(item, recipe),
                           list(images), chat=recipe.chat, max_new_tokens=max_new_tokens, video=video)


# --------------------------------------------------------------------------------------------- protocols

@dataclass(frozen=True)
class Protocol:
    """One way to turn a model into an answer. Ranking benchmarks: ``recipe`` names the run it reads and
    ``view`` how the answer is read from it (``sum`` / ``mean``: the choice with the highest stored
    log-likelihood under that reduction; ``lmms-eval`` / ``vlmevalkit``: that extractor's stored letter).
    Generation benchmarks: ``rescore`` holds the keyword arguments of ``rescoring.score_responses``
    (``Task.parser_variants``) and ``prompt_mode`` the prompt mode of the run it reads (``tasks.modes``; a mode
    is one more generation protocol: :func:`mode_protocol`). Used by ``mmbench_lib.reports.protocol``."""

    key: str
    label: str
    kind: str  # where it comes from: the paper, a leaderboard, a harness; "NOT a paper protocol" said so
    recipe: str = ""
    view: str = ""
    rescore: dict = field(default_factory=dict)
    prompt_mode: str = "official"


def mode_protocol(mode) -> Protocol:
    """A generation prompt mode (``tasks.modes.PromptMode``) as a protocol of the sensitivity report: its run read
    by the official parser (through the answer line where the mode says so)."""
    kind = ("paper: " if mode.official else "NOT official: ") + mode.source
    return Protocol(mode.key, f"{mode.key} prompt" if mode.key != "official" else "official", kind, prompt_mode=mode.key)


RANKING_PROTOCOLS = {p.key: p for p in (
    Protocol("content-sum", "content, sum", "paper: SEED-Bench §3.4 reference (LAVIS), summed NLL of the choice "
             "content", "seed1-ppl", "sum"),
    Protocol("content-mean", "content, mean", "official wrappers: HF InstructBLIP / SEED-2 LLaVA, Qwen (docs/protocols.md §1.6 P-S3), "
             "mean NLL", "seed1-ppl", "mean"),
    Protocol("letters", "letters ranked", "leaderboard 'PPL for A/B/C/D' (Qwen-VL recipe): options in the prompt, "
             "letters ranked by mean NLL", "qwen-vl-letters", "mean"),
    Protocol("lmms-eval-ppl", "lmms-eval PPL", "harness: lmms-eval seedbench_ppl, '{q} Answer :' + content, summed",
             "lmms-eval-ppl", "sum"),
    Protocol("gen-lmms-eval", "generated, lmms-eval", "NOT a paper protocol: generated answer, lmms-eval seedbench "
             "prompt, first character", "lmms-eval-gen", "lmms-eval"),
    Protocol("gen-vlmevalkit", "generated, VLMEvalKit", "NOT a paper protocol: generated answer, VLMEvalKit MCQ "
             "prompt, exact matching", "vlmevalkit-gen", "vlmevalkit"),
)}
#: the ranking protocols a report compares unless told otherwise (``lmms-eval-ppl`` is available on request)
DEFAULT_RANKING_PROTOCOLS = ("content-sum", "content-mean", "letters", "gen-lmms-eval", "gen-vlmevalkit")
