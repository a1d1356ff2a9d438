"""CircularEval and position bias for lettered multiple choice.

More: docs/modules.md, ``mmbench_lib/reports/circular.py``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from mmbench_lib.analysis.chance import row_chance, wilson
from mmbench_lib.analysis.plots import display_name, model_name
from mmbench_lib.analysis.reader import load_run, samples_df
from mmbench_lib.core.items import LETTERS
from mmbench_lib.core.metrics import SCHEMA_VERSION, ci_fractions, entry
from mmbench_lib.core.store import METRICS, RunStore, write_json_atomic
from mmbench_lib.core.uncertainty import SCORED
from mmbench_lib.models import load_adapter
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.pipeline.preflight import BadValue, check_order_matters
from mmbench_lib.reports import numbers, subruns
from mmbench_lib.tasks.options import movable, to_original
from mmbench_lib.tasks.base import get_task, is_task, load_items

REPORT_FILE = "circular.json"
ALL = "All"


def max_options(config: RunSpec) -> int:
    """The largest number of movable options among the lettered items ``config`` asks."""
    base = config.with_params(lettered_only=True, rotation=0, permutation_seed=None)
    items = base.select(load_items(base.benchmark, base.task.load_args()))
    if not items:
        raise ValueError(f"{config.benchmark}: no lettered multiple-choice item among the selected items")
    return max(len(movable(it)) for it in items)


def order_keys(config: RunSpec, permutations: int = 0) -> list[tuple[str, dict]]:
    """``(folder name, flat RunSpec parameters)`` of each order: every rotation, or the original order plus
    ``permutations - 1`` seeded permutations."""
    if permutations < 0 or permutations == 1:
        raise ValueError(f"permutations must be 0 (all cyclic rotations) or >= 2, got {permutations}")
    if permutations:
        return [("rot-0", {"rotation": 0})] + [(f"perm-{s}", {"permutation_seed": s}) for s in range(1, permutations)]
    return [(f"rot-{k}", {"rotation": k}) for k in range(max_options(config))]


def scope(config: RunSpec, permutations: int = 0) -> str:
    """One line: the lettered items the report asks (of all selected; a ``limit`` is a subsample, said so) and
    the orders each is asked under."""
    base = config.with_params(lettered_only=True, rotation=0, permutation_seed=None, limit=0)
    selected = load_items(base.benchmark, base.task.load_args())
    lettered = base.select(selected)
    used = min(config.selection.limit, len(lettered)) if config.selection.limit else len(lettered)
    sub = f"the first {used} (limit {config.selection.limit}: a subsample; limit 0 runs all) of " if used < len(lettered) else ""
    orders = (f"{permutations} orders (the original and {permutations - 1} seeded permutations)" if permutations
              else f"every cyclic rotation of its options (up to {max_options(config)})")
    return f"{config.benchmark}: {sub}{len(lettered)} lettered multiple-choice items (of {len(selected)} selected), each under {orders}"


def bias_line(r: "CircularReport") -> str:
    """The position-bias test in words."""
    b = r.position_bias
    if b.get("p_value") is None:
        return f"position bias: not testable ({b.get('rows', 0)} answered rows over letters {b.get('letters')})"
    return (f"position bias: predicted vs gold shown letters {'/'.join(b['letters'])}, chi-square {b['chi2']:.2f}, "
            f"p = {b['p_value']:.3g} over {b['rows']} answered rows (descriptive: an item's orders are not independent)")


def order_free(config: RunSpec) -> str | None:
    """Why an option-order check of ``config`` cannot find anything, or ``None``: a content-ranking recipe
    ranks each choice's text with no letter shown (SEED-Bench §3.4), so every order gives the same answer up
    to ties and each rotation would only repeat the plain run (``preflight.check_order_matters``, the check
    ``mmbench run`` makes before the run)."""
    try:
        check_order_matters(config.benchmark, config.task.recipe, 0)
    except BadValue as e:
        return f"recipe {config.task.recipe!r} {e}"
    return None


def order_runs(config: RunSpec, out_dir, permutations: int = 0, adapter=None) -> dict[str, Path]:
    """Evaluate ``config``'s lettered items under each order (module doc) as runs ``out_dir/<key>``,
    the model loaded once; rerunning resumes each. Returns ``{key: folder}``. ``config.num_shards > 1``:
    each order's run holds only that shard's items (the same items in every order); an order's run already
    merged from this report's shards (``reports.subruns``) is read, not run again."""
    base = config.with_params(lettered_only=True, rotation=0, permutation_seed=None)
    keys = order_keys(base, permutations)
    todo = [key for key, _ in keys if not subruns.merged(Path(out_dir) / key)]
    if todo and adapter is None and (not base.generates or base.generation.baseline in ("none", "ocr")):
        with subruns.step(f"loading {base.model.spec} (once, for every order)"):
            adapter = load_adapter(base.model.spec, **base.adapter_options())
    what = "rotation" if not permutations else "order"
    shard = f", shard {base.selection.shard_index} of {base.selection.num_shards}" if base.selection.num_shards > 1 else ""
    out = {}
    for k, (key, fields) in enumerate(keys, 1):
        out[key] = Path(out_dir) / key
        if key not in todo:
            continue
        cfg = base.with_params(out_dir=Path(out_dir) / key, parameters={**base.parameters, "option_order": key}, **fields)
        with subruns.step(f"{what} {k} of {len(keys)} ({key}){shard}"):
            runs.evaluate(cfg, adapter)
    if not shard and withheld(out):  # a test split: the task's submission file over every order
        submission(base, out, out_dir)
    return out


