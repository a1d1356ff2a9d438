"""Figures of runs: accuracy bars per dimension or per discipline with n and 95% intervals, the
shared style of every figure (display names, the N/A mark, a smallest font of 8 pt at the saved
size), and saving as PNG + SVG.

Accuracy entries are read in the metrics schema (:mod:`mmbench_lib.core.metrics`): ``n``
(scored questions), ``accuracy`` (a fraction, ``None`` when N/A), ``ci_low`` / ``ci_high`` (95%
Wilson, ``core.uncertainty``, fractions), ``failed`` and ``n/a``. A bar of 0% is drawn as a mark at zero with
its value and n; an N/A entry gets no bar, only a grey "n/a" with the reason.
"""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd

from mmbench_lib.analysis.reader import display_model, short_model  # noqa: F401 (display_model: re-exported)
from mmbench_lib.tasks.base import get_task, is_task

#: benchmark key -> the name figures and tables show
#: model spec -> the name figures show (other specs are shown as given)
MODEL_NAMES = {"smollm2": "SmolLM2-135M-Instruct", "random": "Random Choice", "frequent": "Frequent Choice",
               "tiny-llava": "tiny random-weight LLaVA"}
#: smallest font size (points) any figure uses; figures are saved at their drawn size
MIN_FONT = 8
DPI = 120
NA_COLOR = "#8c8c8c"
NA_FILL = "#f0f0f0"
RUN_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")


def display_name(benchmark: str | None) -> str:
    """A benchmark's display name (its task's ``title``); an unknown key is returned as given."""
    return get_task(benchmark).title if is_task(benchmark) else str(benchmark)


def model_name(spec: str | None) -> str:
    """``smollm2`` -> ``SmolLM2-135M-Instruct``, ``random`` -> ``Random Choice``; a local model folder
    (``vlm:/ckpt/step-500``, ``/ckpt/step-500``) -> its folder name; other specs as given."""
    return MODEL_NAMES.get(str(spec)) or short_model(spec)


def wrap(text: str, width: int) -> str:
    """``text`` broken into lines of at most ``width`` characters (long words kept whole)."""
    return "\n".join(textwrap.wrap(str(text), width, break_long_words=False)) or str(text)


def mode_note(metrics: dict) -> str:
    """``cot prompt, not official`` for a generation run in a prompt mode other than the paper's; else ``""``."""
    mode = metrics.get("prompt_mode")
    return f"{mode} prompt, not official" if mode and mode != "official" else ""


def run_label(metrics: dict) -> str:
    """``model (recipe, reduction)`` for a ranking run, ``model`` / the baseline's name for generation (with its
    prompt mode when not official: a CoT run never reads as an official one); with the data it scored when not a
    full split (``demo data``, ``subset (n=12)``: ``metrics["data"]``, core.datasource)."""
    label = _run_label(metrics)
    if mode_note(metrics):
        label += f" ({mode_note(metrics)})"
    data = metrics.get("data")
    return f"{label}, {data}" if data and data != "full split" else label


def _run_label(metrics: dict) -> str:
    given = metrics.get("model_name")
    if given and metrics.get("baseline") not in ("random", "frequent"):
        metrics = {**metrics, "model": given, "label": given}
    if "baseline" in metrics:
        base = metrics.get("baseline")
        if base in ("random", "frequent"):
            return model_name(base)
        if base == "ocr":  # the text-only model reading the OCR of the images (MMMU / CMMMU Section 4.1)
            return f"{model_name(metrics.get('model') or 'run')} + OCR"
        return model_name(metrics.get("label") or metrics.get("model") or "run")
    model = model_name(metrics.get("model") or "run")
    how = ", ".join(str(x) for x in (metrics.get("recipe"), metrics.get("reduction")) if x)
    return f"{model} ({how})" if how else model


