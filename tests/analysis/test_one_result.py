"""One result per run (issue 38 item 2): every task's demo run shows the same value, 95% interval and label in
``results.json``, ``mmbench metrics``, ``mmbench compare`` (text, markdown, latex, csv) and the paper tables of
notebook 40 (``paper.render``); runs that differ by setting (MMMU-Pro standard4 / standard10) never read alike."""
import io
import math
import re
from contextlib import redirect_stdout

import pandas as pd
import pytest

from mmbench_lib import paper
from mmbench_lib.analysis import results
from mmbench_lib.cli import main
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.tasks.base import all_tasks, get_task


def _demo_runs(demo, root) -> dict[str, object]:
    """The random baseline on every task's demo set (each split of a task whose splits are settings: MMMU-Pro's
    standard4 and standard10); a task without a demo set is left out."""
    made = {}
    for task in all_tasks():
        try:
            args = task.demo_args(demo)
        except ValueError:
            continue
        splits = [s for s in task.splits if s.endswith("-direct") and not s.startswith("vision")] or [None]
        for split in splits:
            data = task.demo_args(demo, split=split) if split else dict(args)
            kw = {"split": data.pop("split")} if "split" in data else {}
            if task.protocol == "generation":
                kw["baseline"] = "random"
            folder = root / (task.name + (f"__{split}" if split else ""))
            runs.evaluate(RunSpec.from_params(task.name, folder, data=data, model="random", progress=False, **kw))
            made[folder.name] = folder
    return made


@pytest.fixture(scope="module")
def every(demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("one_result")
    mp = pytest.MonkeyPatch()
    mp.setenv("MMBENCH_OUTPUTS", str(root))
    made = _demo_runs(demo, root / "every")
    yield root, made
    mp.undo()


def _out(argv) -> str:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(argv) == 0
    return buf.getvalue()


def _cells(res: results.Result) -> tuple[str, str]:
    return res.cells()


def test_every_output_shows_the_same_value_interval_and_label(every):
    root, made = every
    body = results.collect(root / "every")
    want = {r["run"]: results.result(r) for r in body["runs"]}
    assert set(want) == set(made)
    for name, res in want.items():  # the label names what tells runs apart
        assert res.label.startswith("random [") and "demo data" in res.label, res.label
        assert res.low is not None and res.high > res.low  # never zero-width
    pro = [res.label for name, res in want.items() if "standard" in name]
    assert len(pro) == len(set(pro)) == 2 and any("standard4-direct" in x for x in pro)

    # results.json, as written (`mmbench run` writes it; `metrics` prints it)
    results.write_results(root / "every")
    saved = {r["run"]: results.result(r) for r in results.read_results(root / "every")["runs"]}
    assert saved == want

    # `mmbench metrics`: one row per sub-run; its cells compose the label
    text = _out(["metrics", "outputs/every"])  # the README's form, read under MMBENCH_OUTPUTS
    header = [c.strip() for c in next(x for x in text.splitlines() if x.startswith("|run")).strip("|").split("|")]
    for line in text.splitlines():
        cells = dict(zip(header, (c.strip() for c in line.strip("|").split("|"))))
        if cells.get("run") in want:
            res = want[cells["run"]]
            assert (cells["accuracy"], cells["95% interval"]) == _cells(res)
            assert results.label(cells) == res.label

    # `mmbench compare` in its four formats
    csv = pd.read_csv(io.StringIO(_out(["compare", str(root / "every"), "--format", "csv"])), keep_default_na=False)
    assert len(csv) == len(want)
    for row in csv.to_dict("records"):
        res = want[row["run"].split("/", 1)[1]]
        assert (f"{row['accuracy %']:.1f}", row["95% interval"]) == _cells(res)
        assert f"{row['model']} [{', '.join(x for x in (row['protocol'], row['setting'], row['data']) if x)}]" == res.label
    for fmt, split in (("markdown", lambda x: x.strip("|").split("|")), ("latex", lambda x: x.rstrip(" \\").split(" & ")),
                       ("text", lambda x: re.split(r"\s{2,}", x.strip()))):
        out = _out(["compare", str(root / "every"), "--format", fmt])
        for name, res in want.items():
            line = next(x for x in out.splitlines()
                        if re.match(rf"\|?every/{re.escape(name)}(\s|\||&|$)", x.replace(r"\_", "_")))
            cells = [c.strip().replace(r"\_", "_") for c in split(line)]
            acc, interval = _cells(res)
            assert cells[-2:] == [acc, interval], (fmt, cells)
            assert all(part in cells for part in ("random", "demo data")), (fmt, cells)
            setting = [c for c in cells if re.fullmatch(r"standard\d+-direct|validation|val|dev|test", c)]
            assert setting == ([res.label.split(", ")[1]] if "generation" in res.label else []), (fmt, cells)

    # notebook 40's tables (paper.render): our row, labelled alike, shows the value with the same interval
    shown, placed = {}, []
    for papers in paper.PAPER_TABLES:
        placed += paper.placement(papers, paper._as_runs([root / "every"]))
        files = paper.render(papers, root / f"paper_{papers}", [root / "every"])
        for key, paths in files.items():
            if str(paths[0]).endswith(".csv"):
                for row in paths[1].read_text(encoding="utf-8").splitlines():
                    for name, res in want.items():
                        if f"| {res.label} (ours) " in row:
                            shown.setdefault(name, []).append((key, [c.strip() for c in row.split("|")]))
    for name, res in want.items():
        if not get_task(name.split("__")[0]).published_tables:  # a task with no paper table (MMBench): said so
            assert sum(f"{name}: a " in line for line in placed) == len(paper.PAPER_TABLES), placed
            continue
        assert name in shown, f"{name}: in no paper table"
        hit = []
        for key, cells in shown[name]:
            for c in cells:
                m = re.fullmatch(r"(\d+\.\d+) \[(\d+\.\d+), (\d+\.\d+)\]", c)
                if not m:
                    continue
                digits = len(m[1].split(".")[1])
                vals = [round(100 * v, digits) for v in (res.value, res.low, res.high)]
                if all(math.isclose(float(x), v, abs_tol=1e-9) for x, v in zip(m.groups(), vals)):
                    hit.append(key)
        assert hit, f"{name}: no paper table cell shows {_cells(res)} ({[k for k, _ in shown[name]]})"