def withheld(order_folders: dict[str, str | Path]) -> bool:
    """Whether the order runs' answers are withheld (a test split: their metrics say ``scored`` false): no report."""
    found = [load_run(f).metrics for f in order_folders.values() if (Path(f) / METRICS).is_file()]
    return bool(found) and all(m.get("scored") is False for m in found)


def submission(config: RunSpec, order_folders: dict[str, str | Path], out_dir) -> Path | None:
    """On a split whose answers are withheld (a test split), the task's submission file in ``out_dir`` over every
    order run (``Task.write_submission``: each of the file's rows answered by the run that showed its option order);
    None when the items have answers or the task has no submission format."""
    items = config.select(load_items(config.benchmark, config.task.load_args()))
    if not items or any(it.answer is not None for it in items):
        return None
    rows = [r for folder in order_folders.values() if Path(folder).is_dir()
            for r in RunStore(folder, readonly=True).rows()]
    try:
        path = get_task(config.benchmark).write_submission(items, {}, rows, Path(out_dir))
    except NotImplementedError:
        return None
    print(f"answers withheld: no accuracy; submission file {path}", flush=True)
    return path


@dataclass
class CircularReport:
    """The report of one model's order runs (module doc); fractions."""

    benchmark: str
    model: str | None
    recipe: str | None
    mode: str  # "rotations" or "permutations"
    orders: list[str]
    rows: pd.DataFrame  # one row per (item, order): shown and original letters
    items: pd.DataFrame  # one row per item
    per_dimension: pd.DataFrame  # plain and circular entries per dimension and "All"
    letters: pd.DataFrame  # per shown letter: gold count, predicted count, accuracy when gold there
    position_bias: dict


def _key(v):
    return "|".join(v) if isinstance(v, list) else v


def _order_kind(run) -> tuple[bool, bool]:
    """(is the original order, is a seeded permutation) of a run, from its manifest."""
    opts = run.manifest.get("options") or {}
    perm = opts.get("permutation_seed") is not None
    return (not perm and not opts.get("rotation")), perm


def report(order_folders: dict[str, str | Path]) -> CircularReport:
    """The CircularEval report (module doc) of runs ``{key: folder}`` made by :func:`order_runs`."""
    loaded = {key: load_run(folder) for key, folder in order_folders.items()}
    kinds = {key: _order_kind(r) for key, r in loaded.items()}
    plain = [k for k, (ident, _) in kinds.items() if ident]
    if len(plain) != 1:
        raise ValueError(f"CircularEval needs exactly one run in the original order, got {plain or 'none'}")
    df = samples_df(list(loaded.values()))
    df["order"] = df["run"].map({r.key: key for key, r in loaded.items()})
    df["plain"] = df["order"] == plain[0]
    df["shown_pred"], df["shown_gold"] = df["prediction"].map(_key), df["answer"].map(_key)
    df["pred"] = [_key(to_original(p, o)) for p, o in zip(df["prediction"], df["option_order"])]
    df["gold"] = [_key(to_original(a, o)) for a, o in zip(df["answer"], df["option_order"])]
    df["chance"] = row_chance(df)
    df["scored"] = (df["status"] == SCORED) & df["correct"].notna()
    golds = df.groupby("id")["gold"].nunique(dropna=False)
    if (golds > 1).any():
        raise ValueError(f"answers of item(s) {list(golds[golds > 1].index[:5])} map back to different original "
                         f"options in different runs: the runs are not of the same data")
    items = _items(df)
    benches = df["benchmark"].dropna().unique()
    first = next(iter(loaded.values()))
    return CircularReport(
        benchmark=str(benches[0]) if len(benches) else first.benchmark, model=df["model"].iloc[0] if len(df) else None,
        recipe=df["recipe"].iloc[0] if len(df) else None,
        mode="permutations" if any(p for _, p in kinds.values()) else "rotations", orders=list(order_folders),
        rows=df, items=items, per_dimension=_per_dimension(items), letters=_letters(df), position_bias=_bias(df))


