"""Protocol sensitivity: one model, several protocols, the same items (issue #15, item 1).

How much of a benchmark number is the protocol rather than the model?

More: docs/modules.md, ``mmbench_lib/reports/protocol.py``.
"""
from __future__ import annotations

import json
import random
import tempfile
import warnings
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from mmbench_lib.analysis import reader
from mmbench_lib.analysis.plots import display_name, model_name
from mmbench_lib.core.metrics import ci_fractions, entry
from mmbench_lib.core.requests import ChoiceScore
from mmbench_lib.core.uncertainty import compare_runs
from mmbench_lib.pipeline import rescoring
from mmbench_lib.pipeline import runs as runs_mod
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.tasks.protocols import protocol_for
from mmbench_lib.reports import numbers, subruns
from mmbench_lib.scoring import pick
from mmbench_lib.tasks.base import all_tasks, get_task, load_items
from mmbench_lib.tasks.recipes import DEFAULT_RANKING_PROTOCOLS as DEFAULT_SEED_PROTOCOLS  # noqa: F401 - reports' names
from mmbench_lib.tasks.recipes import RANKING_PROTOCOLS as SEED_PROTOCOLS
from mmbench_lib.tasks.recipes import Protocol, mode_protocol  # noqa: F401 - Protocol: reports' name

# --------------------------------------------------------------------------------------------- protocols


PARSER_VARIANTS = {t.name: t.parser_variants for t in all_tasks("generation") if t.parser_variants}
"""benchmark -> parser variants (``Task.parser_variants``): the official parser and the non-official ones compared."""
MODE_PROTOCOLS = {t.name: {k: mode_protocol(m) for k, m in t.prompt_modes.items() if k != "official"}
                  for t in all_tasks("generation")}
"""benchmark -> its prompt modes other than official as protocols (``Task.prompt_modes``), asked for by key."""

# ------------------------------------------------------------------------------ runs: reuse or make

class _SharedModel:
    """The model adapter, loaded on first use and shared by every run the report makes, and by the notebook's
    other reports on the same model (``runs.load_shared``: notebook 50's ranking and parser parts load it once)."""

    def __init__(self, options: dict):
        self.options, self.adapter = options, None

    def __call__(self, spec: str):
        if self.adapter is None:
            self.adapter = runs_mod.load_shared(spec, self.options)
        return self.adapter


def ensure_run(config: RunSpec, ids: list[str], model: _SharedModel | None = None, reuse: bool = True) -> dict:
    """``{"folder", "reused"}``: ``config.out_dir`` itself when it holds the merge of this report's shards
    (``reports.subruns``), else a matching finished run in ``outputs/`` when ``reuse`` (``reused`` is False
    when it is ``config.out_dir`` itself, finished by an earlier call), else ``config`` evaluated
    (``runs.evaluate``: resumes ``config.out_dir`` if it holds part of the run; a shard's share only when
    ``config.num_shards > 1``)."""
    if subruns.merged(config.out_dir) and subruns.covers(Path(config.out_dir), ids):
        return {"folder": Path(config.out_dir), "reused": False}
    folder = subruns.find_same_run(config, ids) if reuse else None
    if folder is not None:
        return {"folder": Path(folder), "reused": Path(folder).resolve() != Path(config.out_dir).resolve()}
    runs_mod.evaluate(config, model(config.model.spec) if model else None)
    return {"folder": Path(config.out_dir), "reused": False}


# --------------------------------------------------------------------------------------------- long frames

LONG_COLUMNS = ("protocol", "key", "id", "dimension", "group", "answer", "prediction", "correct", "status", "cluster",
                "num_choices", "run")


def _letter_from_scores(scores, view: str, num_choices: int) -> str | None:
    """The letter of the highest stored log-likelihood under reduction ``view`` (ties to the first, as ``pick``)."""
    if not isinstance(scores, dict) or not scores.get(view):
        return None
    choices = [ChoiceScore(s, m, 0) for s, m in zip(scores["sum"], scores["mean"])]
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:num_choices][pick(choices, view)]


def ranking_long(protocols: list[Protocol], folders: dict[str, Path]) -> pd.DataFrame:
    """One row per protocol and item: each protocol's answer read from its recipe's run (``folders``:
    recipe -> run folder) through the shared reader, re-judged against the gold letter."""
    frames, cache = [], {}
    for p in protocols:
        folder = folders[p.recipe]
        if folder not in cache:
            cache[folder] = reader.samples_df(folder)
        df = cache[folder].copy()
        ok = df["status"] == "ok"
        stored = df["scores"] if p.view in ("sum", "mean") else df["extracted"]
        judged = [bool(o) and isinstance(v, dict) for o, v in zip(ok, stored)]  # e.g. a CLIP-judged item has no scores
        if p.view in ("sum", "mean"):
            pred = [_letter_from_scores(v, p.view, int(n or 0)) if j else None
                    for v, n, j in zip(stored, df["num_choices"], judged)]
        else:
            pred = [v.get(p.view) if j else None for v, j in zip(stored, judged)]
        df["prediction"] = pred
        df["correct"] = pd.array([(a == b) if j else None for a, b, j in zip(pred, df["answer"], judged)],
                                 dtype="boolean")
        df["protocol"], df["key"], df["run"] = p.label, p.key, reader.run_key(folder)
        frames.append(df[list(LONG_COLUMNS)])
    return pd.concat(frames, ignore_index=True)


