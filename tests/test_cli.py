"""The ``mmbench`` command's conventions, each through the real CLI in a subprocess: ``--version``,
examples in ``--help``, ``mmbench list``, the ``run`` shortcuts, quiet closed pipes, mistakes
refused before torch is imported, a failing notebook in one line, the resume guard before any
write, and ``make paper`` writing under outputs/."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mmbench_lib import __version__
from mmbench_lib.models import MODEL_REGISTRY
from mmbench_lib.models.family_records import RECORDS
from mmbench_lib.tasks.recipes import RECIPES

ROOT = Path(__file__).resolve().parents[1]


def cli(tmp_path, *args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k != "MMBENCH_DEBUG"}
    env.update(PYTHONPATH=str(ROOT), MMBENCH_OUTPUTS=str(tmp_path / "outputs"), HF_HUB_OFFLINE="1", **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "mmbench_lib.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def one_error_line(proc) -> str:
    errors = [line for line in proc.stderr.splitlines() if line.startswith("mmbench: error:")]
    assert proc.returncode != 0 and len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return errors[0]


def test_version_and_examples_in_help(tmp_path):
    assert cli(tmp_path, "--version").stdout.strip().startswith(f"mmbench {__version__} (commit ")  # test_quiet_runs.py: which one
    top = cli(tmp_path, "--help").stdout
    assert "examples:" in top and "mmbench list models" in top
    for command in ("run", "list", "score-predictions", "score-responses", "merge", "metrics", "published", "make-demo"):
        assert command in top, command
    run = cli(tmp_path, "run", "--help").stdout
    assert "examples:" in run and "--model" in run and "--limit" in run and "--dtype" in run


def test_list_models_names_every_registered_prefix(tmp_path):
    proc = cli(tmp_path, "list", "models")
    lines, _, families = proc.stdout.partition("\n\n")
    lines = lines.splitlines()
    assert proc.returncode == 0 and len(lines) == len(MODEL_REGISTRY)
    table = families.splitlines()  # the family table: a title, the header, one row per family record
    assert table[1].split()[:4] == ["family", "model", "types", "positions"] and len(table) == len(RECORDS) + 2
    for prefix in MODEL_REGISTRY:
        line = next(line for line in lines if line.split()[0].split(":")[0].split("[")[0] == prefix)
        assert len(line.split(None, 1)[1]) > 10, line  # a description, not only the spec


def test_list_benchmarks_recipes_params(tmp_path):
    bench = cli(tmp_path, "list", "benchmarks").stdout
    for name in ("seed", "seed2", "mmmu", "cmmmu"):
        assert name in bench
    assert "validation" in bench and "val" in bench
    recipes = cli(tmp_path, "list", "recipes").stdout.splitlines()  # two lines each: what it does, then its prompt
    assert sorted(line.split()[0] for line in recipes[::2]) == sorted(RECIPES)
    for line, prompt in zip(recipes[::2], recipes[1::2]):
        assert "None" not in line and "choice generate" not in line and "'" not in prompt.replace("option's", "")
        assert prompt.split() and prompt.split()[0] == "prompt:" and "{question}" in prompt
    params = cli(tmp_path, "list", "params").stdout.splitlines()  # the file and notebook, then the whole description
    files = sorted(ROOT.glob("params/*/*.yaml"))
    assert len(params) == 2 * len(files)
    for f, line, about in zip(files, params[::2], params[1::2]):
        assert line.startswith(str(f.relative_to(ROOT))) and f"notebooks/{f.parent.name}.ipynb" in line
        lines = f.read_text().splitlines()
        block = lines[:next((i for i, x in enumerate(lines) if not x.startswith("#")), len(lines))]
        assert about.strip() == " ".join(x.lstrip("#").strip() for x in block if x.lstrip("#").strip())  # not cut


def test_list_rejects_an_unknown_list(tmp_path):
    proc = cli(tmp_path, "list", "datasets")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


@pytest.mark.parametrize("args", [["published", "list"], ["list", "models"], ["--help"], ["published", "show", "mmmu_table2"]])
def test_a_closed_pipe_ends_quietly(args):
    """`mmbench published list | head`: the reader is gone before the first write."""
    r, w = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "mmbench_lib.cli", *args], cwd=ROOT, env=env,
                            stdout=w, stderr=subprocess.PIPE, text=True)
    os.close(w)
    os.close(r)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 141), err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err


def test_shortcuts_map_onto_parameters_of_the_same_name(tmp_path):
    # --limit is limit: its range check speaks
    line = one_error_line(cli(tmp_path, "run", "notebooks/10_seed_bench.ipynb", "--limit", "-3"))
    assert "limit=-3" in line and "must be >= 0" in line
    line = one_error_line(cli(tmp_path, "run", "notebooks/10_seed_bench.ipynb", "--model", "vlm:/no/such/model"))
    assert "model='vlm:/no/such/model'" in line and "no such model folder" in line
    # a notebook without the parameter refuses the shortcut
    line = one_error_line(cli(tmp_path, "run", "notebooks/40_paper_figures.ipynb", "--model", "smollm2"))
    assert "--model" in line and "has no parameter 'model'" in line
    line = one_error_line(cli(tmp_path, "run", "notebooks/10_seed_bench.ipynb", "--limit", "3", "-p", "limit", "4"))
    assert "contradicts -p limit" in line
    assert not (tmp_path / "outputs").exists()


def test_a_mistaken_run_is_refused_without_importing_torch(tmp_path):
    """The checks import no torch / transformers / papermill: the refusal takes about a second."""
    code = ("import sys; from mmbench_lib.cli import main; rc = main(sys.argv[1:]); "
            "heavy = [m for m in ('torch', 'transformers', 'papermill', 'scipy') if m in sys.modules]; "
            "print('heavy:', heavy); sys.exit(rc)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MMBENCH_OUTPUTS": str(tmp_path / "outputs"), "HF_HUB_OFFLINE": "1"}
    env.pop("MMBENCH_PLUGINS", None)  # as a user runs it: the tests' model plugin (tests.tiny_models) imports torch
    for args in (["-p", "model", "causal:nonexistent/model"], ["-p", "subjects", "[Acounting]"]):
        proc = subprocess.run([sys.executable, "-c", code, "run", "notebooks/20_generation.ipynb", *args], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=120)
        line = one_error_line(proc)
        assert "heavy: []" in proc.stdout, proc.stdout
        assert "huggingface.co" not in line
    assert "did you mean 'Accounting'" in line
    assert not (tmp_path / "outputs").exists()


def test_debug_shows_the_traceback(tmp_path):
    proc = cli(tmp_path, "--debug", "run", "notebooks/10_seed_bench.ipynb", "-p", "batch_size", "0")
    assert proc.returncode == 2 and "Traceback" in proc.stderr and "must be >= 1" in proc.stderr
    proc = cli(tmp_path, "run", "notebooks/10_seed_bench.ipynb", "-p", "batch_size", "0", env_extra={"MMBENCH_DEBUG": "1"})
    assert "Traceback" in proc.stderr


def test_a_failing_notebook_is_one_line_with_the_cause_and_the_kept_notebook(tmp_path):
    bad = tmp_path / "SEED-Bench.json"  # its first question passes the checks' cheap look; the file lacks question_type
    first = {"question_id": "1", "question": "q", **{f"choice_{c}": c for c in "abcd"}, "answer": "A", "question_type_id": 1,
             "data_id": "x"}
    bad.write_text(json.dumps({"questions": [first]}), encoding="utf-8")
    proc = cli(tmp_path, "run", "notebooks/10_seed_bench.ipynb", "-p", "annotation_file", str(bad), "--model", "random",
               "--run-id", "broken")
    line = one_error_line(proc)
    assert proc.returncode == 1
    assert "10_seed_bench.ipynb failed in cell" in line and "DataError" in line and "field missing" in line, line
    kept = Path(line.rpartition("(partial notebook: ")[2].rstrip(")"))
    assert kept.is_file() and kept.parent == tmp_path / "outputs" / "broken"
    assert "DataError" in kept.read_text(encoding="utf-8")  # the cell's error is in the kept notebook


def test_the_resume_guard_refuses_a_changed_model_before_writing(tmp_path):
    args = ["run", "notebooks/10_seed_bench.ipynb", "-f", "params/10_seed_bench/seed1_demo_smollm2.yaml",
            "--model", "random", "--limit", "2", "--run-id", "guarded"]
    first = cli(tmp_path, *args)
    assert first.returncode == 0, first.stderr[-2000:]
    folder = tmp_path / "outputs" / "guarded"
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert folder / "params.yaml" in before and folder / "10_seed_bench.ipynb" in before

    line = one_error_line(cli(tmp_path, *args[:4], "--model", "tiny-llava", "--limit", "2", "--run-id", "guarded"))
    assert "holds predictions made with model='random'" in line and "model='tiny-llava'" in line, line
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before  # nothing written

    (folder / "params.yaml").unlink()  # a folder made outside `mmbench run`: its manifest decides
    line = one_error_line(cli(tmp_path, "run", "notebooks/10_seed_bench.ipynb", "--model", "smollm2", "--run-id", "guarded"))
    assert "manifest.json" in line and "model='random'" in line
    line = one_error_line(cli(tmp_path, "run", "notebooks/20_generation.ipynb", "--run-id", "guarded"))
    assert "holds a run of 10_seed_bench.ipynb" in line


def test_make_paper_writes_under_outputs_unless_asked_for_docs(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    env = {**os.environ, "MMBENCH_OUTPUTS": str(tmp_path / "outputs")}

    def dry(*args):
        proc = subprocess.run(["make", "-n", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    default = dry("paper")
    assert "docs/figures" not in default and f"--dest {tmp_path / 'outputs'}/paper_" in default, default
    assert "--dest docs/figures" in dry("paper-docs")
    assert "--dest docs/figures" in dry("paper", "PAPER_DEST=docs/figures")


def test_resume_guard_reads_a_manifest_config_as_the_notebook_gave_it(tmp_path):
    """A run made in JupyterLab (no params.yaml): its manifests' config decides; resolved paths and
    split aliases are not mistaken for changes."""
    import json

    from mmbench_lib.runner import ParameterError, check_resume, notebook_parameters

    nb = ROOT / "notebooks" / "20_generation.ipynb"
    known = notebook_parameters(nb)
    folder = tmp_path / "run"
    (folder / "smollm2").mkdir(parents=True)
    config = {"benchmark": "mmmu", "model": "smollm2", "source": "/abs/data/demo/mmmu", "split": "validation",
              "max_new_tokens": 16, "seed": 0, "recipe": "seed1-ppl", "reduction": None, "dtype": None}
    (folder / "smollm2" / "manifest.json").write_text(json.dumps({"config": config}))
    (folder / "smollm2" / "predictions.jsonl").write_text('{"id": "1"}\n')
    check_resume(folder, nb, {}, known)
    check_resume(folder, nb, {"split": "val", "limit": 5, "batch_size": 2}, known)
    with pytest.raises(ParameterError, match="max_new_tokens=16"):
        check_resume(folder, nb, {"max_new_tokens": 32}, known)
    (folder / "smollm2" / "predictions.jsonl").write_text("")  # nothing scored yet: any settings may start over
    check_resume(folder, nb, {"max_new_tokens": 32}, known)


def test_placement_shortcuts_parse_check_and_refuse(tmp_path):
    from mmbench_lib.cli import build_parser, shortcut_overrides

    nb = "notebooks/10_seed_bench.ipynb"
    a = build_parser().parse_args(["run", nb, "--device-map", "auto", "--max-memory", "0=38GiB,1=38GiB,cpu=120GiB",
                                   "--dtype", "bfloat16"])
    got = shortcut_overrides(a, {})
    assert got == {"device_map": "auto", "max_memory": {0: "38GiB", 1: "38GiB", "cpu": "120GiB"}, "dtype": "bfloat16"}
    a = build_parser().parse_args(["run", nb, "--device-map", "{model.layers.0: 0, lm_head: cpu}"])
    assert shortcut_overrides(a, {}) == {"device_map": {"model.layers.0": 0, "lm_head": "cpu"}}
    line = one_error_line(cli(tmp_path, "run", nb, "--device-map", "everywhere"))
    assert "--device-map: 'everywhere'" in line and "auto" in line
    line = one_error_line(cli(tmp_path, "run", nb, "--device-map", "auto", "--max-memory", "gpu0=20GiB"))
    assert "--max-memory: key 'gpu0' is not a GPU index" in line
    # a memory cap without a device map is refused by the value checks, before any kernel starts
    line = one_error_line(cli(tmp_path, "run", nb, "-p", "max_memory", "{0: 20GiB}"))
    assert "max_memory=" in line and "needs device_map" in line
    line = one_error_line(cli(tmp_path, "run", "notebooks/40_paper_figures.ipynb", "--device-map", "auto"))
    assert "has no parameter 'device_map'" in line
    assert not (tmp_path / "outputs").exists()
