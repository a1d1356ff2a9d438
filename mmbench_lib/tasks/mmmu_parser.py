"""MMMU prompts, answer extraction and correctness, with parity to the official scorer.

Rules: ``docs/protocols.md`` §3 (MMMU). Paper: MMMU (Yue et al.), §4.1 "Evaluation":
rule-based extraction, random selection for multiple choice without a valid answer, open
questions without one scored wrong.

The official parser's weaknesses are reproduced on purpose; every such place is marked
``QUIRK`` with the pitfall it corresponds to (docs/protocols.md §3.10). ``parse_multi_choice_lenient`` is a
separate, clearly non-official extractor.
"""
from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

__all__ = [
    "ParsedAnswer", "SUBJECT_ORDER", "DISCIPLINES", "SUBJECT_TO_DISCIPLINE", "MC_INSTRUCTION",
    "OPEN_INSTRUCTION", "subject_from_id", "official_order", "parse_options", "mc_info",
    "normalize_question_type", "prompt", "parse_multi_choice", "parse_multi_choice_lenient",
    "key_subresponses", "extract_numbers", "normalize_str", "parse_open", "parse_gold",
    "eval_multi_choice", "eval_open",
]


@dataclass
class ParsedAnswer:
    """One extracted answer (docs/protocols.md §3.4, §3.7, §4.4).

    ``pred``: a letter (MMMU MC), a letter string such as "ACD" (CMMMU MC), "对"/"错" (CMMMU T/F),
    a list (open / fill-in), or None when no answer was produced.
    ``fallback``: True when randomness decided the answer or no answer was produced.
    ``mode``: which branch decided it, e.g. "bracket", "letter", "content", "random", "none".
    """

    pred: str | list | None
    fallback: bool = False
    mode: str = ""


# ---------------------------------------------------------------------------------------------
# Subjects and processing order (docs/protocols.md §3.2, §3.7)

#: Official short keys, in the order ``--subject ALL`` processes them (docs/protocols.md §3.2, §3.7).
SUBJECT_ORDER: dict[str, str] = {
    "acc": "Accounting",
    "agri": "Agriculture",
    "arch": "Architecture_and_Engineering",
    "art": "Art",
    "art_theory": "Art_Theory",
    "bas_med": "Basic_Medical_Science",
    "bio": "Biology",
    "chem": "Chemistry",
    "cli_med": "Clinical_Medicine",
    "cs": "Computer_Science",
    "design": "Design",
    "diag_med": "Diagnostics_and_Laboratory_Medicine",
    "econ": "Economics",
    "elec": "Electronics",
    "ep": "Energy_and_Power",
    "fin": "Finance",
    "geo": "Geography",
    "his": "History",
    "liter": "Literature",
    "manage": "Manage",
    "mark": "Marketing",
    "mate": "Materials",
    "math": "Math",
    "mech": "Mechanical_Engineering",
    "music": "Music",
    "phar": "Pharmacy",
    "phys": "Physics",
    "psy": "Psychology",
    "pub_health": "Public_Health",
    "socio": "Sociology",
}

#: Discipline -> subjects, in the official table order (docs/protocols.md §3.2, §3.8).
DISCIPLINES: dict[str, list[str]] = {
    "Art and Design": ["Art", "Art_Theory", "Design", "Music"],
    "Business": ["Accounting", "Economics", "Finance", "Manage", "Marketing"],
    "Science": ["Biology", "Chemistry", "Geography", "Math", "Physics"],
    "Health and Medicine": ["Basic_Medical_Science", "Clinical_Medicine",
                            "Diagnostics_and_Laboratory_Medicine", "Pharmacy", "Public_Health"],
    "Humanities and Social Science": ["History", "Literature", "Sociology", "Psychology"],
    "Tech and Engineering": ["Agriculture", "Architecture_and_Engineering", "Computer_Science",
                             "Electronics", "Energy_and_Power", "Materials", "Mechanical_Engineering"],
}

SUBJECT_TO_DISCIPLINE: dict[str, str] = {s: d for d, subs in DISCIPLINES.items() for s in subs}


