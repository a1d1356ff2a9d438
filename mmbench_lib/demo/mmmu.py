"""MMMU demo in the hub layout of ``MMMU/MMMU`` (docs/protocols.md §3.1): one parquet per subject and split, every
image large black text or a labelled bar chart on white, so OCR can read the answer off it."""
from __future__ import annotations

import ast
import random
from pathlib import Path

from mmbench_lib.demo.draw import (SEED, WORDS, labelled_bars, load_font, move_gold, pick_options, spread_golds,
                                   text_image, write_hf_parquet)

MMMU_SUBJECTS = {  # subject -> (subfield, validation templates)
    "Accounting": ("Financial Accounting", ("expr_mc", "chart_open", "chart_mc")),
    "Art": ("Drawing and Painting", ("word_mc", "option_images", "word_open")),
    "Computer_Science": ("Data Structure and Algorithm", ("expr_mc", "word_mc", "two_images")),
    "Electronics": ("Analog electronics", ("chart_mc", "expr_mc", "fraction_open")),
    "History": ("Modern History", ("word_mc", "chart_mc", "expr_mc")),
    "Math": ("Calculus", ("expr_mc", "chart_open", "word_mc")),
    "Pharmacy": ("Pharmacology and Drug Synthesis", ("chart_mc", "word_mc", "expr_mc")),
    "Physics": ("Classical Mechanics", ("expr_mc", "chart_mc", "word_mc")),
}
MMMU_COLUMNS = ("id", "question", "options", "explanation", *(f"image_{k}" for k in range(1, 8)), "img_type", "answer",
                "topic_difficulty", "question_type", "subfield")
DIFFICULTIES = ("Easy", "Medium", "Hard")
CHART_LABELS = ("P", "Q", "R", "S")


def _mmmu_item(rng: random.Random, kind: str, qid: str) -> dict:
    """One HF row (without id/split bookkeeping) for a template ``kind``."""
    big, mid = load_font(64), load_font(44)
    row = {f"image_{k}": None for k in range(1, 8)}
    row.update(explanation="", question_type="multiple-choice", img_type="['Other']")
    if kind == "expr_mc":
        v = rng.randint(11, 99)
        row["image_1"] = text_image([f"x = {v}"], big)
        opts, ans = pick_options(rng, str(v), [str(v + k) for k in (-11, -2, 3, 7, 10, 20)])
        row.update(question="<image 1> What is the value of x?", options=repr(opts), answer=ans,
                   img_type="['Mathematical Notations']", explanation=f"The image reads x = {v}.")
    elif kind in ("word_mc", "word_open"):
        word = rng.choice(WORDS)
        row["image_1"] = text_image([word], big, size=(420, 150))
        row["question"] = "Which word is written in <image 1>?"
        if kind == "word_mc":
            opts, ans = pick_options(rng, word, WORDS)
            row.update(options=repr(opts), answer=ans, explanation=f"The image shows the word {word}.")
        else:
            row.update(options="[]", answer=word.capitalize(), question_type="open")
    elif kind in ("chart_mc", "chart_open"):
        values = rng.sample(range(2, 10), 4)
        row["image_1"] = labelled_bars(CHART_LABELS, values, mid, mid)
        row["img_type"] = "['Plots and Charts']"
        if kind == "chart_mc":
            opts = list(CHART_LABELS)
            row.update(question="According to the bar chart in <image 1>, which bar has the largest value?",
                       options=repr(opts), answer="ABCD"[values.index(max(values))])
        else:
            k = rng.randrange(4)
            row.update(question=f"What is the value of bar {CHART_LABELS[k]} in <image 1>?", options="[]",
                       answer=str(values[k]), question_type="open")
    elif kind == "fraction_open":
        row["image_1"] = text_image(["3/4"], big)
        row.update(question="Which number is written in <image 1>? Give it as a fraction or a decimal.", options="[]",
                   answer=repr(["3/4", "0.75"]), question_type="open", img_type="['Mathematical Notations']")
    elif kind == "two_images":
        a, b = rng.randint(2, 19), rng.randint(20, 60)
        row["image_1"] = text_image([f"a = {a}"], big)
        row["image_2"] = text_image([f"b = {b}"], big)
        opts, ans = pick_options(rng, str(b - a), [str(b - a + k) for k in (-10, -1, 1, 2, 10)])
        row.update(question="<image 2> shows b and <image 1> shows a. What is b - a?", options=repr(opts), answer=ans,
                   img_type="['Mathematical Notations']")
    elif kind == "option_images":
        word, other = rng.sample(WORDS, 2)
        row["image_1"] = text_image([word], big, size=(420, 150))
        pair = [word, other]
        rng.shuffle(pair)
        row["image_2"] = text_image([pair[0]], big, size=(420, 150))
        row["image_3"] = text_image([pair[1]], big, size=(420, 150))
        row.update(question="<image 1> shows a word. Which option shows the same word?",
                   options=repr(["<image 2>", "<image 3>", "None of them"]), answer="AB"[pair.index(word)])
    else:
        raise ValueError(kind)
    row["id"] = qid
    return row


