"""Blind-solvability audit: how much of a benchmark a model answers without seeing the images.

More: docs/modules.md, ``mmbench_lib/reports/blind.py``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from mmbench_lib.analysis import subsets
from mmbench_lib.analysis.plots import display_name, model_name
from mmbench_lib.analysis.chance import chance_test, holm, row_chance
from mmbench_lib.analysis.reader import load_run, samples_df
from mmbench_lib.core.metrics import SCHEMA_VERSION, ci_fractions, entry
from mmbench_lib.core.store import write_json_atomic
from mmbench_lib.core.uncertainty import SCORED
from mmbench_lib.models import load_adapter
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.pipeline.generation import label_for
from mmbench_lib.pipeline.runs import evaluate
from mmbench_lib.reports import subruns
from mmbench_lib.tasks.base import canonical_name, get_task

AUDIT_FILE = "blind_audit.json"
ALL = "All"


def folder_label(spec: str) -> str:
    """A blind model's label (``pipeline.generation.label_for``) made safe as a folder name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label_for(spec, "none"))


def blind_runs(config: RunSpec, models, out_dir, adapters: dict | None = None) -> dict[str, Path]:
    """Evaluate ``config``'s items with each text-only model of ``models`` (specs), each as its own
    resumable run ``out_dir/blind__<label>``; returns ``{label: folder}``. A model that sees images is
    a ValueError (the audit withholds the images). ``adapters``: already loaded models by spec.
    ``config.num_shards > 1``: each run holds only that shard's items; a run already merged from this
    report's shards (``reports.subruns``) is read, not run again."""
    out = {}
    for k, spec in enumerate(models, 1):
        label = folder_label(spec)
        folder = Path(out_dir) / f"blind__{label}"
        if subruns.merged(folder):
            out[label] = folder
            continue
        cfg = config.with_params(out_dir=folder, model=spec, baseline="none",
                                 parameters={**config.parameters, "blind_model": spec})
        adapter = None
        shard = f", shard {cfg.selection.shard_index} of {cfg.selection.num_shards}" if cfg.selection.num_shards > 1 else ""
        with subruns.step(f"blind model {k} of {len(models)}: {spec} without the images{shard}"):
            if not cfg.generates or cfg.generation.baseline == "none":
                adapter = (adapters or {}).get(spec) or load_adapter(spec, **cfg.adapter_options())
                if getattr(adapter, "sees_images", True):
                    raise ValueError(f"blind model {spec!r} sees images; the blind audit needs text-only models "
                                     f"(smollm2, causal:<id>, random), which answer from the text alone")
            evaluate(cfg, adapter)
        out[label] = folder
    return out


@dataclass
class BlindAudit:
    """The audit of one benchmark's blind runs (module doc); tables in fractions."""

    benchmark: str
    split: str | None
    models: list[dict]
    per_model: pd.DataFrame  # label, dimension_id, dimension, n, correct, accuracy, wilson_*, ci_*, chance, p_value, p_holm
    solvable: pd.DataFrame  # dimension_id, dimension, n, blind_solvable, share, expected_share (by luck)
    ids: list[str]
    n_items: int


def _model_rows(label: str, df: pd.DataFrame) -> list[dict]:
    rows = []
    groups = [((d_id, d), g) for (d_id, d), g in df.groupby(["dimension_id", "dimension"], sort=True, dropna=False)]
    for (d_id, dim), g in groups + [((None, ALL), df)]:
        ok = g[(g["status"] == SCORED) & g["correct"].notna()]
        n, c = len(ok), int(ok["correct"].astype(bool).sum())
        b_lo, b_hi = ci_fractions(ok[["id", "correct", "cluster"]].assign(status=SCORED).to_dict("records")) if n \
            else (None, None)
        lo, hi = b_lo, b_hi  # the one interval rule (core.uncertainty); kept under both keys of blind_audit.json
        rows.append({"label": label, "dimension_id": d_id, "dimension": dim, "n": n, "correct": c,
                     "accuracy": c / n if n else None, "wilson_low": lo, "wilson_high": hi, "ci_low": b_lo,
                     "ci_high": b_hi, "chance": float(ok["chance"].mean()) if n else None,
                     "p_value": chance_test(c, ok["chance"]) if n else None,
                     "failed": int((g["status"] == "failed").sum())})
    dims = [r for r in rows if r["dimension"] != ALL]
    for r, p in zip(dims, holm([np.nan if r["p_value"] is None else r["p_value"] for r in dims])):
        r["p_holm"] = None if np.isnan(p) else p
    rows[-1]["p_holm"] = rows[-1]["p_value"]  # one test overall: nothing to adjust
    return rows


