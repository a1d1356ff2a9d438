"""Drawing the papers' figures from the tables :mod:`mmbench_lib.paper` builds (published rows plus
our runs): SEED v1 Fig. 5 leaderboards, the rank heat-maps (SEED v1 Fig. 6, SEED-2 Fig. 5), MMMU
Table 12 by image type, the GPT-4V error distributions and the paired comparison of our runs.

Shared rules (:mod:`mmbench_lib.analysis.plots`): no text under 8 pt at the saved size, display
names in titles, N/A drawn as a grey "n/a" and never as a bar or a colour of the value scale, our
runs in red with their 95% interval and n, long labels replaced by short keys explained under the
figure.
"""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import colors as mcolors  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from mmbench_lib import published
from mmbench_lib.analysis.plots import MIN_FONT, NA_COLOR, NA_FILL, display_name, wrap
from mmbench_lib.core.uncertainty import wilson_interval

OURS_COLOR = "#c0392b"
PAPER_COLOR = "#4a7ab5"
TOP5_COLOR = "#f2c14e"  # "in the top 5, order not legible" (SEED v1 Fig. 5 ranks 1-5)
OURS = "ours"


def _foot(fig, text: str, width: int = 150) -> float:
    """A footnote at the bottom left; returns its height as a fraction of the figure."""
    text = "\n".join(wrap(line, width) for line in text.split("\n"))
    fig.text(0.01, 0.006, text, fontsize=MIN_FONT, va="bottom", ha="left", color="#333333")
    return (0.17 * (text.count("\n") + 1) + 0.08) / fig.get_figheight()


def ours_keys(labels) -> dict[str, str]:
    """Our run labels -> short keys ``ours 1``, ``ours 2``, ... (in order of appearance)."""
    return {label: f"ours {k}" for k, label in enumerate(dict.fromkeys(labels), start=1)}


def _key_text(keys: dict[str, str]) -> str:
    return "\n".join(f"{k} = {label.replace(' (ours)', '')}" for label, k in keys.items())