def subject_from_id(item_id: str) -> str:
    """Subject of an MMMU id such as ``validation_Art_Theory_4`` -> ``Art_Theory`` (docs/protocols.md §3.1)."""
    return "_".join(item_id.split("_")[1:-1])


def official_order(ids_by_subject: Mapping[str, Sequence]) -> list[tuple[str, object]]:
    """Flatten ``{subject: [ids...]}`` into ``[(subject, id), ...]`` in official order (docs/protocols.md §3.7).

    Subjects (full names or short keys) come in the short-key order of ``SUBJECT_ORDER``; items
    keep the order given (the official ``output.json`` order). Consume one ``random.Random(42)``
    over this sequence to reproduce the official MC random fallbacks. Unknown subjects raise
    ValueError rather than being skipped silently (docs/protocols.md §3.8 warns about silent skipping).
    """
    long_names = set(SUBJECT_ORDER.values())
    resolved: dict[str, Sequence] = {}
    for key, ids in ids_by_subject.items():
        name = SUBJECT_ORDER.get(key, key)
        if name not in long_names:
            raise ValueError(f"unknown MMMU subject {key!r}")
        if name in resolved:
            raise ValueError(f"subject {name!r} given twice (short key and full name?)")
        resolved[name] = ids
    return [(name, i) for name in SUBJECT_ORDER.values() if name in resolved for i in resolved[name]]


# ---------------------------------------------------------------------------------------------
# Prompts (docs/protocols.md §3.3)

MC_INSTRUCTION = "Answer with the option's letter from the given choices directly."
OPEN_INSTRUCTION = "Answer the question using a single word or phrase."


def parse_options(options: str | Sequence[str]) -> list[str]:
    """HF ``options`` is a Python-list repr; parse it with ``ast.literal_eval``, never eval (docs/protocols.md §3.1, P-M6)."""
    if isinstance(options, str):
        options = ast.literal_eval(options) if options.strip() else []
    return list(options)


