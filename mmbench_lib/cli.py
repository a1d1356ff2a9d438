"""The mmbench command: run notebooks headless, rescore official result files, list what the suite knows."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import traceback
from pathlib import Path


def _interrupted_while_starting(signum, frame):  # noqa: ARG001 - a signal handler's signature
    """Ctrl-C while the command's modules load (seconds on a busy machine): one line, nothing was run."""
    sys.stderr.write("mmbench: interrupted while starting; nothing was run\n")
    sys.stderr.flush()
    os._exit(130)


if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # main() puts Python's own handler back
    signal.signal(signal.SIGINT, _interrupted_while_starting)

try:  # the first import of the model registry runs the model plugins ($MMBENCH_PLUGINS): their failure is one line
    import mmbench_lib.models  # noqa: F401
except ImportError as _e:
    if type(_e).__name__ != "PluginError" or os.environ.get("MMBENCH_DEBUG", "").strip().lower() in ("1", "true", "yes", "on"):
        raise
    sys.stderr.write(f"mmbench: error: {' '.join(str(_e).split())}\n")
    raise SystemExit(2) from None
from mmbench_lib.pipeline.config import SHORTCUTS
from mmbench_lib import __version__
from mmbench_lib.analysis.reader import resolve_run
from mmbench_lib.analysis.compare import compare_tables
from mmbench_lib.analysis.export import render
from mmbench_lib.analysis.results import failure_problem, format_report, format_table, read_results
from mmbench_lib.core.manifest import git_commit, repo_root
from mmbench_lib.demo import ensure_demo
from mmbench_lib.models import MODEL_REGISTRY
from mmbench_lib.models.family_records import table as family_table
from mmbench_lib.models.registry import describe_model, spec_usage
from mmbench_lib.runner import NotebookFailed, RunInterrupted, notebook_parameters, parse_override, run_notebook
from mmbench_lib.tasks.base import all_tasks, task_names
from mmbench_lib.tasks.recipes import RECIPES
from mmbench_lib.tasks.protocols import protocol_for
from mmbench_lib.launch.options import add_arguments as add_launch_arguments, launch_requested, options_from_args
from mmbench_lib.pipeline.rescore_seed import score_predictions
from mmbench_lib.core.outdir import check_out
from mmbench_lib.core.store import RunLockedError, write_json_atomic
from mmbench_lib.pipeline import audit as audit_mod
from mmbench_lib.tasks.audits import audited
from mmbench_lib.pipeline.rescoring import check_out_folder, format_help, print_table, scorable, score_responses, write_outputs
from mmbench_lib.pipeline.shards import check_benchmark, merge_runs, recorded_benchmark
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
    check_out(a.out, suggest="demo")  # rewrites demo data, never a run's folder
    paths = ensure_demo(a.out, force=True)
    print(json.dumps(paths, indent=2, default=str))
    return 0


def cmd_run(a) -> int:
    overrides = {}
    for name, value in a.param or []:
        overrides[name] = parse_override(name, value)
    overrides.update(shortcut_overrides(a, overrides))
    if launch_requested(a):  # --shards N: one papermill execution per shard through submitit, then the merge
        from mmbench_lib.launch.launcher import launch_shards

        folder = launch_shards(a.notebook, a.file, overrides, run_id=a.run_id, num_shards=a.shards,
                               options=options_from_args(a), timeout=a.timeout)
    else:
        folder = run_notebook(a.notebook, a.file, overrides, run_id=a.run_id, timeout=a.timeout, debug=_debug(a))
    _print_results(folder)
    problem = failure_problem(read_results(folder), a.max_failed)
    if problem:  # the numbers are written (results.json has the reasons), but the run did not do its job
        print(f"mmbench: error: {problem}", file=sys.stderr)
        return 3
    return 0


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text}: a fraction of the items in [0, 1]")
    return value


def _print_results(folder) -> None:
    """The run folder's results table (``results.json``, else collected now) and where it is."""
    print()
    results = read_results(folder)
    print(format_table(results))
    if results.get("report") and results.get("runs"):  # a report notebook: its own headline after its sub-runs
        print()
        print(format_report(results))
    print(f"\nrun folder: {folder}")