def _official_files(run: reader.Run, where: Path, mode: str = "official"):
    """The run's stored responses in the official formats (``task.write_official``) under ``where``; under an
    answer-line prompt ``mode``, what the parser reads of each (``Task.parser_input``)."""
    items = reader.load_items(run.manifest, where=str(run.folder / "manifest.json"))
    samples = run.samples
    task = get_task(run.benchmark)
    stored = {i: {"status": s, "response": task.parser_input(r, mode)[0] if s == "ok" else r}
              for i, s, r in zip(samples["id"], samples["status"], samples["response"])}
    items = [it for it in items if it.id in stored]
    return task.write_official(items, stored, where)


def _rescore(benchmark: str, files, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # subsets of subjects are expected; the counts say what was scored
        return rescoring.score_responses(benchmark, *files, **kw)


def _pred_text(pred) -> str | None:
    if pred is None or isinstance(pred, str):
        return pred
    return json.dumps(pred, ensure_ascii=False, default=str)


def parser_long(run: reader.Run, variants: list[Protocol], files) -> pd.DataFrame:
    """One row per parser variant and item: the run's stored responses re-scored (no generation)."""
    samples = run.samples.set_index("id")
    frames = []
    for v in variants:
        rows, _summary = _rescore(run.benchmark, files, **v.rescore)
        df = pd.DataFrame(rows)
        df["id"] = df["id"].astype(str)
        out = pd.DataFrame({
            "protocol": v.label, "key": v.key, "id": df["id"], "dimension": df["subject"],
            "group": df["discipline"] if "discipline" in df else df["category"], "answer": df["answer"].map(_pred_text),
            "prediction": df["parsed_pred"].map(_pred_text), "correct": df["correct"].astype("boolean"), "status": "ok",
            "cluster": [samples["cluster"].get(i, i) for i in df["id"]], "num_choices": None, "run": run.key,
            "mode": df.get("parse_mode", df.get("mode")),
        })
        frames.append(out)
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------- fallback seeds


class RecordingRandom(random.Random):
    """``random.Random`` that records the options of every ``choice`` call, in order."""

    def __init__(self, seed=42):
        self.calls: list[tuple] = []
        super().__init__(seed)

    def choice(self, seq):
        self.calls.append(tuple(seq))
        return super().choice(seq)


def _wins(benchmark: str, row: dict, options: tuple) -> tuple:
    """The options a fallback draw could pick that the official judge counts correct for ``row``."""
    return get_task(benchmark).fallback_wins(row, options)


def fallback_seeds(benchmark: str, files, seeds, rescore: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """The total under each fallback seed of ``seeds``: the official parse once with a recording RNG,
    then the recorded draws replayed per seed (``random.Random(seed).choice`` over the same options in
    the same official order: exactly what re-scoring with that seed gives, at the cost of the draws).

    Returns a frame (seed, correct, accuracy) and a summary: n items, items decided by chance (count and
    share), correct without chance, expected accuracy over all draws, the official seed-42 accuracy, and
    over the seeds the mean, standard deviation (ddof 1), min, max, range and the official value's percentile.
    """
    rng = RecordingRandom(42)
    rows, _summary = _rescore(benchmark, files, seed=rng, **(rescore or {}))
    chance = [r for r in rows if r.get("parse_mode", r.get("mode")) == "random"]
    if len(chance) != len(rng.calls):
        raise RuntimeError(f"{len(rng.calls)} random draws for {len(chance)} items decided by chance")
    fixed = sum(bool(r["correct"]) for r in rows if r.get("parse_mode", r.get("mode")) != "random")
    wins = [_wins(benchmark, r, opts) for r, opts in zip(chance, rng.calls)]
    if fixed + sum(bool(r["correct"]) for r in chance) != sum(bool(r["correct"]) for r in rows):
        raise RuntimeError("replay check failed")
    totals = []
    for s in seeds:
        draw = random.Random(s)
        totals.append(fixed + sum(draw.choice(opts) in w for opts, w in zip(rng.calls, wins)))
    n = len(rows)
    official = fixed + sum(bool(r["correct"]) for r in chance)
    acc = np.array(totals, dtype=float) / n if n else np.array([])
    table = pd.DataFrame({"seed": list(seeds), "correct": totals, "accuracy": acc})
    expected = (fixed + sum(len(w) / len(o) for w, o in zip(wins, rng.calls))) / n if n else None
    summary = {
        "benchmark": benchmark, "n": n, "decided_by_chance": len(chance), "share_by_chance": len(chance) / n if n else None,
        "correct_without_chance": fixed, "expected_accuracy": expected, "official_seed": 42,
        "official_accuracy": official / n if n else None, "seeds": len(table),
        "mean": float(acc.mean()) if len(acc) else None, "std": float(acc.std(ddof=1)) if len(acc) > 1 else None,
        "min": float(acc.min()) if len(acc) else None, "max": float(acc.max()) if len(acc) else None,
        "range": float(acc.max() - acc.min()) if len(acc) else None,
        "official_percentile": float((acc <= official / n).mean() * 100) if len(acc) else None,
    }
    return table, summary


# --------------------------------------------------------------------------------------------- tables


def common_items(long: pd.DataFrame) -> pd.DataFrame:
    """The rows of the items every protocol scored (status ok and judged in each)."""
    judged = long[(long["status"] == "ok") & long["correct"].notna()]
    counts = judged.groupby("id")["protocol"].nunique()
    keep = counts[counts == long["protocol"].nunique()].index
    return judged[judged["id"].isin(keep)]


def _order(long: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(long["protocol"]))


def accuracy_table(long: pd.DataFrame) -> pd.DataFrame:
    """Per protocol, on the common items: the metrics schema's entry (n, correct, accuracy and 95%
    Wilson interval as fractions), the number of items it scored in all, its run."""
    common = common_items(long)
    out = []
    for p in _order(long):
        rows = common[common["protocol"] == p]
        lo, hi = ci_fractions(rows[["id", "correct", "cluster"]].assign(correct=rows["correct"].astype(bool))
                              .to_dict("records"))
        e = entry(int(rows["correct"].sum()), len(rows), ci_low=lo, ci_high=hi)
        all_rows = long[long["protocol"] == p]
        out.append({"protocol": p, "key": all_rows["key"].iloc[0], **{k: e[k] for k in ("n", "correct", "accuracy",
                                                                                          "ci_low", "ci_high")},
                    "scored_in_run": int((all_rows["status"] == "ok").sum()), "run": all_rows["run"].iloc[0]})
    return pd.DataFrame(out)


def _wide(long: pd.DataFrame, value: str) -> pd.DataFrame:
    common = common_items(long)
    return common.pivot(index="id", columns="protocol", values=value)[_order(long)]


def agreement_matrix(long: pd.DataFrame, on: str = "prediction") -> pd.DataFrame:
    """Share (fraction) of the common items on which two protocols give the same ``on`` value:
    ``prediction`` (the same answer) or ``correct`` (both right or both wrong)."""
    wide = _wide(long, on).astype(object)
    wide = wide.where(wide.notna(), "\x00none")  # "no answer" agrees with "no answer"
    names = list(wide.columns)
    mat = pd.DataFrame(index=names, columns=names, dtype=float)
    for a in names:
        for b in names:
            mat.loc[a, b] = float((wide[a] == wide[b]).mean()) if len(wide) else np.nan
    return mat


def _holm(p: list[float]) -> list[float]:
    order = np.argsort(p)
    adj, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adj[i] = running
    return adj


def pairwise_tests(long: pd.DataFrame) -> pd.DataFrame:
    """Every pair of protocols (a before b) on the common items: accuracy difference b - a (points) with
    Newcombe's paired 95% interval, discordant counts, McNemar's exact p and Holm's adjustment."""
    common = common_items(long)
    rows = []
    for a, b in combinations(_order(long), 2):
        ra, rb = (common[common["protocol"] == x][["id", "correct", "status", "cluster"]] for x in (a, b))
        r = compare_runs(ra.assign(correct=ra["correct"].astype(bool)).to_dict("records"),
                         rb.assign(correct=rb["correct"].astype(bool)).to_dict("records"))
        rows.append({"a": a, "b": b, "n": r["n"], "accuracy_a": r["accuracy_a"], "accuracy_b": r["accuracy_b"],
                     "difference": r["difference"], "low": r["low"], "high": r["high"],
                     "only_a_correct": r["only_a_correct"], "only_b_correct": r["only_b_correct"],
                     "mcnemar_exact_p": r["mcnemar_exact_p"]})
    out = pd.DataFrame(rows)
    if len(out):
        out["holm_p"] = _holm(out["mcnemar_exact_p"].tolist())
    return out


def group_deltas(long: pd.DataFrame, by: str = "dimension") -> pd.DataFrame:
    """Per ``by`` value (dimension, subject, ...) and protocol on the common items: n, accuracy (%) and the
    difference (points) from the first protocol."""
    common = common_items(long)
    ref = _order(long)[0]
    acc = (common.assign(c=common["correct"].astype(float)).groupby([by, "protocol"], sort=False)["c"]
           .agg(["mean", "count"]).reset_index())
    acc["accuracy"] = 100 * acc["mean"]
    base = acc[acc["protocol"] == ref].set_index(by)["accuracy"]
    acc["delta"] = acc["accuracy"] - acc[by].map(base)
    return acc.rename(columns={"count": "n"})[[by, "protocol", "n", "accuracy", "delta"]]


def _shown(pred) -> str:
    return "(none)" if pred is None or (isinstance(pred, float) and np.isnan(pred)) else str(pred)


def flips(long: pd.DataFrame) -> pd.DataFrame:
    """The common items whose correctness is not the same under every protocol: id, dimension, gold
    answer, then each protocol's answer marked right or wrong, and how many protocols got it right."""
    common = common_items(long)
    corr = _wide(long, "correct").astype(bool)
    flipped = corr.index[corr.nunique(axis=1) > 1]
    pred = _wide(long, "prediction")
    info = common.drop_duplicates("id").set_index("id")
    out = pd.DataFrame({"id": flipped, "dimension": info.loc[flipped, "dimension"].values,
                        "answer": info.loc[flipped, "answer"].values})
    for p in corr.columns:
        out[p] = [f"{_shown(pred.loc[i, p])} {'right' if corr.loc[i, p] else 'wrong'}" for i in flipped]
    out["right_under"] = corr.loc[flipped].sum(axis=1).values
    return out.reset_index(drop=True)


def percent(table: pd.DataFrame, columns=("accuracy", "ci_low", "ci_high")) -> pd.DataFrame:
    """A copy of ``table`` with fraction ``columns`` in percent (for display; files keep fractions)."""
    out = table.copy()
    for c in columns:
        if c in out:
            out[c] = 100 * out[c].astype(float)
    return out


# --------------------------------------------------------------------------------------------- the report


@dataclass
class ProtocolReport:
    """Everything a protocol-sensitivity notebook shows for one benchmark."""

    benchmark: str
    model: str
    long: pd.DataFrame
    sources: pd.DataFrame  # protocol, kind, run folder, reused or made, recipe / parser arguments
    by: str = "dimension"
    seed_table: pd.DataFrame | None = None
    seed_summary: dict | None = None

    @property
    def name(self) -> str:
        """``SEED-Bench, SmolLM2-135M-Instruct``: the display names figures show."""
        return f"{display_name(self.benchmark)}, {model_name(self.model)}"

    @property
    def n_common(self) -> int:
        return common_items(self.long)["id"].nunique()

    def tables(self) -> dict[str, pd.DataFrame]:
        """accuracy, agreement (answers), agreement_correct, tests, deltas, flips, sources (, seeds)."""
        k = len(_order(self.long))
        with subruns.step(f"{self.benchmark} tables: {k} protocols, Wilson intervals, {k * (k - 1) // 2} paired tests"):
            out = {
                "accuracy": accuracy_table(self.long),
                "agreement": agreement_matrix(self.long, "prediction").reset_index(names="protocol"),
                "agreement_correct": agreement_matrix(self.long, "correct").reset_index(names="protocol"),
                "tests": pairwise_tests(self.long), "deltas": group_deltas(self.long, self.by),
                "flips": flips(self.long), "sources": self.sources,
            }
        if self.seed_table is not None:
            out["fallback_seeds"] = pd.DataFrame([self.seed_summary])
        return out

    def to_json(self) -> dict:
        """The report's numbers as JSON values (fractions, as the metrics schema)."""
        t = self.tables()
        return {"benchmark": self.benchmark, "model": self.model, "n_common": self.n_common,
                "accuracy": t["accuracy"].to_dict("records"),
                "agreement": agreement_matrix(self.long, "prediction").to_dict(),
                "agreement_correct": agreement_matrix(self.long, "correct").to_dict(),
                "tests": t["tests"].to_dict("records"), "flips": int(len(t["flips"])),
                "sources": self.sources.to_dict("records"), "fallback_seeds": self.seed_summary}


def _sources(protocols: list[Protocol], made: dict, how, key=lambda p: p.recipe if p.recipe else "run") -> pd.DataFrame:
    return pd.DataFrame([{"protocol": p.label, "key": p.key, "kind": p.kind, "how": how(p),
                          "run": reader.run_key(made[key(p)]["folder"]), "reused": made[key(p)]["reused"]}
                         for p in protocols])


def _scope(benchmark: str, total: int, limit: int | None) -> str:
    """One line: how many of the selected items the report uses (a ``limit`` is a subsample, said so)."""
    if limit and limit < total:
        return f"{benchmark}: the first {limit} of {total} items (limit {limit}: a subsample; limit 0 runs all)"
    return f"{benchmark}: all {total} items"


def _base(benchmark: str, out_dir, settings: dict | None, spec: dict, **fixed) -> RunSpec:
    """The spec every run of a report shares: flat ``RunSpec`` parameters ``spec`` over the model ``settings``
    (``runs.model_settings``), ``max_new_tokens`` 16 unless given (generated letters, MMMU / CMMMU answers)."""
    return RunSpec.from_params(benchmark, out_dir, **{"max_new_tokens": 16, **(settings or {}), **spec, **fixed})


def ranking_protocols(benchmark: str, keys=None) -> list[Protocol]:
    """The protocols ``keys`` of a ranking task (``Task.ranking_protocols``; empty: its ``default_ranking_protocols``),
    whose ``kind`` says which is the benchmark's official one; ValueError, one line, for a key the task lacks."""
    task = get_task(benchmark)
    known = task.ranking_protocols
    keys = list(keys or task.default_ranking_protocols)
    unknown = [k for k in keys if k not in known]
    if unknown or not keys:
        raise ValueError(f"{task.title or benchmark} has no protocol {unknown[0] if unknown else '(none declared)'!r}; "
                         f"use some of {list(known)}")
    return [known[k] for k in keys]


def _check_ranking(benchmark: str) -> None:
    if protocol_for(benchmark).generates:
        raise ValueError(f"the ranking report is for the ranking benchmarks "
                         f"{', '.join(t.name for t in all_tasks('ranking'))}, not {benchmark!r}")


def _check_parser(benchmark: str) -> None:
    if benchmark not in PARSER_VARIANTS:
        raise ValueError(f"the parser report is for {' / '.join(PARSER_VARIANTS)}, not {benchmark!r}")


def seed_report(benchmark: str, data: dict, out_dir, protocols=None, reuse: bool = True,
                settings: dict | None = None, shard: tuple[int, int] = (0, 1), **spec) -> ProtocolReport | None:
    """A ranking benchmark under several protocols (keys of the task's ``ranking_protocols``; empty: its
    defaults, :func:`ranking_protocols`). One run per recipe, in
    ``out_dir/<benchmark>__<recipe>`` (resumable) unless a matching finished run is found in
    ``outputs/`` (``reuse``). ``spec``: the flat ``RunSpec`` parameters every run shares (``model``, ``limit``,
    ``scorer``, ``batch_size``, ``max_new_tokens``, ``device``, ``progress``, ...); ``settings``: model settings
    (``runs.model_settings``). ``shard=(k, n)``, n > 1: only shard k's items of each run are made and ``None`` is
    returned (the report is made on the merged runs, ``reports.subruns``)."""
    _check_ranking(benchmark)
    base = _base(benchmark, out_dir, settings, spec, data=data, shard_index=shard[0], num_shards=shard[1])
    return ranking_report(base, protocols, reuse, limit=spec.get("limit"))


def ranking_report(base: RunSpec, protocols=None, reuse: bool = True, limit: int | None = None) -> ProtocolReport | None:
    """:func:`seed_report` from the one spec of a notebook's parameter cell (``pipeline.params.notebook_spec``):
    its task, data, model, selection (``limit``, shard) and settings; its folder holds the report's runs.
    ``limit``: as the notebook gave it (recorded in each run's parameters; default the spec's)."""
    benchmark, data, out_dir = base.task.benchmark, base.task.data, base.out_dir
    _check_ranking(benchmark)
    shard = (base.selection.shard_index, base.selection.num_shards)
    limit = base.selection.limit if limit is None else limit
    chosen = ranking_protocols(benchmark, protocols)
    recipes = list(dict.fromkeys(p.recipe for p in chosen))
    base = base.with_params(recipe=recipes[0])
    items = load_items(benchmark, data)
    print(_scope(benchmark, len(items), limit), flush=True)
    items = items[:limit] if limit else items
    ids = [it.id for it in items]
    text_ids = {it.id for it in items if it.output == "text"}  # image-output items have no letter to compare
    shared = _SharedModel(base.adapter_options())
    made = {}
    for k, recipe in enumerate(recipes, 1):
        config = base.with_params(out_dir=Path(out_dir) / f"{benchmark}__{recipe}", recipe=recipe,
                                  parameters={"report": "protocol sensitivity", "recipe": recipe, "limit": limit})
        names = ", ".join(p.key for p in chosen if p.recipe == recipe)
        with subruns.step(f"{benchmark} run {k} of {len(recipes)}: recipe {recipe} (protocols {names}), {len(ids)} items"
                          + (f", shard {shard[0]} of {shard[1]}" if shard[1] > 1 else "")):
            made[recipe] = ensure_run(config, ids, shared, reuse)
    if shard[1] > 1:
        return None
    folders = {r: m["folder"] for r, m in made.items()}
    long = ranking_long(chosen, folders)
    long = long[long["id"].isin(text_ids)].reset_index(drop=True)
    return ProtocolReport(benchmark, base.model.spec, long,
                          _sources(chosen, made, lambda p: f"recipe {p.recipe}, read by {p.view}"))


def parser_report(benchmark: str, source, out_dir, variants=None, seeds: int = 2000, reuse: bool = True,
                  settings: dict | None = None, modes=(), mode_max_new_tokens: int | None = None,
                  shard: tuple[int, int] = (0, 1), **spec) -> ProtocolReport | None:
    """MMMU / CMMMU: one generation run (reused from ``outputs/`` or made in ``out_dir/<benchmark>__generation``),
    its stored responses re-scored by each parser variant (``PARSER_VARIANTS``), and the total over
    fallback seeds ``0 .. seeds-1`` under the official parser. ``spec``: the flat ``RunSpec`` parameters the runs
    share (``model``, ``split``, ``subjects``, ``limit``, ``max_new_tokens``, ...); ``settings``: model settings.
    ``modes``: prompt modes compared beside them (``MODE_PROTOCOLS`` keys, e.g. ``("cot", "cot+answer-line")``):
    one more run per prompt (``out_dir/<benchmark>__generation__<mode>``, ``mode_max_new_tokens`` new tokens, by
    default the mode's), read by the official parser.
    ``shard=(k, n)``, n > 1: only shard k's items are generated and ``None`` is returned (as :func:`seed_report`)."""
    _check_parser(benchmark)
    base = _base(benchmark, out_dir, settings, spec, source=str(source), shard_index=shard[0], num_shards=shard[1])
    return generation_report(base, variants, seeds, reuse, modes, mode_max_new_tokens, limit=spec.get("limit"))


def generation_report(base: RunSpec, variants=None, seeds: int = 2000, reuse: bool = True, modes=(),
                      mode_max_new_tokens: int | None = None, limit: int | None = None) -> ProtocolReport | None:
    """:func:`parser_report` from the one spec of a notebook's parameter cell (``pipeline.params.notebook_spec``):
    its task, data (source, split, subjects), model, selection and settings; its folder holds the report's runs.
    ``limit``: as the notebook gave it (recorded in each run's parameters; default the spec's)."""
    benchmark, out_dir = base.task.benchmark, base.out_dir
    shard = (base.selection.shard_index, base.selection.num_shards)
    limit = base.selection.limit if limit is None else limit
    _check_parser(benchmark)
    unknown = [m for m in modes if m not in MODE_PROTOCOLS[benchmark]]
    if unknown:
        raise ValueError(f"{benchmark} has no prompt mode {unknown[0]!r} to compare; use {list(MODE_PROTOCOLS[benchmark])}")
    task = get_task(benchmark)
    chosen = [PARSER_VARIANTS[benchmark][k] for k in (variants or PARSER_VARIANTS[benchmark])]
    chosen += [MODE_PROTOCOLS[benchmark][k] for k in modes]

    def run_mode(p: Protocol) -> str:  # the mode whose run a protocol reads: same prompt, the whole response
        m = task.prompt_mode(p.prompt_mode)
        return next(k for k, o in task.prompt_modes.items() if o.prompt == m.prompt and not o.answer_line)

    made, long, ids = {}, [], None
    shared = _SharedModel({k: v for k, v in base.adapter_options().items() if k != "scorer"})
    gen_modes = list(dict.fromkeys(run_mode(p) for p in chosen))
    for gen_mode in gen_modes:
        official = gen_mode == "official"
        config = base.with_params(
            out_dir=Path(out_dir) / (f"{benchmark}__generation" + ("" if official else f"__{gen_mode}")),
            prompt_mode=gen_mode, **({} if official else {"max_new_tokens": mode_max_new_tokens}),
            parameters={"report": "protocol sensitivity", "limit": limit, "prompt_mode": gen_mode})
        if ids is None:
            items = load_items(benchmark, config.task.load_args())
            print(_scope(benchmark, len(items), limit), flush=True)
            ids = [it.id for it in (items[:limit] if limit else items)]
        with subruns.step(f"{benchmark} generation run, {gen_mode} prompt: {len(ids)} items"
                          + (f", shard {shard[0]} of {shard[1]}" if shard[1] > 1 else "")):
            made[gen_mode] = ensure_run(config, ids, shared, reuse)
    if shard[1] > 1:
        return None
    seed_table = seed_summary = None  # the fallback seeds of the official run read by the official parser
    with tempfile.TemporaryDirectory() as tmp:
        with subruns.step(f"{benchmark}: re-scoring {len(ids)} stored responses by {len(chosen)} protocols, "
                          f"then {seeds} fallback seeds"):
            for gen_mode in gen_modes:
                official = gen_mode == "official"
                run = reader.load_run(made[gen_mode]["folder"])
                for read in dict.fromkeys(p.prompt_mode for p in chosen if run_mode(p) == gen_mode):
                    where = Path(tmp) / f"{gen_mode}__{read}"
                    files = _official_files(run, where, read)
                    long.append(parser_long(run, [p for p in chosen if p.prompt_mode == read and run_mode(p) == gen_mode],
                                            files))
                    if official and read == "official":
                        seed_table, seed_summary = fallback_seeds(benchmark, files, range(seeds))
    order = [p.label for p in chosen]
    long = pd.concat(long, ignore_index=True)
    long = long[long["id"].isin(ids)].sort_values("protocol", key=lambda c: c.map(order.index), kind="stable")
    long = long.reset_index(drop=True)

    def how(p):
        if p.prompt_mode != "official":
            return f"prompt mode {p.prompt_mode} (run in mode {run_mode(p)}), official parser"
        return "rescoring.score_responses(" + ", ".join(f"{k}={v!r}" for k, v in p.rescore.items()) + ")"
    return ProtocolReport(benchmark, base.model.spec, long, _sources(chosen, made, how, key=run_mode), by="dimension",
                          seed_table=seed_table, seed_summary=seed_summary)


def headline_table(reports: dict[str, ProtocolReport]) -> pd.DataFrame:
    """Every protocol of every report (benchmark), in run order: kind (paper protocol or not), n common items,
    accuracy (%) and its 95% interval (``accuracy_table``, printed as every table prints one: ``numbers``), items
    the protocol scored in its run, the run."""
    rows = []
    for bench, r in reports.items():
        acc = accuracy_table(r.long)
        kinds = r.sources.set_index("protocol")["kind"].to_dict() if "kind" in r.sources else {}
        for x in acc.itertuples():
            rows.append({"benchmark": bench, "protocol": x.protocol, "kind": str(kinds.get(x.protocol, "")).split(":")[0],
                         "n": int(x.n), "accuracy %": numbers.percent(x.accuracy),
                         "95% interval": numbers.interval_cell(x.ci_low, x.ci_high),
                         "scored in run": int(x.scored_in_run), "run": x.run})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------- figures

FONT = 9  # points; every text in the figures is at least 8 pt


def _chance(long: pd.DataFrame) -> float | None:
    n = pd.to_numeric(common_items(long).drop_duplicates("id")["num_choices"], errors="coerce").dropna()
    return float((1 / n[n > 0]).mean() * 100) if len(n) else None


def accuracy_figure(report: ProtocolReport, ax=None, title: str | None = None):
    """Accuracy (%) per protocol on the common items with 95% Wilson intervals; chance dashed."""
    acc = accuracy_table(report.long)
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.2, 0.42 * len(acc) + 1.3))
    y = np.arange(len(acc))[::-1]
    a = 100 * acc["accuracy"].astype(float)
    lo = 100 * acc["ci_low"].astype(float)
    hi = 100 * acc["ci_high"].astype(float)
    ax.errorbar(a, y, xerr=[(a - lo).fillna(0), (hi - a).fillna(0)], fmt="o", color="#1f4e79", ecolor="#7f9fbf",
                capsize=3, lw=1.5)
    for yi, ai, hii in zip(y, a, hi.fillna(a)):
        ax.text(min(hii + 2, 97), yi, f"{ai:.1f}", va="center", ha="left" if hii + 2 < 97 else "right",
                fontsize=FONT - 1)
    chance = _chance(report.long)
    if chance is not None:
        ax.axvline(chance, ls="--", color="grey", lw=1)
        ax.text(chance, y.max() + 0.55, "chance", ha="center", va="bottom", fontsize=FONT - 1, color="grey")
    src = report.sources
    unofficial = set(src.loc[src["kind"].str.startswith("NOT"), "protocol"]) if "kind" in src else set()
    ax.set_yticks(y, [f"{p} \u2020" if p in unofficial else p for p in acc["protocol"]], fontsize=FONT)
    ax.set_ylim(-0.6, len(acc) - 0.2)
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"accuracy (%), 95% CI, n = {report.n_common} items"
                  + ("\n\u2020 not a paper protocol" if unofficial else ""), fontsize=FONT)
    ax.tick_params(axis="x", labelsize=FONT)
    ax.set_title(title or f"{report.name}: accuracy under {len(acc)} protocols", fontsize=FONT + 1)
    if own:
        fig.tight_layout()
        return fig
    return ax.figure