def mc_info(options: str | Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """``(index2ans, all_choices)`` with letters A, B, C... over ``len(options)`` (docs/protocols.md §3.3)."""
    opts = parse_options(options)
    all_choices = [chr(ord("A") + i) for i in range(len(opts))]
    return dict(zip(all_choices, opts)), all_choices


def normalize_question_type(question_type: str) -> str:
    """HF ``open`` -> official ``short-answer``; ``multiple-choice`` unchanged (docs/protocols.md §3.1, §6.4)."""
    return "short-answer" if question_type in ("open", "short-answer") else question_type


def prompt(question: str, options: str | Sequence[str], question_type: str, instruction: str = "") -> str:
    """Official prompt after YAML parsing (docs/protocols.md §3.3, ``configs/llava1.5.yaml``).

    MC: ``{question}\\n(A) opt\\n(B) opt\\n...\\n\\nAnswer with the option's letter from the given
    choices directly.``; open: ``{question}\\nAnswer the question using a single word or phrase.``.
    ``<image k>`` placeholders stay verbatim. A non-empty ``instruction`` is prepended as
    ``instruction.strip() + "\\n\\n"`` (the official config's instruction is empty).
    """
    if normalize_question_type(question_type) == "multiple-choice":
        index2ans, _ = mc_info(options)
        lines = "".join(f"({letter}) {text}\n" for letter, text in index2ans.items())
        body = f"{question}\n{lines}\n{MC_INSTRUCTION}"
    else:
        body = f"{question}\n{OPEN_INSTRUCTION}"
    if instruction and instruction.strip():
        return instruction.strip() + "\n\n" + body
    return body


# ---------------------------------------------------------------------------------------------
# Multiple choice (docs/protocols.md §3.4, §3.7)

_STRIP_CHARS = (",", ".", "!", "?", ";", ":", "'")


def _strip_and_pad(response: str) -> str:
    """Steps 1-2 of docs/protocols.md §3.4 / §4.4: strip each punctuation char in turn from both ends, pad with spaces."""
    for ch in _STRIP_CHARS:
        response = response.strip(ch)
    return " " + response + " "


def parse_multi_choice(response: str, all_choices: Sequence[str], index2ans: Mapping[str, str],
                       rng: random.Random | None) -> ParsedAnswer:
    """Official ``parse_multi_choice_response`` (docs/protocols.md §3.4; fallback and seeding §3.7).

    Passes: ``(L)`` anywhere -> ``" L "`` (upper case, space-guarded) -> option text
    (case-insensitive substring, only when the response has more than 5 whitespace tokens).
    Several candidates: the one whose last occurrence is latest wins; ties go to the earliest
    candidate. No candidate: ``rng.choice(all_choices)``; with ``rng=None`` ("no-random" mode)
    the answer is None (scored wrong). Pass one ``random.Random(42)`` consumed in official order.
    """
    text = _strip_and_pad(response)
    candidates: list[str] = []
    mode = "none"
    for letter in all_choices:
        if f"({letter})" in text:
            candidates.append(letter)
    if candidates:
        mode = "bracket"
    else:
        # QUIRK (P-M3): only " L " counts, so "C. A pretty girl" -> A; "**C**", "C)", "c" miss.
        for letter in all_choices:
            if f" {letter} " in text:
                candidates.append(letter)
        if candidates:
            mode = "letter"
        elif len(text.split()) > 5:  # QUIRK (P-M3): exactly 5 tokens skips the content pass
            low = text.lower()
            for letter, ans in index2ans.items():
                if ans.lower() in low:
                    candidates.append(letter)
            if candidates:
                mode = "content"

    if not candidates:
        if rng is None or not all_choices:
            return ParsedAnswer(None, True, "none")
        return ParsedAnswer(rng.choice(list(all_choices)), True, "random")
    if len(candidates) == 1:
        return ParsedAnswer(candidates[0], False, mode)

    if mode == "bracket":
        positions = [text.rfind(f"({c})") for c in candidates]
    elif mode == "letter":
        positions = [text.rfind(f" {c} ") for c in candidates]
    else:
        low = text.lower()
        positions = [low.rfind(index2ans[c].lower()) for c in candidates]
    best = 0
    for i, pos in enumerate(positions):  # first maximum wins, like numpy.argmax
        if pos > positions[best]:
            best = i
    return ParsedAnswer(candidates[best], False, mode)


_LENIENT_MARKUP = re.compile(r"[*_`]+")
_LENIENT_ANSWER = re.compile(r"(?i:answer|option|choice)\s*(?:(?i:is)\s*)?[:：]?\s*[(\[]?([A-Z])(?![A-Za-z0-9])")


def parse_multi_choice_lenient(response: str, all_choices: Sequence[str], index2ans: Mapping[str, str],
                               rng: random.Random | None) -> ParsedAnswer:
    """NOT the official MMMU parser: a more forgiving extractor for diagnostics (docs/protocols.md §3.10 P-M3, P-M5).

    Never use it for numbers compared with the paper or leaderboard. Markdown ``*``, ``_`` and
    backticks are removed, then, in order:
    1. the whole response is one letter, optionally bracketed or followed by ``.``/``:``/``)``
       (any case): "c", "**C**", "(c)", "C." -> mode ``lenient-whole``;
    2. the last "answer/option/choice (is) (:) L" with an upper-case L -> ``lenient-answer``;
    3. the official bracket pass (mode ``bracket``);
    4. a leading upper-case letter with a delimiter, or a leading lower-case letter with ``)``:
       "C) $8", "C. A pretty girl", "b) ..." -> ``lenient-lead``;
    5. the official bare-letter and content passes (modes ``letter``/``content``);
    6. the same random / no-random fallback as the official parser.
    """
    choices = list(all_choices)
    text = _LENIENT_MARKUP.sub("", response).strip()

    whole = re.fullmatch(r"[(\[]?([A-Za-z])[)\]]?[.:]?", text)
    if whole and whole.group(1).upper() in choices:
        return ParsedAnswer(whole.group(1).upper(), False, "lenient-whole")

    said = [m.group(1) for m in _LENIENT_ANSWER.finditer(text) if m.group(1) in choices]
    if said:
        return ParsedAnswer(said[-1], False, "lenient-answer")

    official = parse_multi_choice(text, choices, index2ans, None)
    if official.mode == "bracket":
        return official

    lead = re.match(r"[(\[]?([A-Z])[)\].:](?:\s|$)", text) or re.match(r"[(\[]?([a-z])[)\]](?:\s|$)", text)
    if lead and lead.group(1).upper() in choices:
        return ParsedAnswer(lead.group(1).upper(), False, "lenient-lead")

    if official.pred is not None:
        return official
    if rng is None or not choices:
        return ParsedAnswer(None, True, "none")
    return ParsedAnswer(rng.choice(choices), True, "random")


# ---------------------------------------------------------------------------------------------
# Open questions (docs/protocols.md §3.5)

_OPEN_INDICATORS = ("could be ", "so ", "is ", "thus ", "therefore ", "final ", "answer ", "result ")
_TRIVIAL_TAILS = (":", ",", ".", "!", "?", ";", ":", "'")


def key_subresponses(sub_responses: Sequence[str], indicators: Sequence[str],
                     last_extra: Sequence[str] = ()) -> list[str]:
    """Shortest tail after the last occurrence of any indicator, per sub-response (docs/protocols.md §3.5 steps 3-4, §4.4).

    ``last_extra`` indicators (``=``) apply to the last sub-response only. QUIRK: an empty tail
    counts as "none yet", so a later indicator may replace it with a longer one. Tails that are
    only one of ``: , . ! ? ; '`` are dropped. Returns [] when no line yields a tail.
    """
    keys = []
    last = len(sub_responses) - 1
    for index, resp in enumerate(sub_responses):
        inds = list(indicators) + (list(last_extra) if index == last else [])
        shortest = None
        for ind in inds:
            if ind in resp:
                tail = resp.split(ind)[-1].strip()
                if not shortest or len(tail) < len(shortest):
                    shortest = tail
        if shortest and shortest.strip() not in _TRIVIAL_TAILS:
            keys.append(shortest)
    return keys


# Number extraction (docs/protocols.md §3.5 step 6, §4.4 填空 step 4). The official scientific and simple
# patterns retry from every start inside a digit run, each retry scanning to the run's end:
# quadratic (16k digits took 7 s). ``(?<!\d)`` before each alternative that starts with digits
# skips those retries without changing any result: a match never ends inside a digit run (the
# CMMMU simple pattern may give back one last digit, which then fails the same lookahead on its
# own), so a retry at a later start in the run gives what the run's first start gave, a failure.
# ``tests/test_parsing_*`` check the patterns against the official ones on random strings.
# The comma-group patterns are linear as they stand (``\b`` or ``\d{1,3}`` bound each start).

_NUM_COMMAS = re.compile(r"-?\b\d{1,3}(?:,\d{3})+\b")
#: official ``-?\d+(?:\.\d+)?[eE][+-]?\d+`` (both parsers) with ``(?<!\d)``
NUM_SCIENTIFIC = re.compile(r"-?(?<!\d)\d+(?:\.\d+)?[eE][+-]?\d+")
#: official ``-?(?:\d+\.\d+|\.\d+|\d+\b)(?![eE][+-]?\d+)(?![,\d])`` with ``(?<!\d)``
_NUM_SIMPLE = re.compile(r"-?(?:(?<!\d)\d+\.\d+|\.\d+|(?<!\d)\d+\b)(?![eE][+-]?\d+)(?![,\d])")


def extract_numbers(string: str) -> list[str]:
    """All number strings: comma-grouped, then scientific, then simple matches, concatenated (docs/protocols.md §3.5 step 6).

    Same matches as the official patterns, in linear time (see above). QUIRK: the patterns
    overlap, e.g. "1,000" -> ["1,000", "000"], "1.2e3" -> ["1.2e3", "1", "3"].
    """
    return _NUM_COMMAS.findall(string) + NUM_SCIENTIFIC.findall(string) + _NUM_SIMPLE.findall(string)


def _is_number(string: str) -> bool:
    """``float(s.replace(',', ''))`` succeeds (docs/protocols.md §3.5 step 7, §4.4)."""
    try:
        float(string.replace(",", ""))
        return True
    except ValueError:
        return False


def normalize_str(string: str) -> list:
    """Official ``normalize_str`` (docs/protocols.md §3.5 step 7).

    Strip; numeric (after removing commas) -> ``[round(float, 2)]``; otherwise lower-case, and a
    1-character string becomes ``[" c", "c "]`` to avoid trivial substring matches.
    """
    string = string.strip()
    if _is_number(string):
        return [round(float(string.replace(",", "")), 2)]
    string = string.lower()
    if len(string) == 1:
        return [" " + string, string + " "]
    return [string]


def _dedup(items) -> list:
    """First-seen order, duplicates removed; the official code uses an unordered set (docs/protocols.md §3.5 step 8, §4.4)."""
    out: list = []
    seen: set = set()  # same test as ``in out`` (identity, then ==) for str and float, in linear time
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def parse_open(response: str, fixed_split: bool = False) -> list:
    """Official ``parse_open_response`` (docs/protocols.md §3.5). Returns normalised strings and floats.

    The official result is a set (undefined order); this returns a list in first-seen order
    (key responses first, then their numbers), de-duplicated. ``fixed_split=True`` (NOT official,
    for protocol-sensitivity reports) splits into sentences before lower-casing, so the
    sentence alternative of the split pattern works as written; each sentence is lower-cased after the split.
    """
    text = response.strip().strip(".")
    if fixed_split:  # NOT official: split first, then lower-case
        sub_responses = [s.lower() for s in re.split(r"\.\s(?=[A-Z])|\n", text)]
        text = text.lower()
    else:
        text = text.lower()
        # QUIRK (docs/protocols.md §3.5 step 2): the text is already lower-cased, so the first alternative can
        # never match; in effect this splits on newlines only.
        sub_responses = re.split(r"\.\s(?=[A-Z])|\n", text)
    keys = key_subresponses(sub_responses, _OPEN_INDICATORS, ("=",)) or [text]
    preds = list(keys)
    for key in keys:
        preds.extend(extract_numbers(key))
    normalized = []
    for pred in preds:
        normalized.extend(normalize_str(pred))
    return _dedup(normalized)


# ---------------------------------------------------------------------------------------------
# Correctness (docs/protocols.md §3.6)

def parse_gold(answer):
    """Gold answer with HF list strings such as ``"['24/7', '3.429']"`` turned into lists (docs/protocols.md §3.6, P-M2).

    A string starting with ``[`` (after leading whitespace) is parsed with ``ast.literal_eval``;
    if that fails the string is returned unchanged (the official scorer would then treat it as
    a plain string). Real lists pass through with their elements as strings.
    """
    if isinstance(answer, str) and answer.lstrip().startswith("["):
        try:
            value = ast.literal_eval(answer.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return answer
        if isinstance(value, (list, tuple)):
            return [str(v) for v in value]
        return answer
    if isinstance(answer, (list, tuple)):
        return [str(v) for v in answer]
    return answer


def eval_multi_choice(gold, pred) -> bool:
    """Official ``eval_multi_choice``: exact equality; a list gold matches any element (docs/protocols.md §3.6)."""
    if isinstance(gold, list):
        return any(g == pred for g in gold)
    return gold == pred


def eval_open(gold, preds: Sequence) -> bool:
    """Official ``eval_open`` (docs/protocols.md §3.6). ``preds`` is the list from ``parse_open``.

    Gold (string, or list whose normalised elements are united) goes through ``normalize_str``.
    A string prediction matches if a string gold is a substring of it; a float prediction
    matches if it equals a float gold. Strings never match floats.
    """
    golds = gold if isinstance(gold, list) else [gold]
    norm_answers: list = []
    for g in golds:
        norm_answers.extend(normalize_str(g if isinstance(g, str) else str(g)))
    for pred in preds:
        if isinstance(pred, str):
            if any(isinstance(g, str) and g in pred for g in norm_answers):
                return True
        elif pred in norm_answers:
            return True
    return False