def cmd_score_predictions(a) -> int:
    if a.out:
        check_out_folder(a.out, ("summary.json",))  # before any work; nothing written is replaced
    summary = score_predictions(a.benchmark, a.predictions, a.questions)
    _print_summary(summary)
    inp = summary["input"]
    print(f"\n{inp['predictions']} predictions, {inp['duplicate_lines']} duplicate lines "
          f"({len(inp['conflicting_duplicates'])} with conflicting predictions; last wins), "
          f"{inp['n_unknown_ids']} unknown ids, {inp['missing_from_predictions']} questions without a prediction")
    norm = {k: v for k, v in inp.get("normalisations", {}).items() if v}
    print("normalised as the official evaluation reads the file: "
          + (", ".join(f"{k.replace('_', ' ')} {v}" for k, v in norm.items()) or "nothing"))
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / "summary.json", summary)
        print(f"wrote {out / 'summary.json'}")
    return 0


def cmd_score_responses(a) -> int:

    kw = {"use_random": not a.no_random}
    check_out_folder(a.out)  # before any work
    rows, summary = score_responses(a.benchmark, a.responses, a.answers, a.questions, **kw)
    print_table(summary)
    pred, summ = write_outputs(rows, summary, a.out)
    print(f"wrote {pred} and {summ}")
    return 0


def cmd_audit(a) -> int:
    if a.out:
        check_out_folder(a.out, ("audit.json", "[0-9]*_*.csv"), "audit")  # before any work
    result = audit_mod.audit(a.files, a.benchmark, reported=a.reported, split=a.split, gold=a.gold,
                             max_new_tokens=a.max_new_tokens, expected=a.expected, can_infer=a.can_infer)
    print(audit_mod.report_text(result))
    if a.out:
        print(f"wrote {len(audit_mod.write_audit(result, a.out))} files under {a.out}")
    return 0


def cmd_merge(a) -> int:
    check_out(a.out, suggest="merged", merge=True)  # a run's folder is never replaced; merging again is allowed

    metrics = merge_runs(a.run_dirs, a.out, a.benchmark)
    _print_summary(metrics)
    print(f"\nmerged {metrics['counts']['items']} items into {a.out}")
    if metrics.get("rescored"):
        print(f"re-scored {metrics['rescored']} correct flag(s) that did not match their row's prediction and answer")
    return 0


def cmd_metrics(a) -> int:
    from mmbench_lib.pipeline.runs import metrics_from_store

    a.run_dir = resolve_run(a.run_dir)  # a folder or a run id, as every command takes them
    if not a.benchmark:
        _print_results(a.run_dir)
        return 0
    if not any(Path(a.run_dir).glob("predictions*.jsonl")):
        raise ValueError(f"{a.run_dir}: no predictions.jsonl to recompute metrics from (a folder of sub-runs? "
                         f"leave out --benchmark to print its results table)")
    check_benchmark(a.benchmark, recorded_benchmark(a.run_dir), a.run_dir)
    summary = metrics_from_store(a.run_dir, a.benchmark)
    _print_summary(summary)
    return 0


def cmd_compare(a) -> int:
    if a.format == "csv" and a.published:  # one CSV is one table: never drop the published one silently
        raise ValueError(f"compare --format csv writes one table (the runs; the pairs with --pairs), not --published "
                         f"{a.published[0]}: get it with `mmbench published show {a.published[0]} --format csv`")
    runs, pairs = compare_tables(a.runs)
    if a.format == "csv":  # one CSV table: the runs; the pairs with --pairs
        sys.stdout.write(render(pairs if a.pairs else runs, "csv"))
        return 0
    sys.stdout.write(render(runs, a.format, "Accuracy (%) with 95% Wilson intervals"))
    for note in pairs.attrs.get("notes", []):
        print(note, file=sys.stderr)
    if len(pairs):
        print()
        sys.stdout.write(render(pairs, a.format, "Paired differences (points) on the common items: Newcombe's 95% "
                                                 "interval, McNemar's exact p"))
    elif a.format == "text":
        print("\nno paired test: " + ("no pair could be made (the lines above say why)" if pairs.attrs.get("notes")
                                      else "no two runs of one benchmark share scored items"))
    for name in a.published or []:  # the published rows to set the runs against, under their source note's title
        title = published.source(name).splitlines()[0].lstrip("# ")
        print(f"\n{title}" if a.format in ("text", "markdown") else "")
        sys.stdout.write(render(published.load(name), a.format, title))
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
    sys.stdout.write(render(df, a.format, published.source(a.name).strip().splitlines()[0].lstrip("# ")))
    if a.source:
        print("\n" + published.source(a.name))
    return 0