def _items(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for item_id, g in df.groupby("id", sort=False):
        ok = g[g["scored"]]
        preds = Counter("none" if p is None else str(p) for p in ok["pred"])
        plain = g[g["plain"]]
        out.append({
            "id": item_id, "dimension_id": g["dimension_id"].iloc[0], "dimension": g["dimension"].iloc[0],
            "cluster": g["cluster"].iloc[0], "orders": len(g), "answered": len(ok), "complete": len(ok) == len(g),
            "gold": g["gold"].iloc[0],
            "plain_correct": bool(plain["correct"].iloc[0]) if len(plain) and plain["scored"].iloc[0] else None,
            "circular_correct": bool(ok["correct"].astype(bool).all()) if len(ok) == len(g) else None,
            "mean_correct": float(ok["correct"].astype(bool).mean()) if len(ok) else None,
            "consistency": max(preds.values()) / len(ok) if len(ok) else None,
            "modal_prediction": preds.most_common(1)[0][0] if preds else None,
            "predictions": [None if p is None else str(p) for p in g["pred"]],
            "chance": float(g["chance"].iloc[0]), "chance_circular": float(np.prod(g["chance"])),
        })
    return pd.DataFrame(out)


def _entry_of(items: pd.DataFrame, col: str) -> dict:
    done = items[items["complete"]]
    n, c = len(done), int(done[col].astype(bool).sum())
    lo, hi = ci_fractions([{"id": i, "correct": bool(x), "cluster": cl, "status": SCORED}
                           for i, x, cl in zip(done["id"], done[col], done["cluster"])]) if n else (None, None)
    w_lo, w_hi = lo, hi  # the one interval rule (core.uncertainty), under the report's Wilson keys too
    return {**entry(c, n, failed=int((~items["complete"]).sum()), ci_low=lo, ci_high=hi),
            "wilson_low": w_lo, "wilson_high": w_hi}


def _per_dimension(items: pd.DataFrame) -> pd.DataFrame:
    rows = []
    groups = list(items.groupby(["dimension_id", "dimension"], sort=True, dropna=False)) + [((None, ALL), items)]
    for (d_id, dim), g in groups:
        done = g[g["complete"]]
        rows.append({"dimension_id": d_id, "dimension": dim, "plain": _entry_of(g, "plain_correct"),
                     "circular": _entry_of(g, "circular_correct"),
                     "mean_accuracy": float(done["mean_correct"].mean()) if len(done) else None,
                     "consistency": float(done["consistency"].mean()) if len(done) else None,
                     "consistent_share": float((done["consistency"] == 1).mean()) if len(done) else None,
                     "chance": float(done["chance"].mean()) if len(done) else None,
                     "chance_circular": float(done["chance_circular"].mean()) if len(done) else None})
    return pd.DataFrame(rows)


def _single(v) -> str | None:
    return v if isinstance(v, str) and len(v) == 1 else None


def _letters(df: pd.DataFrame) -> pd.DataFrame:
    ok = df[df["scored"]]
    gold = ok["shown_gold"].map(_single)
    pred = ok["shown_pred"].map(_single)
    used = sorted(set(gold.dropna()) | set(pred.dropna()), key=LETTERS.index)
    rows = []
    for letter in used:
        at = ok[gold == letter]
        c = int(at["correct"].astype(bool).sum())
        lo, hi = wilson(c, len(at))
        rows.append({"letter": letter, "gold": int((gold == letter).sum()), "predicted": int((pred == letter).sum()),
                     "correct_when_gold": c, "accuracy_when_gold": c / len(at) if len(at) else None,
                     "wilson_low": lo, "wilson_high": hi})
    rows.append({"letter": "other", "gold": int(gold.isna().sum()), "predicted": int(pred.isna().sum()),
                 "correct_when_gold": None, "accuracy_when_gold": None, "wilson_low": None, "wilson_high": None})
    return pd.DataFrame(rows)


def _bias(df: pd.DataFrame) -> dict:
    """Chi-square of the predicted single letters against the gold letters' distribution (scaled to the
    same total), over the letters that are ever gold. Descriptive: the orders of one item are not
    independent draws."""
    letters = _letters(df)
    t = letters[(letters["letter"] != "other") & (letters["gold"] > 0)]
    obs = t["predicted"].to_numpy(float)
    if len(t) < 2 or obs.sum() == 0:
        return {"chi2": None, "p_value": None, "letters": list(t["letter"]), "rows": int(obs.sum())}
    exp = t["gold"].to_numpy(float) * obs.sum() / t["gold"].sum()
    res = stats.chisquare(obs, exp)
    return {"chi2": float(res.statistic), "p_value": float(res.pvalue), "letters": list(t["letter"]),
            "rows": int(obs.sum()), "note": "predicted vs gold shown letters (chi-square goodness of fit); "
                                            "descriptive, the orders of one item are not independent"}


def summary_table(r: CircularReport) -> pd.DataFrame:
    """Per dimension and overall, in percent: items, plain and circular accuracy with Wilson 95% intervals,
    mean accuracy over the orders, consistency and the chance of each."""
    rows = []
    for x in r.per_dimension.itertuples():
        rows.append({"dimension": x.dimension, "items": x.plain["n"], "incomplete": x.plain["failed"],
                     "plain %": _pct(x.plain["accuracy"]), "plain low": _pct(x.plain["wilson_low"]),
                     "plain high": _pct(x.plain["wilson_high"]), "circular %": _pct(x.circular["accuracy"]),
                     "circular low": _pct(x.circular["wilson_low"]), "circular high": _pct(x.circular["wilson_high"]),
                     "mean over orders %": _pct(x.mean_accuracy), "consistency %": _pct(x.consistency),
                     "fully consistent %": _pct(x.consistent_share), "chance %": _pct(x.chance),
                     "chance circular %": _pct(x.chance_circular)})
    return pd.DataFrame(rows)


def _pct(v):
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else 100 * v


def headline_table(r: CircularReport) -> pd.DataFrame:
    """Per dimension (subject) and overall, in percent (one decimal): items, plain accuracy (original order),
    circular accuracy (right under every order), mean accuracy over the orders, each accuracy with its 95%
    interval, and the chance of passing every order by guessing."""
    t = summary_table(r)

    def one(v):
        return None if v is None or pd.isna(v) else round(float(v), 1)

    return pd.DataFrame({
        "dimension": t["dimension"].map(lambda d: str(d).replace("_", " ")), "items": t["items"],
        "incomplete": t["incomplete"], "plain %": t["plain %"].map(one), "plain 95%": _interval(r, "plain"),
        "circular %": t["circular %"].map(one), "circular 95%": _interval(r, "circular"),
        "mean over orders %": t["mean over orders %"].map(one), "chance circular %": t["chance circular %"].map(one)})


def _interval(r: CircularReport, kind: str) -> list:
    """Each row's ``plain`` / ``circular`` interval cell, as every table prints one (``numbers.interval_cell``)."""
    return [numbers.interval_cell(e["wilson_low"], e["wilson_high"]) for e in r.per_dimension[kind]]


def write(r: CircularReport, out_dir) -> Path:
    """``circular.json`` in ``out_dir``: the report's entries (shared metrics schema plus Wilson bounds),
    the letter table and the position-bias test; returns its path."""
    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, float) and np.isnan(v):
            return None
        return v.item() if hasattr(v, "item") else v

    dims = {str(x.dimension): clean({k: getattr(x, k) for k in ("plain", "circular", "mean_accuracy", "consistency",
                                                                 "consistent_share", "chance", "chance_circular")})
            for x in r.per_dimension.itertuples()}
    body = {"schema_version": SCHEMA_VERSION, "benchmark": r.benchmark, "model": r.model, "recipe": r.recipe,
            "mode": r.mode, "orders": r.orders, "overall": dims.pop(ALL), "per_dimension": dims,
            "letters": [clean(x) for x in r.letters.to_dict("records")], "position_bias": clean(r.position_bias),
            "notes": {"plain": "the original option order", "circular": "right under every order (CircularEval)",
                      "consistency": "share of orders naming the item's most frequent original option",
                      "chance_circular": "probability of passing every order by guessing"}}
    path = Path(out_dir) / REPORT_FILE
    write_json_atomic(path, body)
    return path