# --------------------------------------------------------------------------- SEED v1 Fig. 5
def leaderboards(table: pd.DataFrame, ncols: int = 4):
    """SEED v1 Fig. 5: one horizontal bar chart per dimension. Published bars in printed-rank order
    (ranks 6-18 legible; a printed but illegible value is written "not legible", no bar); our runs on
    top in red under short keys (``ours 1``...) explained under the figure, each with its 95%
    interval and n."""
    dims = table[["dimension_id", "dimension"]].drop_duplicates("dimension_id").sort_values("dimension_id")
    keys = ours_keys(table.loc[table["origin"] == OURS, "model"])
    nrows = math.ceil(len(dims) / ncols)
    rows_max = max(len(table[table["dimension_id"] == d]) for d in dims["dimension_id"])
    panel_h = 0.21 * rows_max + 0.75
    foot_lines = 3 + len(keys)
    fig_h = panel_h * nrows + 0.6 + 0.17 * foot_lines
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, fig_h), squeeze=False)
    for ax, (_, d) in zip(axes.flat, dims.iterrows()):
        sub = table[table["dimension_id"] == d["dimension_id"]]
        rows = [(keys[r["model"]], r, True) for _, r in sub[sub["origin"] == OURS].iterrows()]
        rows += [(f"{int(r['rank'])}. {r['model']}", r, False)
                 for _, r in sub[sub["origin"] != OURS].sort_values("rank").iterrows()]
        for y, (label, r, ours) in enumerate(rows):
            v = r["accuracy"]
            if pd.isna(v):
                ax.text(1, y, "n/a (no run)" if ours else "not legible", va="center", fontsize=MIN_FONT,
                        color=NA_COLOR, style="italic")
                continue
            color = OURS_COLOR if ours else PAPER_COLOR
            ax.barh(y, v, color=color, height=0.75)
            right, text = v, f"{v:.2f}"
            if ours:
                lo, hi = r.get("accuracy_ci_low"), r.get("accuracy_ci_high")
                if pd.notna(lo) and pd.notna(hi):
                    ax.errorbar(v, y, xerr=[[v - lo], [hi - v]], fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
                    right = hi
                n = r.get("n")
                text = f"{v:.1f} (n={int(n)})" if pd.notna(n) else f"{v:.1f}"
                if v == 0:
                    ax.plot([0], [y], marker="D", ms=4, color=color, clip_on=False, zorder=3)
            ax.text(right + 1.5, y, text, va="center", fontsize=MIN_FONT)
        ax.set_yticks(range(len(rows)), [label for label, *_ in rows], fontsize=MIN_FONT)
        for t, (_, _, ours) in zip(ax.get_yticklabels(), rows):
            if ours:
                t.set_color(OURS_COLOR)
                t.set_fontweight("bold")
        ax.set_ylim(rows_max - 0.5, -0.5)
        ax.set_xlim(0, 118)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.tick_params(axis="x", labelsize=MIN_FONT)
        for spine in ("top", "right"):
            ax.spines[spine].set_visible(False)
        ax.set_title(f"({int(d['dimension_id'])}) {d['dimension']}", fontsize=10)
    for ax in list(axes.flat)[len(dims):]:
        ax.axis("off")
    fig.suptitle("SEED-Bench, Fig. 5: leaderboard of each evaluation dimension (accuracy %)", fontsize=12)
    foot = ("Published: ranks 6-18 as printed (ranks 1-5 are not legible in the paper; one rank 4 is given in its "
            "text); 'not legible' = a value printed but unreadable. Published rows carry no item-level data: no interval.")
    if keys:
        foot += ("\nRed: our runs (not ranked), with 95% Wilson intervals (black) and n = scored questions:\n"
                 + _key_text(keys))
    bottom = _foot(fig, foot, 190)
    fig.tight_layout(rect=(0, bottom, 1, 1 - 0.45 / fig_h))
    return fig


# --------------------------------------------------------------------------- rank heat-maps
def _rank_colors(ranks: np.ndarray, top: int):
    """One colour per rank, the same in every column (rank 1 darkest)."""
    cmap = plt.get_cmap("Blues")
    norm = mcolors.Normalize(vmin=1, vmax=max(top, 2))
    shade = lambda r: cmap(0.95 - 0.8 * norm(r))  # noqa: E731
    return shade, cmap, norm


def rank_heatmap(df: pd.DataFrame, value_cols, *, col_labels=None, ranks_given: bool = False, model_col: str = "model",
                 cell_text: pd.DataFrame | None = None, intervals: pd.DataFrame | None = None, title: str = "",
                 note: str = "", unranked=None, present: pd.DataFrame | None = None):
    """Rank heat-map (SEED-2 Fig. 5 / SEED v1 Fig. 6): rows = models, columns = levels or dimensions,
    the rank written in each cell and its colour fixed by the rank alone (rank 1 darkest, one scale for
    every column, shown as a colour bar). Cells with no rank are light grey with "n/a"; a
    ``cell_text`` such as "1-5" (in the top 5, order not legible) gets its own amber colour. Our rows
    (``source == "ours"``) are labelled in red; ``intervals`` ("2-5") is written under their rank:
    the 95% bootstrap rank interval. ``unranked``: per row, why it is not comparable with the papers' rows
    (demo data, a subset, a random-weight model; empty: ranked): such a row is drawn apart, hatched, "not ranked",
    with its reason under its name, and takes no rank (the caller ranks without it); ``present`` (bools, as
    ``value_cols``): whether such a row has a value in a column (no value: "n/a" as for any row)."""
    value_cols = list(value_cols)
    unranked = [str(u or "") for u in (unranked if unranked is not None else [""] * len(df))]
    if ranks_given:
        ranks = df[value_cols].astype(float).to_numpy()
    else:
        ranks = np.array([published.competition_rank(df[c].astype(float).tolist()) for c in value_cols], dtype=float).T
    nrow, ncol = ranks.shape
    top = int(np.nanmax(ranks)) if np.isfinite(ranks).any() else 2
    shade, cmap, norm = _rank_colors(ranks, top)
    with_iv = intervals is not None and (intervals[value_cols] != "").to_numpy().any()
    row_h = 0.46 if with_iv or any(unranked) else 0.3
    names = [f"{m}\nnot ranked: {u}" if u else str(m) for m, u in zip(df[model_col], unranked)]
    label_w = 0.075 * max(len(line) for m in names for line in m.split("\n")) + 0.3
    fig_w = max(6.0, 0.72 * ncol + label_w + 1.3)
    foot_h = 0.75 + 0.17 * (note.count("\n") + 2 + len(note) // 150)
    fig_h = row_h * nrow + 1.9 + foot_h
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    rgba = np.zeros((nrow, ncol, 4))
    texts = []
    for i in range(nrow):
        for j in range(ncol):
            r = ranks[i, j]
            extra = cell_text.iloc[i][value_cols[j]] if cell_text is not None else ""
            interval = intervals.iloc[i][value_cols[j]] if intervals is not None else ""
            if unranked[i] and (present is None or bool(present.iloc[i][value_cols[j]])):
                rgba[i, j] = mcolors.to_rgba("#f4f4f4")
                texts.append((i, j, "not ranked", "", NA_COLOR))
            elif not np.isnan(r):
                rgba[i, j] = shade(r)
                dark = norm(r) < 0.55
                texts.append((i, j, str(int(r)), interval, "white" if dark else "black"))
            elif extra:
                rgba[i, j] = mcolors.to_rgba(TOP5_COLOR)
                texts.append((i, j, extra, "", "black"))
            else:
                rgba[i, j] = mcolors.to_rgba(NA_FILL)
                texts.append((i, j, "n/a", "", NA_COLOR))
    ax.imshow(rgba, extent=(0, ncol, nrow, 0), aspect="auto", interpolation="nearest")
    for i in [k for k, u in enumerate(unranked) if u]:  # drawn apart: hatched over the whole row
        ax.add_patch(matplotlib.patches.Rectangle((0, i), ncol, 1, fill=False, hatch="///", edgecolor="#bbbbbb", lw=0))
    for i, j, main, interval, color in texts:
        x, y = j + 0.5, i + 0.5  # cell (i, j) covers [j, j+1] x [i, i+1]
        na = main in ("n/a", "not ranked")
        if interval:
            ax.text(x, y - 0.18, main, ha="center", va="center", fontsize=9, color=color)
            ax.text(x, y + 0.22, f"[{interval}]", ha="center", va="center", fontsize=MIN_FONT, color=color)
        else:
            ax.text(x, y, main, ha="center", va="center", fontsize=MIN_FONT if na else 9, color=color,
                    style="italic" if na else "normal")
    for k in range(ncol + 1):
        ax.axvline(k, color="white", lw=1.2)
    for k in range(nrow + 1):
        ax.axhline(k, color="white", lw=1.2)
    ax.set_xticks(np.arange(ncol) + 0.5, [wrap(c, 16) for c in (col_labels or value_cols)], rotation=40, ha="right",
                  fontsize=9, rotation_mode="anchor")
    ours = (df["source"] == OURS).to_numpy() if "source" in df else np.zeros(nrow, bool)
    ax.set_yticks(np.arange(nrow) + 0.5, names, fontsize=9)
    for t, o in zip(ax.get_yticklabels(), ours):
        if o:
            t.set_color(OURS_COLOR)
            t.set_fontweight("bold")
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    ax.set_title(title, fontsize=11)
    sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=mcolors.ListedColormap([shade(r) for r in range(1, top + 1)]))
    sm.set_array([])
    cbar = fig.colorbar(sm, ax=ax, fraction=0.025, pad=0.015, aspect=30,
                        boundaries=np.arange(0.5, top + 1.5), ticks=[1, *range(5, top + 1, 5)])
    cbar.set_label("rank (1 = best; same colour = same rank in every column)", fontsize=MIN_FONT)
    cbar.ax.tick_params(labelsize=MIN_FONT)
    cbar.ax.invert_yaxis()
    handles = [Patch(facecolor=NA_FILL, edgecolor="#cccccc", label="n/a: not evaluated / not available")]
    if any(unranked):
        handles.append(Patch(facecolor="#f4f4f4", edgecolor="#bbbbbb", hatch="///",
                             label="not ranked: our run is not comparable with the papers' full-split results (reason "
                                   "under its name); the ranks are those of the other rows"))
    if cell_text is not None and (cell_text[value_cols] != "").to_numpy().any():
        handles.insert(0, Patch(facecolor=TOP5_COLOR, label="1-5: in the top 5, order not legible in the paper"))
    foot = ""
    if ours.any():
        foot = "red rows = our runs"
        if with_iv:
            foot += ("; [low-high] = 95% clustered bootstrap interval of their rank (other rows held at their values); "
                     "published rows carry no item-level data, so no interval")
    foot = "\n".join(x for x in (foot, note) if x)
    bottom = _foot(fig, foot, 130) if foot else 0.02
    fig.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.01, bottom), fontsize=MIN_FONT, frameon=False,
               ncol=1)
    bottom += (0.2 * len(handles) + 0.1) / fig_h
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return fig