def _balance_golds(rows: list[dict], offset: int, kinds) -> None:
    """Give a subject's multiple-choice questions different gold letters (options swapped, nothing
    redrawn; the image-option question keeps its own), so Frequent Choice is not right by construction."""
    mc = [r["question_type"] == "multiple-choice" for r in rows]
    options = [ast.literal_eval(r["options"]) if m else [] for r, m in zip(rows, mc)]
    golds = spread_golds([r["answer"] if m else None for r, m in zip(rows, mc)], [len(o) for o in options], offset,
                         fixed=[k == "option_images" for k in kinds])
    for r, m, opts, letter in zip(rows, mc, options, golds):
        if m and letter != r["answer"]:
            opts, r["answer"] = move_gold(opts, r["answer"], letter)
            r["options"] = repr(opts)


def make_mmmu_demo(out_dir, seed: int = SEED + 2) -> dict:
    """MMMU demo in the hub layout: ``<out_dir>/<Subject>/{dev,validation,test}-00000-of-00001.parquet``.

    8 subjects covering all 6 disciplines; validation 3 items each (20 multiple choice, 4 open:
    two numeric, one word, one list-string gold ``"['3/4', '0.75']"``; one item with two images
    referenced as ``<image 2>`` then ``<image 1>``; one with images as options), dev 1 each with
    an explanation, test 1 each with answer ``"?"`` (withheld). docs/protocols.md §3.1.
    """
    out = Path(out_dir)
    rng = random.Random(seed)
    counts = {}
    for s_index, (subject, (subfield, kinds)) in enumerate(MMMU_SUBJECTS.items()):
        plan = {"dev": ("expr_mc",), "validation": kinds, "test": ("word_mc",)}
        for split, split_kinds in plan.items():
            rows = []
            for n, kind in enumerate(split_kinds, start=1):
                row = _mmmu_item(rng, kind, f"{split}_{subject}_{n}")
                row.update(subfield=subfield, topic_difficulty=DIFFICULTIES[(s_index + n) % 3])
                if split != "dev":
                    row["explanation"] = ""
                if split == "test":
                    row["answer"] = "?"
                rows.append(row)
            if split == "validation":
                _balance_golds(rows, s_index, split_kinds)
            write_hf_parquet(out / subject / f"{split}-00000-of-00001.parquet", rows, MMMU_COLUMNS,
                             {f"image_{k}" for k in range(1, 8)})
            counts[split] = counts.get(split, 0) + len(rows)
    return {"source": str(out), "subjects": list(MMMU_SUBJECTS), "splits": list(counts), "counts": counts}


README = """
## MMMU (`mmmu/`), the hub layout of `MMMU/MMMU` (docs/protocols.md §3.1)

    mmmu/<Subject>/{dev,validation,test}-00000-of-00001.parquet

8 subjects, all 6 disciplines: Accounting, Art, Computer_Science, Electronics, History, Math,
Pharmacy, Physics. validation: 3 per subject (20 multiple choice, 4 open, one of them with the
list-string gold `"['3/4', '0.75']"`; `validation_Computer_Science_3` refers to `<image 2>`
before `<image 1>`; `validation_Art_2` has images as options). The multiple-choice golds of a
subject are different letters, so the Frequent Choice baseline (most frequent gold per subject) is right
on one of them. dev: 1 per subject with an
explanation. test: 1 per subject, answer `"?"`. `options` and `img_type` are Python-list
strings; image cells are `{bytes, path}` structs declared as `Image` features.

Load with `mmmu.load("<demo>/mmmu", split="validation")`.
"""
