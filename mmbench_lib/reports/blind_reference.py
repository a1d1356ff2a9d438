"""Our blind (text-only) runs beside the published text-only scores of the same benchmark.

The MMStar paper (Chen et al., NeurIPS 2024, arXiv 2403.20330) prints text-only scores on six benchmarks: Table 1,
22 LLMs 2-shot; Table 2, LVLMs' LLM bases (0-shot) and the LVLMs without images. A task declares the column holding
its scores (``Task.blind_reference``); each blind run (n, accuracy, the one 95% interval, on that column's items:
``reports.numbers``, the result model every output shows) goes above the paper's text-only rows, the same model's rows marked (:func:`name_tokens`), else every row shown as a
labelled reference. The paper's LLMs generate answers read by heuristic matching (Section 5, A.1): the note says so.

More: docs/modules.md, ``mmbench_lib/reports/blind_reference.py``.
"""
from __future__ import annotations

import inspect
import re
from collections import Counter

import pandas as pd

from mmbench_lib import published
from mmbench_lib.analysis.plots import model_name
from mmbench_lib.analysis.reader import load_run
from mmbench_lib.analysis.results import data_source
from mmbench_lib.reports.numbers import interval_cell, of_rows, percent
from mmbench_lib.tasks.base import canonical_name, get_task

#: a paper row has no n and no interval: those cells are empty (not ``<NA>`` / ``nan``)
COLUMNS = ("source", "model", "setting", "same model", "data", "n", "accuracy %", "95% interval")
#: tokens that name a checkpoint's file format, not the model (``meta-llama/Llama-2-7b-hf``)
IGNORED_TOKENS = {"hf"}
#: the MMStar tables' text-only strategies and how the table shows them
SETTINGS = {"2-shot": "LLM, 2-shot", "LLM": "LLM base of {model}, 0-shot", "LVLM-text": "{model} without images, 0-shot"}
CHANCE = "Random Choice"


def name_tokens(name: str) -> Counter:
    """A model name as a multiset of lower-case letter runs and numbers, the organisation dropped:
    ``lmsys/vicuna-7b-v1.5`` and ``Vicuna-v1.5-7B`` are the same; so are ``LLaMA2-7B`` and ``Llama-2-7b-hf``."""
    name = str(name).rsplit("/", 1)[-1].split(":")[-1].lower()
    return Counter(t for t in re.findall(r"[a-z]+|\d+(?:\.\d+)?", name) if t not in IGNORED_TOKENS)


def _ours(label: str, folder, task) -> dict:
    """One blind run's row: its result on the declared group's items (``numbers.of_rows``: n, accuracy and
    interval as fractions), its data."""
    run = load_run(folder)
    df = run.samples
    ref = task.blind_reference
    if ref.group:
        df = df[df["dimension_id"].isin(task.groups[ref.group])]
    res = of_rows(df)
    model = df["model"].iloc[0] if len(df) else label
    recipe = df["recipe"].dropna().iloc[0] if "recipe" in df and df["recipe"].notna().any() else None
    how = (f"recipe {recipe}" if task.protocol == "ranking" else recipe) if recipe else "official prompt"
    setting = f"text only, {how}, 0-shot"
    return {"source": "ours", "model": model_name(model), "spec": model, "setting": setting, "same model": "",
            "data": data_source(run), "n": res.n, "accuracy": res.value, "ci_low": res.low, "ci_high": res.high,
            "manifest": run.manifest or {}}


def table_label(name: str) -> str:
    """A published table as its source note's title names it: ``<paper> paper, Table 1``."""
    title = published.source(name).splitlines()[0].lstrip("# ")
    return title.split(": ", 1)[-1].split(" (", 1)[0]