def _matrix(ax, mat: pd.DataFrame, title: str, labels: bool = True):
    vals = 100 * mat.to_numpy(dtype=float)
    im = ax.imshow(vals, vmin=0, vmax=100, cmap="viridis")
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            ax.text(j, i, f"{vals[i, j]:.0f}", ha="center", va="center", fontsize=FONT,
                    color="white" if vals[i, j] < 60 else "black")
    n = len(mat)
    ax.set_xticks(range(n), mat.columns, rotation=35, ha="right", fontsize=FONT)
    ax.set_yticks(range(n), mat.index if labels else [""] * n, fontsize=FONT)
    ax.set_title(title, fontsize=FONT + 1)
    return im


def agreement_figure(report: ProtocolReport):
    """Two heat-maps over the common items: % with the same answer, % with the same correctness."""
    n = len(_order(report.long))
    fig, axes = plt.subplots(1, 2, figsize=(3.2 + 1.45 * n, 0.55 * n + 2.3), layout="constrained")
    _matrix(axes[0], agreement_matrix(report.long, "prediction"), "same answer (%)")
    im = _matrix(axes[1], agreement_matrix(report.long, "correct"), "same correctness (%)", labels=False)
    fig.colorbar(im, ax=axes, shrink=0.8).ax.tick_params(labelsize=FONT)
    fig.suptitle(f"{report.name}: item-level agreement between protocols "
                 f"(n = {report.n_common} items)", fontsize=FONT + 1)
    return fig