def audit(runs: dict[str, str | Path]) -> BlindAudit:
    """The audit (module doc) of blind runs ``{label: folder}`` of one benchmark, read through
    ``analysis.reader``. ValueError if the runs are of different benchmarks or splits."""
    loaded = {label: load_run(folder) for label, folder in runs.items()}
    df = samples_df(list(loaded.values()))
    label_of = {r.key: label for label, r in loaded.items()}
    df["label"] = df["run"].map(label_of)
    df["chance"] = row_chance(df)
    benches = set(df["benchmark"].dropna().map(canonical_name))
    splits = set(df["split"].dropna())
    if len(benches) != 1 or len(splits) > 1:
        raise ValueError(f"blind runs of different benchmarks or splits: {sorted(benches)} {sorted(splits)}")
    per_model = pd.DataFrame([r for label in runs for r in _model_rows(label, df[df["label"] == label])])

    ok = df[(df["status"] == SCORED) & df["correct"].notna()]
    wide = ok.pivot_table(index="id", columns="label", values="correct", aggfunc="last").reindex(columns=list(runs))
    answered = wide.dropna()  # items every blind model answered
    solved = answered.astype(bool).all(axis=1)
    info = ok.drop_duplicates("id").set_index("id").loc[answered.index]
    info = info.assign(solved=solved, expected=info["chance"] ** len(runs))
    sol = []
    dims = [(d_id, dim) for (d_id, dim), _ in df.groupby(["dimension_id", "dimension"], sort=True, dropna=False)]
    for d_id, dim in dims + [(None, ALL)]:
        g = info if dim == ALL else info[(info["dimension"] == dim)]
        sol.append({"dimension_id": d_id, "dimension": dim, "n": len(g), "blind_solvable": int(g["solved"].sum()),
                    "share": g["solved"].mean() if len(g) else None,
                    "expected_share": g["expected"].mean() if len(g) else None})
    models = [{"label": label, "model": r.samples["model"].iloc[0] if len(r.samples) else None, "run": r.key,
               "recipe": r.samples["recipe"].iloc[0] if len(r.samples) else None} for label, r in loaded.items()]
    split = next(iter(splits)) if splits and get_task(next(iter(benches))).takes_split() else None
    return BlindAudit(benchmark=next(iter(benches)), split=split, models=models, per_model=per_model,
                      solvable=pd.DataFrame(sol), ids=sorted(solved[solved].index.astype(str)), n_items=len(answered))


def write(a: BlindAudit, out_dir) -> dict[str, Path]:
    """``blind_solvable.json`` and ``blind_audit.json`` in ``out_dir`` (module doc); returns their paths."""
    out_dir = Path(out_dir)
    per_dim = {str(r.dimension): {"n": int(r.n), "blind_solvable": int(r.blind_solvable)}
               for r in a.solvable.itertuples() if r.dimension != ALL}
    ids_path = subsets.write_blind_ids(out_dir / subsets.BLIND_FILE, a.benchmark, a.ids, split=a.split, models=a.models,
                                       n_items=a.n_items, per_dimension=per_dim)

    def extended(r) -> dict:
        e = entry(r["correct"], r["n"], failed=r["failed"], ci_low=r["ci_low"], ci_high=r["ci_high"])
        return {**e, **{k: r[k] for k in ("chance", "p_value", "p_holm", "wilson_low", "wilson_high")}}

    body = {"schema_version": SCHEMA_VERSION, "benchmark": a.benchmark, "split": a.split, "models": a.models,
            "rule": subsets.RULE, "test": "exact one-sided test of accuracy <= chance (Poisson binomial; binomial "
                                          "when every item has the same number of options); Holm over dimensions",
            "chance": "Random Choice expectation per item (mmbench_lib.analysis.chance)",
            "per_model": {}, "blind_solvable": _records(a.solvable), "n_items": a.n_items, "ids": a.ids}
    for label, g in a.per_model.groupby("label", sort=False):
        recs = _records(g)
        body["per_model"][label] = {"overall": extended(recs[-1]),
                                    "per_dimension": {str(r["dimension"]): extended(r) for r in recs[:-1]}}
    audit_path = out_dir / AUDIT_FILE
    write_json_atomic(audit_path, body)
    return {"ids": ids_path, "audit": audit_path}


