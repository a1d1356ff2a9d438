"""Generated letter answers on SEED v1 / SEED-2: a NON-PAPER protocol in the shared resumable loop.

The papers rank choice contents by likelihood (SEED-Bench §3.4, SEED-Bench-2 §3.4). lmms-eval and
VLMEvalKit instead generate an answer with the options listed and read a letter out of it (docs/protocols.md §1.4,
P-S8); a recipe with ``continuation="generate"`` (``lmms-eval-gen``, ``vlmevalkit-gen``) selects this
protocol in the run spec. Each item's raw response is stored with every extractor's reading
(``extracted``: ``{"lmms-eval": letter, "vlmevalkit": letter}``, ``extract_mode`` likewise), as a
ranking row stores both reductions; ``prediction`` / ``correct`` follow the recipe's extractor.
Greedy decoding, ``max_new_tokens`` recorded; a response cut at the limit is flagged ``truncated``.
Items that need image output (SEED-2 dims 25-27) get ``n/a``: no letter can be written for them here.
"""
from __future__ import annotations

from mmbench_lib.core.items import Item
from mmbench_lib.core.rows import failed_row, na_row, ok_row
from mmbench_lib.core.store import RunStore
from mmbench_lib.pipeline.loop import run_loop
from mmbench_lib.pipeline.ranking import video_path, visual_inputs
from mmbench_lib.tasks.letters import extract_all
from mmbench_lib.tasks.recipes import Recipe, generate_request

NOT_TEXT_OUTPUT = "needs image output; generated letters answer text-output questions only"


def letter_row(item: Item, response: str, recipe: Recipe, **fields) -> dict:
    """An ok row: the response, every extractor's letter, the recipe's letter as the prediction."""
    got = extract_all(response, item.letters, item.choices, also=recipe.extractor)
    pred = got[recipe.extractor].letter
    return ok_row(item, prediction=pred, correct=None if item.answer is None else pred == item.answer,  # None: withheld
                  response=response,
                  extracted={k: v.letter for k, v in got.items()}, extract_mode={k: v.mode for k, v in got.items()},
                  extractor=recipe.extractor, **fields)


class LetterGenerationProtocol:
    """Generated letters for the shared loop (``mmbench_lib.pipeline.loop``)."""

    item_errors = ()  # only media errors mark a single item while preparing

    def __init__(self, adapter, recipe: Recipe, max_new_tokens: int = 32):
        if not recipe.generates:
            raise ValueError(f"recipe {recipe.name!r} ranks choices; use the ranking protocol")
        self.adapter, self.recipe, self.max_new_tokens = adapter, recipe, max_new_tokens
        self.desc = f"generating letters ({adapter.name})"

    def prepare(self, item: Item):
        if item.needs_image_output:
            return na_row(item, NOT_TEXT_OUTPUT)
        images, video = visual_inputs(item, self.adapter, self.recipe.image_size)  # blind: media checked only
        return generate_request(item, self.recipe, images, self.max_new_tokens, video)

    def call(self, pairs) -> list:
        return self.adapter.generate([req for _it, req in pairs])

    def finish(self, item: Item, request, g) -> dict:
        return letter_row(item, g.text, self.recipe, num_tokens=g.num_tokens, truncated=bool(g.hit_limit),
                          max_new_tokens=request.max_new_tokens, **video_path(item, request))

    def failed(self, item: Item, error: str) -> dict:
        return failed_row(item, error, response=None, truncated=False)


def generate_letters(items: list[Item], adapter, store: RunStore, recipe: Recipe, max_new_tokens: int = 32,
                     **loop) -> RunStore:
    """Generate an answer for every item not yet in ``store`` and append its row (flushed per batch); ``loop``:
    ``run_loop``'s own options (batch size, retry of failed items, progress lines)."""
    return run_loop(items, LetterGenerationProtocol(adapter, recipe, max_new_tokens), store, **loop)