#: ``mmbench run`` shortcuts: flag -> (notebook parameter of the same name, type), from the run spec's fields
RUN_SHORTCUTS = {name: kind for name, (kind, _parsed) in SHORTCUTS.items()}
#: shortcuts whose text is parsed (``--device-map auto`` or a YAML dict; ``--max-memory 0=38GiB,cpu=120GiB``)
PARSED = {name: parsed for name, (_kind, parsed) in SHORTCUTS.items() if parsed}


def shortcut_overrides(a, given: dict) -> dict:
    """The notebook parameters the ``run`` shortcuts set (``--model X`` is ``-p model X``); a shortcut
    the notebook does not take, or one that contradicts a ``-p`` of the same name, is a one-line error."""
    out = {}
    known = None
    for name in RUN_SHORTCUTS:
        value = getattr(a, name, None)
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if name in PARSED:
            try:
                value = PARSED[name][1](value)
            except ValueError as e:
                raise ValueError(f"{flag}: {e}") from None
        known = known if known is not None else notebook_parameters(a.notebook) if Path(a.notebook).is_file() else {}
        if known and name not in known:
            raise ValueError(f"{flag}: {Path(a.notebook).name} has no parameter {name!r}; it accepts {sorted(known)}")
        if name in given and given[name] != value:
            raise ValueError(f"{flag} {value!r} contradicts -p {name} {given[name]!r}; give one")
        out[name] = value
    return out


def _first_comment(path: Path) -> str:
    """The comment block that opens a parameters file, its lines joined (it describes the file)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(x for x in lines if x)


def list_benchmarks() -> list[str]:
    rows = []
    for task in all_tasks():
        if task.takes_split():
            extra = f"splits {', '.join(task.splits)} (default {task.default_split}); {len(task.dimensions)} subjects"
        else:
            extra = f"dimensions 1-{max(task.dimensions)}"
        rows.append((" / ".join((task.name, *task.aliases)), task.protocol, f"{extra}  ({task.title})"))
    width = max(len(r[0]) for r in rows)
    return [f"{name:{width}s}  {protocol:10s} {rest}" for name, protocol, rest in rows]


def list_models() -> list[str]:
    specs = [f"{spec_usage(p):32s} {describe_model(p)}" for p in sorted(MODEL_REGISTRY)]
    return specs + ["", "Model families (a hub model's config model_type picks its record):"] + family_table()


#: what a recipe's ``continuation`` ranks, in words
RANKS = {"content": "ranks each choice's text", "letter": "ranks each choice's letter",
         "generate": "generates a letter (greedy), parsed"}


def list_recipes() -> list[str]:
    """Two lines per recipe: name, what it scores and how; then its prompt, newlines shown as ``\\n``."""
    out = []
    for name, r in RECIPES.items():
        how = [RANKS.get(r.continuation, r.continuation)]
        if r.reduction:
            how.append(f"{'summed' if r.reduction == 'sum' else r.reduction} log-likelihood")
        how.append("chat template" if r.chat else "no chat template")
        if r.image_size:
            how.append(f"images {r.image_size}x{r.image_size}")
        prompt = r.prompt.replace("\n", "\\n")
        out += [f"{name:20s} {', '.join(how)}", f"{'':20s} prompt: {prompt}"]
    return out


def list_params() -> list[str]:
    """Two lines per parameters file: the file and its notebook, then its opening comment whole."""
    root = repo_root()
    out = []
    for f in sorted((root / "params").glob("*/*.yaml")):
        nb = root / "notebooks" / f"{f.parent.name}.ipynb"
        out += [f"{f.relative_to(root)}  ->  {nb.relative_to(root)}", f"    {_first_comment(f)}"]
    return out


LISTS = {"benchmarks": list_benchmarks, "models": list_models, "recipes": list_recipes, "params": list_params}


def cmd_list(a) -> int:
    for line in LISTS[a.what]():
        print(line)
    return 0


def _examples() -> tuple[str, str]:
    """The ``--help`` examples, with benchmark names from the registry."""
    rank, gen = task_names(protocol="ranking"), task_names(protocol="generation")
    top = f"""examples:
  mmbench run notebooks/00_quickstart.ipynb -f params/00_quickstart/demo.yaml
  mmbench run notebooks/10_seed_bench.ipynb -f params/10_seed_bench/<file>.yaml --limit 20   (mmbench list params)
  mmbench run notebooks/20_generation.ipynb --model causal:HuggingFaceTB/SmolLM2-360M -p subjects '[Accounting]'
  mmbench list models            (also: benchmarks, recipes, params)
  mmbench published show {next(t for g in all_tasks('generation')[::-1] for t in g.published_tables)} --format markdown
  mmbench score-predictions --benchmark {rank[-1]} --predictions results.json --out rescored