def delta_heatmap(report: ProtocolReport, max_groups: int = 40):
    """Per dimension / subject, and over all common items (bottom row): accuracy difference (points) of
    each protocol from the first; each row label gives n and the first protocol's accuracy."""
    d = group_deltas(report.long, report.by)
    order = _order(report.long)
    ref, others = order[0], order[1:]
    groups = list(dict.fromkeys(d[report.by]))[:max_groups]
    mat = d.pivot(index=report.by, columns="protocol", values="delta").reindex(index=groups, columns=others)
    n = d[d["protocol"] == ref].set_index(report.by)["n"].reindex(groups)
    base = d[d["protocol"] == ref].set_index(report.by)["accuracy"].reindex(groups)
    acc = accuracy_table(report.long).set_index("protocol")
    overall = 100 * (acc.loc[others, "accuracy"].astype(float) - float(acc.loc[ref, "accuracy"]))
    vals = np.vstack([mat.to_numpy(dtype=float), overall.to_numpy(dtype=float)[None, :]])
    labels = [f"{str(g).replace('_', ' ')} (n={int(k)}, {b:.0f}%)" for g, k, b in zip(groups, n, base)]
    labels.append(f"All (n={report.n_common}, {100 * float(acc.loc[ref, 'accuracy']):.0f}%)")
    finite = vals[np.isfinite(vals)]
    lim = max(10.0, float(np.abs(finite).max()) if finite.size else 10.0)
    fig, ax = plt.subplots(figsize=(4.4 + 1.05 * len(others), 0.34 * len(labels) + 2.1), layout="constrained")
    im = ax.imshow(vals, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            if np.isfinite(vals[i, j]):
                ax.text(j, i, f"{vals[i, j]:+.0f}", ha="center", va="center", fontsize=FONT - 1,
                        color="white" if abs(vals[i, j]) > 0.6 * lim else "black")
    ax.axhline(len(labels) - 1.5, color="black", lw=1)
    ax.set_xticks(range(len(others)), others, rotation=35, ha="right", fontsize=FONT)
    ax.set_yticks(range(len(labels)), labels, fontsize=FONT - 1)
    cb = fig.colorbar(im, ax=ax, shrink=0.8)
    cb.set_label("points", fontsize=FONT)
    cb.ax.tick_params(labelsize=FONT)
    ax.set_title(f"{report.name}\naccuracy minus '{ref}' (points)", fontsize=FONT + 1)
    what = "subject" if report.benchmark in PARSER_VARIANTS else report.by  # MMMU / CMMMU rows are subjects
    ax.set_ylabel(f"{what} (n items, '{ref}' accuracy)", fontsize=FONT)
    return fig


def seed_figure(report: ProtocolReport, ax=None):
    """Histogram of the total accuracy over fallback seeds (share of seeds per total); the official seed 42
    and the expectation over all draws marked; the items decided by the fallback, mean +- sd and range in the
    title."""
    t, s = report.seed_table, report.seed_summary
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    acc = 100 * t["accuracy"].to_numpy()
    values, counts = np.unique(np.round(acc, 6), return_counts=True)
    width = (100 / s["n"]) * 0.8 if s["n"] else 1
    ax.bar(values, counts / counts.sum() * 100, width=width, color="#7f9fbf", edgecolor="#1f4e79",
           label=f"share of the {s['seeds']} seeds")
    off = 100 * s["official_accuracy"]
    ax.axvline(off, color="#c0392b", lw=1.8, label=f"seed 42 (official scorer): {off:.1f}%")
    if s.get("expected_accuracy") is not None:
        ax.axvline(100 * s["expected_accuracy"], color="black", lw=1.2, ls="--",
                   label=f"expected over all draws: {100 * s['expected_accuracy']:.1f}%")
    ax.set_ylim(0, 100 * counts.max() / counts.sum() * 1.45)
    ax.legend(loc="upper right", fontsize=FONT - 1, frameon=False)
    ax.set_xlabel(f"total accuracy (%) under fallback seeds 0-{s['seeds'] - 1}; n = {s['n']} items", fontsize=FONT)
    ax.set_ylabel("% of seeds", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    ax.set_title(f"{report.name}: the random fallback's share of the score\n"
                 f"{s['decided_by_chance']} of {s['n']} items ({100 * s['share_by_chance']:.0f}%) decided by the "
                 f"fallback; mean {100 * s['mean']:.1f} ± {100 * s['std']:.1f} (sd), "
                 f"range {100 * s['min']:.0f}-{100 * s['max']:.0f}%", fontsize=FONT + 1)
    return fig if own else ax.figure


def summary_figure(report: ProtocolReport):
    """The README figure: accuracy per protocol with intervals beside the same-answer agreement matrix."""
    n = len(_order(report.long))
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.5 * n + 2.6), gridspec_kw={"width_ratios": [1.15, 1]},
                             layout="constrained")
    accuracy_figure(report, ax=axes[0], title="(a) accuracy per protocol")
    im = _matrix(axes[1], agreement_matrix(report.long, "prediction"), "(b) same answer on an item (%)")
    fig.colorbar(im, ax=axes[1], shrink=0.8).ax.tick_params(labelsize=FONT)
    fig.suptitle(f"{report.name}: one model, {n} protocols, the same {report.n_common} items", fontsize=FONT + 1)
    return fig