def _pct(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else 100.0 * float(v)


def _entry_text(e: dict | None) -> tuple[str, bool]:
    """The text beside a bar and whether the entry is N/A (no bar)."""
    if not e:
        return "not run", True
    acc, n = _pct(e.get("accuracy")), int(e.get("n") or 0)
    if acc is None or n == 0:
        if e.get("n/a"):
            return f"n/a ({e['n/a']} need image output)", True
        if e.get("failed"):
            return f"n/a (all {e['failed']} failed)", True
        return "n/a", True
    failed = f", {e['failed']} failed" if e.get("failed") else ""
    return f"{acc:.1f}% (n={n}{failed})", False


def accuracy_bars(categories: list[str], series: dict[str, list[dict | None]], *, title: str = "",
                  random: list[float | None] | None = None, xlabel: str = "accuracy (%)", note: str = ""):
    """Grouped horizontal bars: one group per category, one bar per run (``series``: run label ->
    one metrics entry per category, ``None`` when the run has no such category). Each bar carries
    its 95% interval and the text ``accuracy% (n=..)``; 0% is a mark at zero, N/A a grey "n/a";
    ``random`` (percent per category) is drawn as a dashed line. The legend sits under the axes."""
    runs = list(series)
    k = max(len(runs), 1)
    h = 0.8 / k
    fig_h = 0.24 * len(categories) * max(k, 1.6) + 1.9 + 0.25 * math.ceil(len(runs) / 2)
    fig, ax = plt.subplots(figsize=(9.5, fig_h))
    for i, run in enumerate(runs):
        color = RUN_COLORS[i % len(RUN_COLORS)]
        for j, e in enumerate(series[run]):
            y = j + (i - (k - 1) / 2) * h
            text, na = _entry_text(e)
            if na:
                ax.text(1, y, text, va="center", fontsize=MIN_FONT, color=NA_COLOR, style="italic")
                continue
            acc, lo, hi = _pct(e["accuracy"]), _pct(e.get("ci_low")), _pct(e.get("ci_high"))
            ax.barh(y, acc, height=h * 0.9, color=color)
            if acc == 0:
                ax.plot([0], [y], marker="D", ms=5, color=color, clip_on=False, zorder=3)
            right = acc + (1.5 if acc == 0 else 0)
            if lo is not None and hi is not None:
                ax.errorbar(acc, y, xerr=[[acc - lo], [hi - acc]], fmt="none", ecolor="#333333", elinewidth=0.9,
                            capsize=2.5)
                right = hi
            ax.text(right + 1.2, y, text, va="center", fontsize=MIN_FONT)
    handles = [plt.Rectangle((0, 0), 1, 1, color=RUN_COLORS[i % len(RUN_COLORS)]) for i in range(len(runs))]
    labels = list(runs)
    if random is not None:
        for j, v in enumerate(random):
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                ax.plot([v, v], [j - 0.45, j + 0.45], ls="--", color="#555555", lw=1)
        handles.append(plt.Line2D([0], [0], ls="--", color="#555555"))
        labels.append("random-choice expectation")
    ax.set_yticks(range(len(categories)), categories, fontsize=9)
    ax.set_ylim(len(categories) - 0.5, -0.5)
    ax.set_xlim(0, 125)
    ax.set_xticks(range(0, 101, 20))
    ax.tick_params(axis="x", labelsize=9)
    ax.set_xlabel(xlabel, fontsize=9, loc="left")
    ax.grid(axis="x", color="#eeeeee")
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    ax.set_title(title, fontsize=11, loc="left")
    foot = ("bars: accuracy; black lines: 95% Wilson interval; n = scored questions; "
            "n/a = not scorable (no bar), distinct from 0% (a mark at zero)")
    foot = wrap(foot + (f". {note}" if note else ""), 130)
    ncol = 1 if max((len(s) for s in labels), default=0) > 55 else 2
    leg = fig.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.01, 0.0), ncol=ncol, fontsize=9,
                     frameon=False)
    fig.canvas.draw()
    leg_h = leg.get_window_extent().height / fig.dpi
    fig.text(0.01, (leg_h + 0.05) / fig_h, foot, fontsize=MIN_FONT, va="bottom", color="#444444")
    fig.tight_layout(rect=(0, (leg_h + 0.1 + 0.16 * (foot.count("\n") + 1)) / fig_h, 1, 1))
    return fig