MMBENCH_DEBUG=1 (or --debug) shows full tracebacks; see docs/cli.md for every environment variable."""
    run = f"""examples:
  mmbench run notebooks/10_seed_bench.ipynb -f params/10_seed_bench/<file>.yaml
  mmbench run notebooks/10_seed_bench.ipynb -f my.yaml --model vlm:llava-hf/llava-1.5-7b-hf --dtype float16
  mmbench run notebooks/20_generation.ipynb -p benchmark {gen[0]} --limit 10 --run-id {gen[0]}_try
  mmbench run notebooks/10_seed_bench.ipynb -f my.yaml --run-id big      (the same run id resumes)

The shortcuts set the notebook parameter of the same name (--batch-size is batch_size); a notebook
without that parameter refuses it. Values are checked before the run folder is written or a kernel starts."""
    return top, run


def _per_task(help_of) -> str:
    """``name: text; name: text`` over the tasks ``help_of`` has a text for."""
    return "; ".join(f"{t.name}: {h}" for t in all_tasks() if (h := help_of(t)))


def _debug(a=None) -> bool:
    env = os.environ.get("MMBENCH_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")
    return env or bool(getattr(a, "debug", False))


def version_line() -> str:
    """``mmbench 0.1.0 (commit 1a2b3c4d5e6f, modified)``: the commit every manifest records (``git`` entry)."""
    git = git_commit()
    if not git.get("commit"):
        return f"mmbench {__version__} (commit unknown: not a git checkout)"
    return f"mmbench {__version__} (commit {git['commit'][:12]}{', modified' if git.get('dirty') else ''})"


class _Version(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())
        parser.exit()


def resume_command(argv: list[str], run_id: str) -> str:
    """The command that resumes an interrupted run: the same arguments with its ``--run-id``."""
    import shlex

    args, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--run-id":
            skip = True
        elif not arg.startswith("--run-id="):
            args.append(arg)
    return shlex.join(["mmbench", *args, "--run-id", run_id])


class OneLineParser(argparse.ArgumentParser):
    """A parser whose usage errors are one line (``--limit abc``), with where to read the usage, exit 2; its
    sub-command parsers are of this class too."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    examples, run_examples = _examples()
    p = OneLineParser(prog="mmbench", description=__doc__, epilog=examples,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version, help="the version and the git commit runs record")
    p.add_argument("--debug", action="store_true", help="show full tracebacks (or set MMBENCH_DEBUG=1)")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    s = sub.add_parser("make-demo", help="write the small demo datasets in the official layouts")
    s.add_argument("--out", default="data/demo")
    s.set_defaults(func=cmd_make_demo)

    s = sub.add_parser("run", help="execute a notebook headless into outputs/<run-id>/", epilog=run_examples,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("notebook")
    s.add_argument("-f", "--file", action="append", help="YAML parameters file (repeatable; later wins)")
    s.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"), help="one parameter (YAML value)")
    s.add_argument("--run-id", help="folder under outputs/ (default: a new one); the same id resumes")
    s.add_argument("--timeout", type=int, default=None, help="per-cell timeout in seconds")
    s.add_argument("--max-failed", type=_fraction, default=None, metavar="FRACTION",
                   help="exit 3 when more than this fraction of a run's items failed (default: only when all failed); "
                        "the failures by reason are in results.json")
    add_run_shortcuts(s)
    add_launch_arguments(s)
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("list", help="what the suite knows: benchmarks, models (spec prefixes), recipes, params files")
    s.add_argument("what", choices=sorted(LISTS))
    s.set_defaults(func=cmd_list)

    ranking = all_tasks("ranking")
    s = sub.add_parser("score-predictions", help=f"rescore an official results file of {', '.join(t.title for t in ranking)}")
    s.add_argument("--benchmark", required=True, choices=task_names(aliases=True, protocol="ranking"))
    s.add_argument("--predictions", required=True)
    s.add_argument("--questions", help="the benchmark JSON (" + _per_task(
        lambda t: not protocol_for(t).generates and ("needed" if t.results_need_questions else "optional")) + ")")
    s.add_argument("--out", help="write summary.json here")
    s.set_defaults(func=cmd_score_predictions)

    scored = scorable()
    s = sub.add_parser("score-responses", help=f"rescore official-format {'/'.join(t.title for t in scored)} outputs "
                                               f"with the official parsers")
    s.add_argument("--benchmark", required=True, choices=[t.name for t in scored])
    s.add_argument("--responses", required=True, help=_per_task(lambda t: t in scored and format_help(t)[0]))
    s.add_argument("--answers", help=_per_task(lambda t: t in scored and format_help(t)[1]))
    s.add_argument("--questions", help="question files with option texts and categories, for the formats whose "
                                       "responses carry neither (optional)")
    s.add_argument("--no-random", action="store_true", help="score unparseable answers wrong instead of random (not official)")
    s.add_argument("--out", required=True, help="write predictions.jsonl and summary.json here")
    s.set_defaults(func=cmd_score_responses)

    s = sub.add_parser("audit", help="re-score other harnesses' per-item outputs under named rule sets; with --reported, "
                                     "the gap to a reported number, step by step")
    s.add_argument("files", nargs="+", metavar="FILE", help="the benchmark's official output files or this suite's run "
                   "folders (docs/audit.md), lmms-eval samples_<task>_*.jsonl, VLMEvalKit .tsv/.xlsx/.json predictions, "
                   "or {id, response} JSONL (with --gold)")
    s.add_argument("--benchmark", required=True, choices=audited())
    s.add_argument("--reported", type=float, help="the reported accuracy (%%) to explain")
    s.add_argument("--split", help="the split the reported number is on, as the item ids start (e.g. validation)")
    s.add_argument("--gold", help="a file holding the questions and answers (another format the audit reads, or the "
                                  "benchmark's question file where docs/audit.md says so), for files without them")
    s.add_argument("--max-new-tokens", type=int, help="the generation budget: responses this long count as truncated")
    s.add_argument("--expected", type=int, help="the number of items of the split (missing items are counted)")
    s.add_argument("--can-infer", metavar="VERSION", help="the VLMEvalKit can_infer version to apply: a name (#1175), "
                   "commit or date (docs/audit.md); default: the one in force at a VLMEvalKit file's recorded date, else "
                   "the current one")
    s.add_argument("--out", help="write the tables (csv) and audit.json here")
    s.set_defaults(func=cmd_audit)

    s = sub.add_parser("merge", help="merge the shard files of a sharded run (checks every item is present once)")
    s.add_argument("run_dirs", nargs="+")
    s.add_argument("--out", required=True)
    s.add_argument("--benchmark", help="default: from the shard manifests")
    s.set_defaults(func=cmd_merge)

    s = sub.add_parser("metrics", help="print a run folder's results table (with --benchmark: recompute one run's "
                                       "metrics from its predictions)")
    s.add_argument("run_dir")
    s.add_argument("--benchmark", help="recompute the metrics of this benchmark from the folder's predictions")
    s.set_defaults(func=cmd_metrics)

    s = sub.add_parser("published", help="results tables transcribed from the papers")
    s.add_argument("action", choices=["list", "show"])
    s.add_argument("name", nargs="?")
    s.add_argument("--format", choices=["text", "markdown", "latex", "csv"], default="text",
                   help="missing values print as n/a (empty in csv)")
    s.add_argument("--source", action="store_true", help="also print the source note")
    s.set_defaults(func=cmd_published)

    s = sub.add_parser("compare", help="runs side by side (n, accuracy, 95%% interval, data source) and paired tests "
                                       "(McNemar) where they scored the same items",
                       epilog="examples:\n  mmbench compare my_run other_run\n"
                              "  mmbench compare outputs/quickstart --format latex", formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("runs", nargs="+", metavar="RUN", help="a run folder at any level (top, sub-run, shard) or a run id")
    s.add_argument("--format", choices=["text", "markdown", "latex", "csv"], default="text")
    s.add_argument("--pairs", action="store_true", help="with --format csv: the paired tests instead of the runs")
    s.add_argument("--published", action="append", choices=published.list_tables(), metavar="TABLE",
                   help="also print a published table (see `mmbench published list`); repeatable")
    s.set_defaults(func=cmd_compare)

    return p


def add_run_shortcuts(s) -> None:
    for name, kind in RUN_SHORTCUTS.items():
        flag = "--" + name.replace("_", "-")
        if kind is bool:
            s.add_argument(flag, action="store_const", const=True, default=None, help=f"-p {name} True")
        elif name in PARSED:
            s.add_argument(flag, metavar=name.upper(), help=f"-p {name}: {PARSED[name][0]}")
        else:
            s.add_argument(flag, type=kind, metavar=name.upper(), help=f"-p {name} {name.upper()}")


def _quiet_broken_pipe() -> int:
    """The reader went away (``mmbench published list | head``): stop quietly, as ``cat`` does."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second BrokenPipeError when Python flushes stdout at exit
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, what a shell reports for a command killed by a closed pipe


def main(argv=None) -> int:
    if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # from here on Ctrl-C is handled below
    debug = _debug()
    try:
        try:
            a = build_parser().parse_args(argv)
            debug = debug or a.debug
            return a.func(a)
        finally:  # what is still buffered meets a closed pipe here, not in the interpreter's exit
            sys.stdout.flush()
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except RunInterrupted as e:  # Ctrl-C during a run: one line and the command that resumes it
        if debug:
            traceback.print_exc()
        argv = sys.argv[1:] if argv is None else list(argv)
        print(f"mmbench: {e}; resume with: {resume_command(argv, e.run_id)}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # elsewhere (the checks, a sharded run): the resume command when the run id is known
        if debug:
            traceback.print_exc()
        argv = sys.argv[1:] if argv is None else list(argv)
        run_id = next((v for k, v in zip(argv, argv[1:]) if k == "--run-id"), None)
        resume = f"; resume with: {resume_command(argv, run_id)}" if argv[:1] == ["run"] and run_id else ""
        print(f"mmbench: interrupted{resume}", file=sys.stderr)
        return 130
    except (ValueError, KeyError, FileNotFoundError, NotebookFailed) as e:  # one line, no traceback
        if debug:
            traceback.print_exc()
        message = " ".join(str(e).split())
        print(f"mmbench: error: {message}", file=sys.stderr)
        return 1 if isinstance(e, NotebookFailed) else 2
    except RunLockedError as e:  # another process writes that run (a merge's --out, a resumed run): one line
        if debug:
            traceback.print_exc()
        print(f"mmbench: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # the machine, not the input (a full disk, a folder where a file should be): one line
        if debug:
            traceback.print_exc()
        where = f" ({e.filename})" if e.filename else ""
        print(f"mmbench: error: {e.strerror or e}{where}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
