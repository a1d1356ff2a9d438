"""Thinking traces: removed before the official parser, as a named and recorded step (NOT part of any paper).

More: docs/modules.md, ``mmbench_lib/tasks/thinking.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

from mmbench_lib.core.flags import is_bool, parse_bool

#: (opening, closing) trace markers; the first is the common one
MARKERS = (("<think>", "</think>"), ("<reasoning>", "</reasoning>"), ("◁think▷", "◁/think▷"),
           ("<|begin_of_thought|>", "<|end_of_thought|>"))
#: the name of the step in predictions and results tables
STEP = "thinking trace removed"


@dataclass(frozen=True)
class Split:
    """A response split into ``answer`` and ``trace``; ``how``: ``none`` (no marker), ``closed``, ``open-prefix``
    (closing marker only), ``unclosed`` (no answer: the trace ran to the end)."""

    answer: str
    trace: str
    how: str


def split_trace(text) -> Split:
    """The answer part and the trace of ``text`` (module doc).

    >>> split_trace("<think>A looks right... no, (B)</think>The answer is (C).")
    Split(answer='The answer is (C).', trace='A looks right... no, (B)', how='closed')
    >>> split_trace("so maybe (A)</think> (C)").answer
    '(C)'
    >>> split_trace("<think>(A) or (B)? Let me recount").how
    'unclosed'
    """
    if not isinstance(text, str):
        return Split("", "", "none")
    answer, traces, how = text, [], "none"
    for start, end in MARKERS:
        while start in answer and end in answer[answer.find(start):]:
            i = answer.find(start)
            j = answer.find(end, i)
            traces.append(answer[i + len(start):j])
            answer = answer[:i] + answer[j + len(end):]
            how = "closed"
        if end in answer and start not in answer:
            head, _, answer = answer.rpartition(end)
            traces.insert(0, head)
            how = "open-prefix"
        if start in answer:
            i = answer.find(start)
            traces.append(answer[i + len(start):])
            answer = answer[:i]
            how = "unclosed"
    return Split(answer.strip(), "\n".join(t.strip() for t in traces), how)


def strip_trace(text) -> str:
    """The answer part of ``text`` (:func:`split_trace`)."""
    return split_trace(text).answer


#: the chat-template keywords that switch a trace on; the run spec parses their values as booleans
SWITCHES = ("enable_thinking", "thinking")


def thinking_enabled(chat_template_kwargs) -> bool:
    """Whether a run's ``chat_template_kwargs`` turn thinking on (``enable_thinking``, or ``thinking``, true by the
    one rule of ``core.flags``: ``true``, ``"true"``, ``"yes"`` and ``1`` alike; a wrong spelling is the spec's
    one-line error, not a silent "off")."""
    kw = chat_template_kwargs if isinstance(chat_template_kwargs, dict) else {}
    return any(is_bool(kw[k]) and parse_bool(kw[k]) for k in SWITCHES if k in kw)


def ranking_refusal(kind: str, chat_template_kwargs) -> str | None:
    """Why a run is refused before it starts (None: it may run): a ranking run with thinking on."""
    if kind == "ranking" and thinking_enabled(chat_template_kwargs):
        return ("chat_template_kwargs turn thinking on (enable_thinking=True) for a ranking run: the likelihood of "
                "a choice after a thinking trace is not the papers' answer-ranking protocol; drop it, or use a "
                "generation task")
    return None