def _records(df: pd.DataFrame) -> list[dict]:
    recs = df.astype(object).where(df.notna(), None).to_dict("records")
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in recs]


def _pct(v):
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else 100 * v


def table(a: BlindAudit) -> pd.DataFrame:
    """Per model and dimension, in percent: n, blind accuracy with its Wilson interval (core.uncertainty),
    chance, the exact p-value and its Holm adjustment; then the items every model solved."""
    t = a.per_model.copy()
    for c in ("accuracy", "wilson_low", "wilson_high", "chance"):
        t[c] = t[c].map(_pct)
    t = t.drop(columns=["ci_low", "ci_high"]).rename(columns={"accuracy": "blind %", "wilson_low": "Wilson low", "wilson_high": "Wilson high",
                          "ci_low": "bootstrap low", "ci_high": "bootstrap high", "chance": "chance %",
                          "p_value": "p (> chance)", "p_holm": "p Holm"})
    s = a.solvable.assign(**{"solved by all %": a.solvable["share"].map(_pct),
                             "expected by luck %": a.solvable["expected_share"].map(_pct)})
    s = s.rename(columns={"n": "answered by all", "blind_solvable": "solved by all"})
    t = t.merge(s.drop(columns=["share", "expected_share"]), on=["dimension_id", "dimension"], how="left")
    t["dimension_id"] = t["dimension_id"].astype("Int64")
    for c in ("p (> chance)", "p Holm"):  # three significant digits, not the tables' one decimal
        t[c] = t[c].map(lambda v: "" if v is None or pd.isna(v) else f"{v:.3g}")
    return t


def headline_table(a: BlindAudit) -> pd.DataFrame:
    """Per dimension (subject) and overall: items, each blind model's correct count and accuracy (%), the items
    every blind model solved, and how many luck alone would give (the expected count if every model guessed)."""
    s = a.solvable.set_index("dimension")
    rows = []
    for dim in s.index:
        row = {"dimension": str(dim).replace("_", " ")}
        for label, g in a.per_model.groupby("label", sort=False):
            r = g[g["dimension"] == dim].iloc[0]
            row[f"{label} n"] = int(r["n"])
            row[f"{label} correct"] = int(r["correct"])
            row[f"{label} %"] = None if r["accuracy"] is None or pd.isna(r["accuracy"]) else round(100 * r["accuracy"], 1)
            row[f"{label} chance %"] = None if r["chance"] is None or pd.isna(r["chance"]) else round(100 * r["chance"], 1)
        x = s.loc[dim]
        row["solved by all"] = int(x["blind_solvable"])
        row["expected by luck"] = None if pd.isna(x["expected_share"]) else round(float(x["expected_share"]) * int(x["n"]), 1)
        rows.append(row)
    return pd.DataFrame(rows)


def _dimension_labels(df: pd.DataFrame) -> list[str]:
    out = []
    for d_id, dim, n in zip(df["dimension_id"], df["dimension"], df["n"]):
        num = f"{int(d_id)}. " if d_id is not None and not pd.isna(d_id) and dim != ALL else ""
        out.append(f"{num}{str(dim).replace('_', ' ')} (n={int(n)})")
    return out