def figure(r: CircularReport, title: str = ""):
    """(a) plain and circular accuracy per dimension (subject) with 95% Wilson intervals, chance ticks;
    (b) the shown letters: gold against predicted (share of answered rows); (c) accuracy by the position
    of the gold letter with 95% Wilson intervals."""
    d = r.per_dimension.reset_index(drop=True)
    k = len(d)
    fig, (ax, bx, cx) = plt.subplots(1, 3, figsize=(12, max(3.4, 0.36 * k + 2.3)), layout="constrained",
                                     gridspec_kw={"width_ratios": [1.5, 1, 1]})
    colors = {"plain": "#1f77b4", "circular": "#d62728"}
    for i, kind in enumerate(("plain", "circular")):
        e = pd.DataFrame(list(d[kind]))
        acc = 100 * e["accuracy"].astype(float)
        ys = np.arange(k) + (i - 0.5) * 0.3
        ax.errorbar(acc, ys, xerr=[acc - 100 * e["wilson_low"].astype(float), 100 * e["wilson_high"].astype(float) - acc],
                    fmt="o" if kind == "plain" else "D", color=colors[kind], ms=5, elinewidth=1.1, capsize=2,
                    label=f"{kind} ({'original order' if kind == 'plain' else 'right under every order'})")
    for y, (ch, chc) in enumerate(zip(d["chance"], d["chance_circular"])):
        for val, ls, lab in ((ch, "-", "chance, one order"), (chc, ":", "chance, every order")):
            if val is not None and not pd.isna(val):
                ax.plot([100 * val] * 2, [y - 0.4, y + 0.4], color="0.45", lw=1.6, ls=ls, label=lab if y == 0 else None)
    labels = []
    for d_id, dim, e in zip(d["dimension_id"], d["dimension"], d["plain"]):
        num = f"{int(d_id)}. " if d_id is not None and not pd.isna(d_id) and dim != ALL and is_task(r.benchmark) and get_task(r.benchmark).numbered_dimensions else ""
        labels.append(f"{num}{str(dim).replace('_', ' ')} (n={e['n']})")
    ax.set_yticks(range(k), labels)
    ax.set_ylim(k - 0.4, -0.6)
    ax.axhline(k - 1.5, color="0.6", lw=0.8)
    ax.set_xlim(-2, 102)
    ax.set_xlabel("accuracy (%), 95% Wilson interval", fontsize=9)
    ax.set_title("(a) plain vs circular accuracy", fontsize=9)

    t = r.letters[r.letters["letter"] != "other"].reset_index(drop=True)
    x = np.arange(len(t))
    total_g, total_p = max(t["gold"].sum(), 1), max(r.letters["predicted"].sum(), 1)
    bx.bar(x - 0.2, 100 * t["gold"] / total_g, width=0.4, color="0.65", label=f"gold letter (n={int(t['gold'].sum())})")
    bx.bar(x + 0.2, 100 * t["predicted"] / total_p, width=0.4, color="#9467bd",
           label=f"predicted letter (n={int(r.letters['predicted'].sum())})")
    other = int(r.letters.loc[r.letters["letter"] == "other", "predicted"].sum())
    bx.set_xticks(x, list(t["letter"]))
    bias = r.position_bias
    p = bias.get("p_value")
    bx.set_title("(b) shown letters" + (f": chi-square p = {p:.2g}" if p is not None else ""), fontsize=9)
    bx.set_ylabel("share of answered rows (%)", fontsize=9)
    bx.set_xlabel("letter" + (f" ({other} predictions not one letter)" if other else ""), fontsize=9)

    acc = 100 * t["accuracy_when_gold"].astype(float)
    cx.bar(x, acc, width=0.6, color="#2ca02c", alpha=0.8)
    cx.errorbar(x, acc, yerr=[acc - 100 * t["wilson_low"].astype(float), 100 * t["wilson_high"].astype(float) - acc],
                fmt="none", ecolor="0.2", elinewidth=1, capsize=3)
    for xi, n in zip(x, t["gold"]):
        cx.text(xi, 101, f"n={int(n)}", ha="center", va="bottom", fontsize=8)
    cx.set_xticks(x, list(t["letter"]))
    cx.set_ylim(0, 110)
    cx.set_yticks([0, 25, 50, 75, 100])
    cx.set_xlabel("letter the gold option is shown at", fontsize=9)
    cx.set_ylabel("accuracy (%), 95% Wilson interval", fontsize=9)
    cx.set_title("(c) accuracy by gold position", fontsize=9)
    for axis in (ax, bx, cx):
        axis.tick_params(labelsize=8)
        axis.grid(axis="x" if axis is ax else "y", color="0.9", lw=0.6)
        axis.set_axisbelow(True)
    handles = [h for axis in (ax, bx) for h in axis.get_legend_handles_labels()[0]]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    name = display_name(r.benchmark)
    what = "all cyclic rotations" if r.mode == "rotations" else f"{len(r.orders)} option orders"
    fig.suptitle(title or f"CircularEval on {name}: {model_name(r.model)} ({r.recipe}), {what}", fontsize=10)
    return fig