# --------------------------------------------------------------------------- MMMU Table 12
def image_types(table: pd.DataFrame, ours: list[str], splits: dict[str, str], top: int | None = None,
                ns: dict[str, dict[str, int]] | None = None):
    """MMMU Table 12 in two panels that never share an axis: the published accuracies on the *test*
    set as a heat-map (image type x model, test question counts in the labels, "n/a" where the paper
    has no value), and our runs on *their own split* as bars with 95% intervals and n, for the image
    types their items have. ``ours``: our columns of ``table`` (``<label> ci_low/high`` beside them);
    ``splits``: label -> split; ``ns``: label -> image type -> scored questions. ``top`` keeps the
    most frequent types only."""
    t = table if top is None else table.head(top + 1)
    pub_cols = [c for c in t.columns if c not in ("image_type", "n_samples") and c not in ours
                and not c.endswith((" ci_low", " ci_high"))]
    ns = ns or {}
    present = [k for k in t["image_type"] if any(pd.notna(t.set_index("image_type").at[k, m]) for m in ours)]
    n_pub, n_ours = len(t), len(present)
    fig_h = 0.27 * n_pub + (2.0 if ours else 2.6)
    fig = plt.figure(figsize=(14.5 if ours else 8.5, fig_h))
    if ours:
        gs = fig.add_gridspec(2, 2, width_ratios=[1.35, 1], height_ratios=[max(n_ours * len(ours), 1) + 2,
                                                                           max(n_pub - n_ours * len(ours), 4)],
                              wspace=0.55, hspace=0.35)
        ax_ours = fig.add_subplot(gs[0, 1])  # first: fig.axes[0] holds our runs and their legend
        ax_pub = fig.add_subplot(gs[:, 0])
    else:
        ax_pub = fig.add_subplot(1, 1, 1)
    # published: test set
    vals = t[pub_cols].astype(float).to_numpy()
    cmap = plt.get_cmap("Blues")
    norm = mcolors.Normalize(vmin=0, vmax=80 / 0.85)  # 80% at 0.85 of the map, the darkest blue above ~94%
    rgba = np.where(np.isnan(vals)[..., None], mcolors.to_rgba(NA_FILL), cmap(norm(np.nan_to_num(vals))))
    ax_pub.imshow(rgba, extent=(0, len(pub_cols), n_pub, 0), aspect="auto", interpolation="nearest")
    for i in range(n_pub):
        for j in range(len(pub_cols)):
            v = vals[i, j]
            if np.isnan(v):
                ax_pub.text(j + 0.5, i + 0.5, "n/a", ha="center", va="center", fontsize=MIN_FONT, color=NA_COLOR,
                            style="italic")
            else:
                ax_pub.text(j + 0.5, i + 0.5, f"{v:.1f}", ha="center", va="center", fontsize=MIN_FONT,
                            color="white" if norm(v) > 0.5 else "black")
    ax_pub.set_xticks(np.arange(len(pub_cols)) + 0.5, [_two_lines(c, 11) for c in pub_cols], fontsize=MIN_FONT)
    ax_pub.xaxis.tick_top()
    ax_pub.set_yticks(np.arange(n_pub) + 0.5, [f"{a} ({int(b):,})" for a, b in zip(t["image_type"], t["n_samples"])],
                      fontsize=MIN_FONT + 1)
    ax_pub.tick_params(length=0)
    for s in ax_pub.spines.values():
        s.set_visible(False)
    ax_pub.set_title("Published: accuracy (%) on the MMMU test set\n(image type, test questions)", fontsize=10,
                     loc="left")
    foot = ("Published values carry no item-level data: no interval; n/a = not reported. "
            "The 'Test Overall' row is the whole test set.")
    if ours:
        _ours_panel(ax_ours, t.set_index("image_type"), present, ours, ns)
        split_names = sorted(set(splits.values()))
        ax_ours.set_title(f"Our runs: accuracy (%) on the MMMU {' / '.join(split_names)} split", fontsize=10, loc="left")
        foot += (" Our runs are on their own split, so their rows are not comparable with the test-set cells; their "
                 "'Test Overall' row is their overall accuracy. Bars carry 95% Wilson intervals and "
                 "n = scored questions; image types without items in our runs are left out.")
    fig.suptitle("MMMU, Table 12: accuracy by image type", fontsize=12, x=0.01, ha="left")
    bottom = 0.2 / fig_h if ours else _foot(fig, foot, 120) + 0.2 / fig_h
    fig.subplots_adjust(left=0.2 if ours else 0.33, right=0.97 if ours else 0.86, top=1 - 1.25 / fig_h, bottom=bottom)
    _value_bar(fig, ax_pub, cmap, norm)
    if ours:  # the notes go under our panel, beside the tall heat-map
        box = gs[1, 1].get_position(fig)
        fig.text(box.x0, box.y1, "\n".join(wrap(line, 62) for line in foot.split("\n")), fontsize=MIN_FONT,
                 va="top", ha="left", color="#333333")
    return fig


