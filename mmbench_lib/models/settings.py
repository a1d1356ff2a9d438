"""Model settings a user sets to match a model card: processor keywords, a system prompt, chat-template
keywords and stop strings. the run spec holds them, the adapter applies them, ``describe()`` (the run's
manifest) records them. Greedy decoding is unchanged: a stop string ends generation of its row once the response
holds it (every generation path: ``models.batching.ResponseStops``), the response text is cut before it and the
tokens counted are those up to the cut -- the same text as cutting a longer response afterwards."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class ModelSettings:
    processor_kwargs: dict = field(default_factory=dict)  # e.g. Qwen's {"min_pixels": ..., "max_pixels": ...}
    system_prompt: str | None = None  # a system turn before the user turn (chat-template prompts only)
    chat_template_kwargs: dict = field(default_factory=dict)  # e.g. {"enable_thinking": False}
    stop_strings: tuple = ()  # the response ends before the first of these

    def __bool__(self) -> bool:
        return bool(self.processor_kwargs or self.system_prompt or self.chat_template_kwargs or self.stop_strings)

    def messages(self, content) -> list[dict]:
        """The chat: the system turn (when set) and the user turn with ``content`` (a string or content parts)."""
        user = [{"role": "user", "content": content}]
        if not self.system_prompt:
            return user
        system = self.system_prompt if isinstance(content, str) else [{"type": "text", "text": self.system_prompt}]
        return [{"role": "system", "content": system}] + user

    def cut(self, text: str) -> tuple[str, bool]:
        """``text`` before the first stop string, and whether one was found."""
        ends = [text.find(s) for s in self.stop_strings if s and s in text]
        return (text[:min(ends)], True) if ends else (text, False)

    def describe(self) -> dict:
        d = asdict(self)
        d["stop_strings"] = list(self.stop_strings)
        return d


NONE = ModelSettings()


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def split_thinking(text: str) -> tuple[str | None, str]:
    """``(trace, answer)`` of a thinking model's response: the ``<think>...</think>`` trace (None when there is
    none) and the text after it, which is what the benchmark's official parser reads (a trace the token limit
    cut before ``</think>`` leaves no answer). A response without the tags is the answer unchanged."""
    start = text.find(THINK_OPEN)
    end = text.find(THINK_CLOSE)
    if end >= 0 and (start < 0 or start < end):  # templates that open the trace in the prompt leave only </think>
        trace = text[start + len(THINK_OPEN) if start >= 0 else 0:end]
        return trace.strip(), (text[:max(start, 0)] + text[end + len(THINK_CLOSE):]).strip()
    if start >= 0:
        return text[start + len(THINK_OPEN):].strip(), text[:start].strip()
    return None, text
