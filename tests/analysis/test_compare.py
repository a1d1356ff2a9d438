"""`mmbench compare` (analysis/compare.py, analysis/export.py): runs side by side with their data source, n,
accuracy and interval; paired tests (McNemar, Newcombe) only between different runs of one benchmark sharing items;
any run folder level; text / markdown / latex / csv without `nan`."""
import re

import pytest

from mmbench_lib.analysis import compare, export
from mmbench_lib.analysis.reader import RunError
from mmbench_lib.cli import main
from mmbench_lib.core.uncertainty import compare_runs, wilson_interval
from mmbench_lib.analysis.reader import load_run
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.published import load


@pytest.fixture(scope="module")
def folders(demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    a = root / "a" / "seed__random"  # a sub-run below a top folder, as the quickstart writes
    runs.evaluate(RunConfig("seed", a, data=runs.demo_args("seed", demo), model="random:1", progress=False))
    b = root / "b"
    runs.evaluate(RunConfig("seed", b, data=runs.demo_args("seed", demo), model="random:2", limit=12, progress=False))
    return root, a, b


def test_runs_and_pairs(folders):
    root, a, b = folders
    t, pairs = compare.compare_tables([root / "a", b, b])  # b twice: one run, no pair with itself
    assert list(t["run"]) == ["a/seed__random", "b"]
    assert list(t["data"]) == ["demo data", "demo data, subset (n=12)"]
    assert list(t["n"]) == [36, 12]
    assert len(pairs) == 1
    p = pairs.iloc[0]
    direct = compare_runs(load_run(a).samples.to_dict("records"), load_run(b).samples.to_dict("records"))
    assert p["n common"] == direct["n"] == 12  # the paired test runs on the items both scored
    assert p["McNemar p"] == f"{direct['mcnemar_exact_p']:.3g}"
    assert p["95% interval"] == f"{direct['low']:+.1f} to {direct['high']:+.1f}"
    # the interval column is the one rule: Wilson of k/n (the demo's questions do not share images within b)
    run_b = load_run(b).samples
    k, n = int(run_b["correct"].astype(bool).sum()), len(run_b)
    lo, hi = wilson_interval(k, n)
    assert t.iloc[1]["95% interval"] == f"{100 * lo:.1f}-{100 * hi:.1f}"


def test_any_level_and_a_missing_folder(folders):
    root, a, _ = folders
    t, _ = compare.compare_tables([a])  # the sub-run itself
    assert list(t["run"]) == ["seed__random"]
    with pytest.raises(RunError, match="no such run folder"):
        compare.compare_tables([root / "nope"])
    (root / "empty").mkdir(exist_ok=True)
    with pytest.raises(RunError, match="no finished run"):
        compare.compare_tables([root / "empty"])

def test_formats_never_print_nan():
    df = load("seed1_table3")  # published tables have not-reported cells
    assert df.isna().to_numpy().any()
    for fmt in ("text", "markdown", "latex"):
        out = export.render(df, fmt)
        assert not re.search(r"\bnan\b", out, re.I), fmt
        assert "n/a" in out
    latex = export.render(df.head(2), "latex", caption="a_b & 10%")
    assert latex.startswith("\\begin{table}") and "\\toprule" in latex and "a\\_b \\& 10\\%" in latex
    assert "nan" not in export.render(df, "csv").lower() and ",\n" in export.render(df, "csv")  # missing: empty


def test_cli(folders, capsys):
    root, a, b = folders
    assert main(["compare", str(a), str(b), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "|run" in out and "McNemar p" in out and "nan" not in out
    assert main(["compare", str(a), str(b), "--format", "csv", "--pairs"]) == 0
    assert capsys.readouterr().out.startswith("benchmark,run a,run b,n common")
    assert main(["published", "show", "seed1_table3", "--format", "markdown"]) == 0
    assert "nan" not in capsys.readouterr().out
    assert main(["published", "show", "seed1_table3", "--format", "latex"]) == 0
    assert "\\begin{tabular}" in capsys.readouterr().out


def test_samples_df_on_a_folder_of_sub_runs_names_them_and_a_real_command(folders, capsys):
    from mmbench_lib.analysis.reader import samples_df
    from mmbench_lib.cli import build_parser

    root, a, _ = folders
    with pytest.raises(RunError, match=r"a folder of sub-runs \['seed__random'\]") as e:
        samples_df(root / "a")
    command = str(e.value).split("`")[1].split()
    assert command[0] == "mmbench" and build_parser().parse_args(command[1:]).func.__name__ == "cmd_compare"
    assert main(command[1:]) == 0 and "seed__random" in capsys.readouterr().out


def test_cli_sets_the_runs_against_a_published_table(folders, capsys):
    _root, a, _b = folders
    assert main(["compare", str(a), "--published", "seed2plus_table2", "--published", "mmmu_test_leaderboard",
                 "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "SEED-Bench-2-Plus, Table 2 (answer ranking, paper)" in text and "|SPHINX-v2-1k" in text
    assert "MMMU, test-split leaderboard (55 entries)" in text and "InternVL2.5-78B" in text


def test_outputs_means_mmbench_outputs_when_it_is_set(folders, monkeypatch, capsys):
    """The README's `mmbench metrics outputs/<id>` with MMBENCH_OUTPUTS set reads that folder (issue 41), and
    `outputs/<missing>` is one line, never the repository's empty outputs/."""
    root, a, b = folders
    monkeypatch.setenv("MMBENCH_OUTPUTS", str(root))
    assert main(["metrics", "outputs/b"]) == 0
    assert f"run folder: {b}" in capsys.readouterr().out
    assert main(["metrics", "outputs"]) == 0  # the outputs root itself: every run in it
    out = capsys.readouterr().out
    assert "a/seed__random" in out and "|b " in out
    assert main(["metrics", "outputs/nothing_here"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mmbench: error: outputs/nothing_here: no such run folder under MMBENCH_OUTPUTS=") and "\n" not in err


def test_csv_with_published_is_refused_and_newlines_stay_in_their_row(folders, capsys):
    root, a, b = folders
    assert main(["compare", str(b), "--format", "csv", "--published", "seed2_table2"]) == 2
    err = capsys.readouterr().err
    assert "one table" in err and "mmbench published show seed2_table2 --format csv" in err
    df = compare.compare_tables([b])[0].assign(model="my\nmodel")
    for fmt in ("markdown", "latex", "text"):
        lines = export.render(df, fmt).splitlines()
        assert len(lines) == {"markdown": 3, "text": 2, "latex": 7}[fmt], (fmt, lines)  # the row is one line
        assert any("my model" in line for line in lines), fmt


def test_one_run_takes_a_top_folder_holding_one_sub_run(folders):
    from mmbench_lib.analysis.results import one_run

    root, a, b = folders
    assert one_run(root / "a") == a and one_run(b) == b
    with pytest.raises(RunError, match=r"a folder of 2 sub-runs .*name one of them"):
        one_run(root)