def dimension_bars(runs, run_labels: list[str] | None = None, title: str | None = None):
    """Per-dimension accuracy of one or more runs: ``runs`` maps a label to a run's ``metrics``
    (its ``per_dimension`` entries give n, the interval and N/A), with the random-choice
    expectation. The title defaults to the benchmark's display name. (A table of percentages from
    :func:`mmbench_lib.analysis.tables.dimension_table` with ``run_labels`` is still accepted: no
    intervals then.)"""
    if isinstance(runs, pd.DataFrame):
        runs = _metrics_from_table(runs, run_labels or [])
    dims: dict[int, str] = {}
    for m in runs.values():
        for d in m.get("per_dimension", []):
            dims.setdefault(int(d["dimension_id"]), d["dimension"])
    order = sorted(dims)
    series, random = {}, {}
    for label, m in runs.items():
        by_id = {int(d["dimension_id"]): d for d in m.get("per_dimension", [])}
        series[label] = [by_id.get(i) for i in order]
        for i in order:
            r = (by_id.get(i) or {}).get("random_expected")
            if r is not None and not (isinstance(r, float) and math.isnan(r)):
                random.setdefault(i, 100 * float(r))
    bench = next((m.get("benchmark") for m in runs.values() if m.get("benchmark")), None)
    title = title or f"{display_name(bench)}: accuracy per evaluation dimension"
    return accuracy_bars([wrap(f"{i}. {dims[i]}", 34) for i in order], series, title=title,
                         random=[random.get(i) for i in order])


def _metrics_from_table(table: pd.DataFrame, labels: list[str]) -> dict[str, dict]:
    out = {}
    for label in labels:
        rows = []
        for _, r in table.iterrows():
            v = r[label]
            rows.append({"dimension_id": r["dimension_id"], "dimension": r["dimension"],
                         "n": int(r["n"]) if "n" in r and pd.notna(r["n"]) else 0,
                         "accuracy": None if pd.isna(v) else float(v) / 100,
                         "random_expected": (r.get("random (expected)") or math.nan) / 100})
        out[label] = {"per_dimension": rows}
    return out


def group_bars(runs, key: str = "per_discipline", title: str = "", run_labels: list[str] | None = None):
    """Accuracy per discipline (or another breakdown ``key`` of generation metrics: ``per_subject``,
    ``per_difficulty``, ...) of one or more runs (label -> metrics), with n and 95% intervals.
    (A table indexed by group with one percent column per label in ``run_labels`` is still accepted.)"""
    if isinstance(runs, pd.DataFrame):
        n = runs["n"] if "n" in runs else pd.Series(0, index=runs.index)
        runs = {label: {key: {str(g): {"n": int(n[g]) if pd.notna(n[g]) else 0, "accuracy": None if pd.isna(v) else v / 100}
                              for g, v in runs[label].items()}} for label in run_labels or []}
    names = list(dict.fromkeys(k for m in runs.values() for k in (m.get(key) or {})))
    # a run keyed by its own label ("random", "smollm2+ocr") is shown by its display name
    series = {(run_label(m) if label == m.get("label") else label): [(m.get(key) or {}).get(k) for k in names]
              for label, m in runs.items()}
    return accuracy_bars([wrap(k, 30) for k in names], series, title=title)


def save(fig, out_dir, name: str) -> list[Path]:
    """Save ``fig`` as ``<out_dir>/figures/<name>.png`` (at :data:`DPI`) and ``.svg``; returns the paths."""
    folder = Path(out_dir) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.png", folder / f"{name}.svg"]
    fig.savefig(paths[0], dpi=DPI)
    fig.savefig(paths[1])
    return paths


def smallest_font(fig) -> float:
    """The smallest font size (points) of any visible text in ``fig`` (tick labels included)."""
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes) if sizes else math.inf
