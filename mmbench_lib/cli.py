"""The ``mmbench`` command."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml
from mmbench_lib.demo import ensure_demo
from mmbench_lib.launch.options import add_arguments as add_launch_arguments, launch_requested, options_from_args
from mmbench_lib.pipeline.rescore_seed import score_predictions
from mmbench_lib.core.store import write_json_atomic
from mmbench_lib.pipeline.rescoring import print_table, score_responses, write_outputs
from mmbench_lib.pipeline.shards import merge_runs
from mmbench_lib import published


def _print_summary(summary: dict) -> None:
    import pandas as pd

    dims = pd.DataFrame(summary["per_dimension"])
    if not dims.empty:
        dims["accuracy"] = 100 * dims["accuracy"].astype(float)  # fractions in metrics.json, percent on screen
        cols = [c for c in ("dimension_id", "dimension", "n", "accuracy", "failed") if c in dims]
        print(dims[cols].to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    groups = pd.DataFrame(summary["groups"])
    if not groups.empty:
        for c in ("accuracy_micro", "accuracy_dim_mean"):
            groups[c] = 100 * groups[c].astype(float)
        print()
        print(groups[["group", "n", "accuracy_micro", "accuracy_dim_mean"]].to_string(
            index=False, float_format=lambda v: f"{v:.2f}"))


def cmd_make_demo(a) -> int:

    paths = ensure_demo(a.out, force=True)
    print(json.dumps(paths, indent=2, default=str))
    return 0


def cmd_run(a) -> int:
    from mmbench_lib.runner import parse_override, run_notebook

    overrides = {}
    for name, value in a.param or []:
        overrides[name] = parse_override(name, value)
    if launch_requested(a):  # --shards N: one papermill execution per shard through submitit, then the merge
        from mmbench_lib.launch.launcher import launch_shards

        folder = launch_shards(a.notebook, a.file, overrides, run_id=a.run_id, num_shards=a.shards,
                               options=options_from_args(a), timeout=a.timeout)
    else:
        folder = run_notebook(a.notebook, a.file, overrides, run_id=a.run_id, timeout=a.timeout)
    print(f"run folder: {folder}")
    return 0


def cmd_score_predictions(a) -> int:

    summary = score_predictions(a.benchmark, a.predictions, a.questions)
    _print_summary(summary)
    inp = summary["input"]
    print(f"\n{inp['predictions']} predictions, {inp['duplicate_lines']} duplicate lines "
          f"({len(inp['conflicting_duplicates'])} with conflicting predictions; last wins), "
          f"{inp['n_unknown_ids']} unknown ids, {inp['missing_from_predictions']} questions without a prediction")
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / "summary.json", summary)
        print(f"wrote {out / 'summary.json'}")
    return 0


def cmd_score_responses(a) -> int:

    kw = {"use_random": not a.no_random}
    rows, summary = score_responses(a.benchmark, a.responses, a.answers, a.questions, **kw)
    print_table(summary)
    pred, summ = write_outputs(rows, summary, a.out)
    print(f"wrote {pred} and {summ}")
    return 0


def cmd_merge(a) -> int:

    metrics = merge_runs(a.run_dirs, a.out, a.benchmark)
    _print_summary(metrics)
    print(f"\nmerged {metrics['counts']['items']} items into {a.out}")
    return 0


def cmd_metrics(a) -> int:
    from mmbench_lib.pipeline.runs import metrics_from_store

    summary = metrics_from_store(a.run_dir, a.benchmark)
    _print_summary(summary)
    return 0


def cmd_published(a) -> int:

    if a.action == "list":
        for name in published.list_tables():
            first = published.source(name).strip().splitlines()[0].lstrip("# ")
            print(f"{name:40s} {first}")
        return 0
    if not a.name:
        raise ValueError("published show needs a table name (see `mmbench published list`)")
    df = published.load(a.name)
    if a.format == "csv":
        sys.stdout.write(df.to_csv(index=False))
    elif a.format == "markdown":
        print(df.to_markdown(index=False))
    else:
        print(df.to_string(index=False))
    if a.source:
        print("\n" + published.source(a.name))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="mmbench", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("make-demo", help="write the small demo datasets in the official layouts")
    s.add_argument("--out", default="data/demo")
    s.set_defaults(func=cmd_make_demo)

    s = sub.add_parser("run", help="execute a notebook headless into outputs/<run-id>/")
    s.add_argument("notebook")
    s.add_argument("-f", "--file", action="append", help="YAML parameters file (repeatable; later wins)")
    s.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"), help="one parameter (YAML value)")
    s.add_argument("--run-id")
    s.add_argument("--timeout", type=int, default=None, help="per-cell timeout in seconds")
    add_launch_arguments(s)
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("score-predictions", help="rescore an official SEED results file")
    s.add_argument("--benchmark", required=True, choices=["seed", "seed2"])
    s.add_argument("--predictions", required=True)
    s.add_argument("--questions", help="the benchmark JSON (needed for seed; optional for seed2)")
    s.add_argument("--out", help="write summary.json here")
    s.set_defaults(func=cmd_score_predictions)

    s = sub.add_parser("score-responses", help="rescore official-format MMMU/CMMMU outputs with the official parsers")
    s.add_argument("--benchmark", required=True, choices=["mmmu", "cmmmu"])
    s.add_argument("--responses", required=True, help="mmmu: DIR/<Subject>/output.json; cmmmu: JSONL file or folder")
    s.add_argument("--answers", help="cmmmu: gold rows {id, type, answer} (file or folder, e.g. cmmmu-data-val)")
    s.add_argument("--questions", help="cmmmu: question files with option texts and categories (optional)")
    s.add_argument("--no-random", action="store_true", help="score unparseable answers wrong instead of random (not official)")
    s.add_argument("--out", required=True, help="write predictions.jsonl and summary.json here")
    s.set_defaults(func=cmd_score_responses)

    s = sub.add_parser("merge", help="merge the shard files of a sharded run (checks every item is present once)")
    s.add_argument("run_dirs", nargs="+")
    s.add_argument("--out", required=True)
    s.add_argument("--benchmark", help="default: from the shard manifests")
    s.set_defaults(func=cmd_merge)

    s = sub.add_parser("metrics", help="recompute metrics from a run folder's predictions")
    s.add_argument("run_dir")
    s.add_argument("--benchmark", required=True)
    s.set_defaults(func=cmd_metrics)

    s = sub.add_parser("published", help="results tables transcribed from the papers")
    s.add_argument("action", choices=["list", "show"])
    s.add_argument("name", nargs="?")
    s.add_argument("--format", choices=["text", "csv", "markdown"], default="text")
    s.add_argument("--source", action="store_true", help="also print the source note")
    s.set_defaults(func=cmd_published)

    a = p.parse_args(argv)
    try:
        return a.func(a)
    except (ValueError, KeyError, FileNotFoundError) as e:  # bad input: one line, no traceback
        message = " ".join(str(e).split())
        print(f"mmbench: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