def _value_bar(fig, ax, cmap, norm):
    """The heat-map's value scale: a thin colour bar right of ``ax`` (accuracy %, n/a swatch below)."""
    box = ax.get_position()
    cax = fig.add_axes((box.x1 + 0.008, box.y0 + 0.25 * box.height, 0.009, 0.5 * box.height))
    sm = matplotlib.cm.ScalarMappable(norm=mcolors.Normalize(0, 100), cmap=mcolors.ListedColormap(
        cmap(norm(np.linspace(0, 100, 201)))))
    cbar = fig.colorbar(sm, cax=cax, ticks=range(0, 101, 20))
    cbar.ax.tick_params(labelsize=MIN_FONT)
    cbar.set_label("published accuracy (%); grey = n/a", fontsize=MIN_FONT)
    return cbar


def _two_lines(name: str, width: int) -> str:
    """A model name longer than ``width`` broken once, at the space or hyphen nearest its middle."""
    if len(name) <= width:
        return name
    cuts = [i for i, ch in enumerate(name) if ch in " -"]
    if not cuts:
        return name
    i = min(cuts, key=lambda k: abs(k - len(name) / 2))
    return name[: i + 1].rstrip() + "\n" + name[i + 1:].lstrip()


def _ours_panel(ax, t: pd.DataFrame, present: list[str], ours: list[str], ns: dict):
    reds = plt.get_cmap("Reds")
    k = len(ours)
    h = 0.8 / k
    for a, m in enumerate(ours):
        color = reds(0.85 - 0.45 * a / max(1, k))
        for y, kind in enumerate(present):
            v = t.at[kind, m]
            yy = y + (a - (k - 1) / 2) * h
            if pd.isna(v):
                ax.text(1, yy, "n/a (no items)", va="center", fontsize=MIN_FONT, color=NA_COLOR, style="italic")
                continue
            lo, hi = t.at[kind, f"{m} ci_low"], t.at[kind, f"{m} ci_high"]
            ax.barh(yy, v, height=h * 0.9, color=color, label=m if y == 0 else None)
            right = v
            if pd.notna(lo) and pd.notna(hi):
                ax.errorbar(v, yy, xerr=[[max(v - lo, 0)], [max(hi - v, 0)]], fmt="none", ecolor="#333333",
                            elinewidth=0.8, capsize=2)
                right = hi
            if v == 0:
                ax.plot([0], [yy], marker="D", ms=4, color=color, clip_on=False, zorder=3)
            n = (ns.get(m) or {}).get(kind)
            ax.text(right + 1.5, yy, f"{v:.1f}" + (f" (n={n})" if n is not None else ""), va="center", fontsize=MIN_FONT)
    ax.set_yticks(range(len(present)), ["Overall" if p == "Test Overall" else p for p in present], fontsize=MIN_FONT + 1)
    ax.set_ylim(len(present) - 0.5, -0.5)
    ax.set_xlim(0, 125)
    ax.set_xticks(range(0, 101, 25))
    ax.tick_params(axis="x", labelsize=MIN_FONT)
    for s in ("top", "right"):
        ax.spines[s].set_visible(False)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, fontsize=MIN_FONT, loc="upper left", bbox_to_anchor=(0, -0.12), frameon=False)