def figure(a: BlindAudit, title: str = ""):
    """Left: blind accuracy per dimension (subject) and model with 95% Wilson intervals against chance
    (grey bar); filled markers are above chance after Holm's correction (p < 0.05). Right: the share of
    items every blind model answered correctly (count at the right), with the share expected by luck."""
    labels = list(dict.fromkeys(a.per_model["label"]))
    shown = {m["label"]: model_name(m.get("model") or m["label"]) for m in a.models}
    first = a.per_model[a.per_model["label"] == labels[0]].reset_index(drop=True)
    ylabels = _dimension_labels(first)
    k = len(ylabels)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 0.32 * k * max(1, len(labels) / 2) + 2.2), sharey=True,
                                 layout="constrained", gridspec_kw={"width_ratios": [1.5, 1]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    step = 0.6 / max(len(labels), 1)
    for y, ch in enumerate(first["chance"]):
        if ch is not None and not pd.isna(ch):
            ax.plot([100 * ch] * 2, [y - 0.4, y + 0.4], color="0.55", lw=2.5, solid_capstyle="butt",
                    label="chance (Random Choice)" if y == 0 else None, zorder=1)
    for i, label in enumerate(labels):
        g = a.per_model[a.per_model["label"] == label].reset_index(drop=True)
        ys = np.arange(k) + (i - (len(labels) - 1) / 2) * step
        acc = 100 * g["accuracy"].astype(float)
        lo = acc - 100 * g["wilson_low"].astype(float)
        hi = 100 * g["wilson_high"].astype(float) - acc
        ax.errorbar(acc, ys, xerr=[lo, hi], fmt="none", ecolor=colors[i % 10], elinewidth=1.1, capsize=2, zorder=2)
        sig = (g["p_holm"].astype(float) < 0.05).to_numpy()
        ax.scatter(acc[sig], ys[sig], color=colors[i % 10], s=28, zorder=3)
        ax.scatter(acc[~sig], ys[~sig], facecolor="white", edgecolor=colors[i % 10], s=28, zorder=3)
        ax.scatter([], [], color=colors[i % 10], s=28,
                   label=f"{shown.get(label, label)} (filled: above chance, Holm p < 0.05)")
    s = a.solvable.reset_index(drop=True)
    share = 100 * s["share"].astype(float)
    bx.barh(range(len(s)), share, height=0.55, color="#8c6bb1", label="solved by every blind model", zorder=2)
    zero = np.flatnonzero((share == 0).to_numpy())  # 0% is a mark at zero, not a missing bar
    bx.plot([0] * len(zero), zero, "|", color="#8c6bb1", ms=11, mew=2.5, zorder=2)
    for y, (e, solved, n) in enumerate(zip(100 * s["expected_share"].astype(float), s["blind_solvable"], s["n"])):
        bx.plot([e, e], [y - 0.4, y + 0.4], color="0.15", lw=1.4, ls=(0, (2, 1.5)), zorder=3,
                label="expected if every model guessed" if y == 0 else None)
        bx.text(103, y, f"{int(solved)}/{int(n)}", va="center", ha="left", fontsize=8)
    for axis, xlabel, xmax in ((ax, "blind accuracy (%), 95% Wilson interval", 102),
                               (bx, "items solved by every blind model (%)", 118)):
        axis.axhline(k - 1.5, color="0.6", lw=0.8)
        axis.set_xlim(-2, xmax)
        axis.set_xticks([0, 25, 50, 75, 100])
        axis.set_xlabel(xlabel, fontsize=9)
        axis.tick_params(labelsize=8)
        axis.grid(axis="x", color="0.9", lw=0.6)
        axis.set_axisbelow(True)
    ax.set_yticks(range(k), ylabels)
    ax.set_ylim(k - 0.4, -0.6)
    handles = [h for axis in (ax, bx) for h in axis.get_legend_handles_labels()[0]]
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8, frameon=False)
    name = display_name(a.benchmark) + (f" {a.split}" if a.split else "")
    who = ", ".join(shown.get(label, label) for label in labels)
    fig.suptitle(title or f"Blind-solvability of {name}: {who} without the images", fontsize=10)
    return fig