def _paper_rows(ref) -> list[dict]:
    rows = []
    for name in ref.tables:
        t = published.load(name)
        for r in t.to_dict("records"):
            strategy = str(r.get("strategy") or "")
            if r["model"] == CHANCE:
                rows.append({"model": CHANCE, "setting": "chance", "names": [], "value": r[ref.column]})
            elif strategy in SETTINGS:
                names = [r["model"]] if strategy != "LLM" else [r["llm_base"]]
                shown = r["model"] if strategy != "LLM" else r["llm_base"]
                rows.append({"model": shown, "setting": SETTINGS[strategy].format(model=r["model"]), "names": names,
                             "value": r[ref.column], "table": name})
    out, seen = [], set()
    for r in rows:  # Random Choice is printed in both tables: once
        key = (r["model"], r["setting"], r["value"])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _data_note(task, ours: list[dict]) -> str:
    """Where our runs' data differ from the data the column was measured on (``PublishedColumn.data``)."""
    notes = []
    for o in ours:
        try:
            have = task.manifest_args(o["manifest"])
        except KeyError:
            have = {}
        defaults = {k: v.default for k, v in inspect.signature(task.module.load).parameters.items()}
        for key, want in task.blind_reference.data:
            got = have.get(key, defaults.get(key))  # a value left out is the loader's default
            if key == "split":
                got = task.resolve_split(got)
            if got != want:
                notes.append(f"{o['model']}: {key} {got!r}, the paper's column is {key} {want!r} (other items)")
    return "; ".join(dict.fromkeys(notes))


def reference_table(runs: dict) -> tuple[pd.DataFrame, str]:
    """Our blind runs ``{label: folder}`` (one benchmark) above the published text-only rows of the column the task
    declares (``Task.blind_reference``), in percent: ``source`` (ours / the table), model, setting, ``same model``
    (``yes`` where the names match one of our models, ``reference`` otherwise), our data (demo, subset, full split),
    n and the 95% interval (ours only). Returns the table and a one-paragraph note (what the column is, which
    models matched, how the protocols differ). ValueError when the task declares no such column."""
    benches = set()
    for folder in runs.values():
        benches.add(canonical_name(load_run(folder).benchmark))
    if len(benches) != 1:
        raise ValueError(f"blind runs of different benchmarks: {sorted(benches)}")
    task = get_task(next(iter(benches)))
    ref = task.blind_reference
    if ref is None:
        raise ValueError(f"{task.title or task.name}: no published text-only column is declared "
                         f"(Task.blind_reference); the MMStar paper's Tables 1-2 do not report it")
    ours = [_ours(label, folder, task) for label, folder in runs.items()]
    mine = [name_tokens(o["model"]) for o in ours] + [name_tokens(o["spec"]) for o in ours]
    paper = _paper_rows(ref)
    for p in paper:
        p["same"] = any(name_tokens(n) in mine for n in p["names"])
    matched = [p for p in paper if p["same"]]
    rows = [{k: o[k] for k in ("source", "model", "setting", "same model", "data", "n")}
            | {"accuracy %": percent(o["accuracy"]), "95% interval": interval_cell(o["ci_low"], o["ci_high"])}
            for o in ours]
    for p in sorted(paper, key=lambda p: (not p["same"], p["setting"] != "chance")):
        rows.append({"source": " / ".join(table_label(t) for t in ref.tables) if p["setting"] == "chance" else
                     table_label(p["table"]), "model": p["model"], "setting": p["setting"],
                     "same model": "yes" if p["same"] else ("chance" if p["setting"] == "chance" else "reference"),
                     "data": "", "n": None, "accuracy %": float(p["value"]), "95% interval": None})
    where = f"{ref.what} (column {ref.column} of {', '.join(ref.tables)}" + \
            (f"; our runs on the {ref.group} group's items" if ref.group else "") + ")"
    names = ", ".join(dict.fromkeys(o["model"] for o in ours))
    if matched:
        found = ", ".join(dict.fromkeys(p["model"] for p in matched))
        who = f"the paper's rows of the same model: {found}"
    else:
        who = (f"no model the paper names matched ours ({names}): every text-only row of the paper is shown as a "
               f"reference row")
    note = (f"{where}: {who}. The paper's LLMs generate an answer read by heuristic matching (VLMEvalKit-based, "
            f"Table 1 2-shot, Table 2 0-shot, on the full set); ours are scored as the setting says, n items.")
    extra = _data_note(task, ours)
    note += f" Data: {extra}." if extra else ""
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    for c in ("n", "95% interval"):  # kept as given (ints, strings, None), not cast to float with nan
        table[c] = pd.Series([r[c] for r in rows], dtype=object)
    return table, note  # ours only carry n and an interval: a paper row's cells stay empty (None), in .md and .csv