# --------------------------------------------------------------------------- error distributions
def error_distribution(df: pd.DataFrame, n: int | None, title: str):
    """MMMU Fig. 6 / CMMMU Fig. 4 (GPT-4V error categories) as bars (the papers draw pies), with a
    95% Wilson interval of each share over the ``n`` annotated errors."""
    df = df.sort_values("percent", ascending=True)
    total = df["percent"].sum()
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(df) + 1.9))
    ax.barh(df["category"], df["percent"], color=PAPER_COLOR)
    right = df["percent"].to_numpy(dtype=float)
    if n:
        iv = np.array([wilson_interval(p / 100 * n, n) for p in df["percent"]]) * 100
        ax.errorbar(df["percent"], range(len(df)), xerr=[np.maximum(df["percent"] - iv[:, 0], 0), np.maximum(iv[:, 1] - df["percent"], 0)],
                    fmt="none", ecolor="black", elinewidth=0.8, capsize=2.5)
        right = iv[:, 1]
    for y, (v, r) in enumerate(zip(df["percent"], right)):
        ax.text(r + 0.6, y, f"{v:g}%", va="center", fontsize=9)
    ax.tick_params(labelsize=9)
    ax.set_xlabel("share of annotated GPT-4V errors (%)", fontsize=9)
    ax.set_xlim(0, max(right) * 1.15)
    for s in ("top", "right"):
        ax.spines[s].set_visible(False)
    ax.set_title(title, fontsize=11)
    note = f"n = {n} annotated errors; black lines: 95% Wilson interval of each share" if n else ""
    note += f"; printed shares sum to {total:g}%" + (" (as printed; see the source note)" if abs(total - 100) > 1e-9 else "")
    bottom = _foot(fig, note.lstrip("; "), 110)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return fig


