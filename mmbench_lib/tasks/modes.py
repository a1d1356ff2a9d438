"""Prompt modes of generation tasks: which prompt the model gets and what the official parser reads.

A generation task declares its modes (``Task.prompt_modes``, key -> :class:`PromptMode`); a run names one
(``task.prompt_mode`` of the run spec, default ``official``) and every table labels its number with it
(``generation (official)``, ``generation (cot)``, ...), so a number under the official protocol is never
confused with another. docs/protocols.md §5 lists each task's modes and where their prompts come from.

More: docs/modules.md, ``mmbench_lib/tasks/modes.py``.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

#: a line of its own that starts ``Answer:`` (any case; markdown bold, "Final answer", a full-width colon
#: and the Chinese 答案 accepted); group 1 is the rest of the line
ANSWER_LINE = re.compile(r"^[ \t>*_#-]*(?:final[ \t]+|正确|最终)?(?:answer|答案)[ \t*_]*[:：][ \t*_]*(.*?)[ \t*_]*$",
                         re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class PromptMode:
    key: str
    prompt: str = "official"  # which prompt of the task: "official" or "cot"
    answer_line: bool = False  # the parser reads the last "Answer: X" line (when there is one)
    max_new_tokens: int | None = None  # the mode's default (None: the caller's default, as before modes)
    source: str = "the benchmark's official prompt and parser"
    official: bool = True  # a protocol of the benchmark's paper (False: a labelled variant)

    @property
    def label(self) -> str:
        """What tables print in their protocol column: ``generation (<key>)``."""
        return f"generation ({self.key})"

    def describe(self) -> dict:
        return {**asdict(self), "label": self.label}


OFFICIAL = PromptMode("official")
#: the default of the CoT modes: MMMU-Pro's runners give API models 4096 tokens; 512 lets a small model
#: reason and still write its answer line while a demo run stays short
COT_MAX_NEW_TOKENS = 512


def cot_modes(source: str, official: bool = False) -> tuple[PromptMode, PromptMode]:
    """The ``cot`` mode (prompt from ``source``) and its ``cot+answer-line`` reading."""
    return (PromptMode("cot", "cot", False, COT_MAX_NEW_TOKENS, source, official),
            PromptMode("cot+answer-line", "cot", True, COT_MAX_NEW_TOKENS,
                       f"{source}; NOT official: the parser reads the last 'Answer: X' line", False))


def answer_line(text) -> str | None:
    """The text of the last line of ``text`` that starts with ``Answer:`` and has something after it (markdown
    emphasis around it removed), or None when there is none.

    >>> answer_line("B is tempting, but (C) fits.\\nAnswer: C")
    'C'
    >>> answer_line("Answer: A\\nOn reflection...\\n**Final Answer:** (B) 42 m")
    '(B) 42 m'
    >>> answer_line("The answer is B.") is None
    True
    """
    if not isinstance(text, str):
        return None
    found = [m.group(1).strip() for m in ANSWER_LINE.finditer(text)]
    found = [f for f in found if f]
    return found[-1] if found else None


def modes_of(*modes: PromptMode) -> dict[str, PromptMode]:
    return {m.key: m for m in modes}