# --------------------------------------------------------------------------- our runs against each other
def _pair_label(r, width: int = 60) -> str:
    """``<benchmark>: <run b>`` over ``minus <run a>``, each line wrapped as a whole (a run label of up
    to ``width`` characters stays on its line)."""
    b, a = (str(r[k]).replace(" (ours)", "") for k in ("run_b", "run_a"))
    return wrap(f"{display_name(r['benchmark'])}: {b}", width) + "\n" + wrap(f"minus {a}", width)


def paired_differences(table: pd.DataFrame):
    """Forest plot of paired comparisons of our runs: each pair's accuracy difference (b - a) with its
    95% paired interval (Newcombe's, from Wilson intervals), n common items and McNemar's exact p; a pair whose interval
    crosses 0 is grey (the runs are not told apart on these items)."""
    n = len(table)
    fig, ax = plt.subplots(figsize=(10, 0.62 * max(n, 1) + 1.9))
    for y, (_, r) in enumerate(table.iterrows()):
        lo, hi = r["ci_low"], r["ci_high"]
        clear = pd.notna(lo) and (lo > 0 or hi < 0)
        color = OURS_COLOR if clear else "#888888"
        if pd.notna(lo):
            ax.plot([lo, hi], [y, y], color=color, lw=2)
        ax.plot([r["difference"]], [y], "o", color=color)
        ax.text(1.01, y, f"n = {int(r['n'])}\np = {r['mcnemar_exact_p']:.3g}", transform=ax.get_yaxis_transform(),
                va="center", fontsize=MIN_FONT)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(n), [_pair_label(r) for _, r in table.iterrows()], fontsize=MIN_FONT)
    ax.set_ylim(n - 0.5, -0.5)
    ax.tick_params(axis="x", labelsize=9)
    ax.set_xlabel("accuracy difference (points), b minus a, on the items both runs scored", fontsize=9)
    ax.set_title("Our runs against each other: paired 95% intervals (Newcombe), McNemar exact p", fontsize=11)
    bottom = _foot(fig, "red: the interval excludes 0; grey: the runs are not told apart on these items", 120)
    fig.tight_layout(rect=(0, bottom, 0.93, 1))
    return fig
