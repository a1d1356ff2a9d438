"""The task contract (``mmbench_lib/tasks/base.py``): the registry, and nothing outside ``tasks/`` and
``demo/`` deciding by a benchmark's name."""
import ast
import re
from pathlib import Path

import pytest

from mmbench_lib import tasks
from mmbench_lib.core.items import Item
from mmbench_lib.tasks.base import GenerationTask, Task, UnknownTask, get_task, register_task, task_names

PKG = Path(__file__).resolve().parents[1] / "mmbench_lib"


# ------------------------------------------------------------------------------------------------ registry

def test_names_and_aliases_resolve_to_one_task():
    names = task_names()
    assert names == sorted(names) and {"cmmmu", "mmmu", "seed", "seed2"} <= set(names)
    with_aliases = task_names(aliases=True)
    assert with_aliases[with_aliases.index("seed") + 1] == "seed1"  # an alias follows its name
    assert get_task("seed1") is get_task("seed")
    assert tasks.canonical_name("seed1") == "seed" and tasks.canonical_name("other") == "other"
    assert {"cmmmu", "mmmu"} <= set(task_names(protocol="generation")) and "seed" not in task_names(protocol="generation")
    assert tasks.get("seed1").__name__ == "mmbench_lib.tasks.seed1"  # the module, for older callers


def test_unknown_name_is_one_line_with_did_you_mean():
    with pytest.raises(UnknownTask) as e:
        get_task("mmu")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg == f"unknown benchmark 'mmu'; did you mean 'mmmu'? (known: {', '.join(task_names(aliases=True))})"
    with pytest.raises(ValueError, match="unknown benchmark 'xyz' \\(known"):  # no close name: no suggestion
        get_task("xyz")


@pytest.mark.parametrize("name", task_names())
def test_every_registered_task_satisfies_the_contract(name):
    t = get_task(name)
    assert t.problems() == []
    assert t.name == name and t.module is not None and callable(t.module.load)
    assert all(t.split_aliases.get(s, s) in t.splits for s in [*t.splits, *t.split_aliases])
    assert set(t.groups) and all(set(ids) <= set(t.dimensions) for ids in t.groups.values())
    assert all(isinstance(v, tuple) and isinstance(v[0], str) for v in t.dimensions.values())
    from mmbench_lib import published
    assert set(t.published_tables) <= set(published.list_tables()), "published_tables name tables that exist"
    if t.protocol == "generation":
        assert isinstance(t, GenerationTask) and t.ocr_lang and t.parser is not None
        # None: no split besides the scored items (MMMU-Pro); baselines learning from a split are refused
        assert t.validation_split is None or t.validation_split in t.splits
    else:  # what a ranking task hands the notebooks are loader arguments
        loader = set(t.data_parameters())
        assert set(t.path_parameters) <= loader and set(t.demo_filters) <= loader
        assert all(isinstance(v, tuple) and v for v in t.parameter_choices.values())


def test_variant_is_a_subclass_sharing_the_base_behaviour():
    seed, seed2 = get_task("seed"), get_task("seed2")
    assert isinstance(seed2, type(seed))
    seed2.check_selection("dimensions", [1, 27])
    with pytest.raises(ValueError, match="use 'all' or a list of ids 1-27"):
        seed2.check_selection("dimensions", "image")  # v1's named selections are v1's only
    seed.check_selection("dimensions", "video")
    with pytest.raises(ValueError, match="13 is not a seed dimension id \\(1-12\\)"):
        seed.check_selection("dimensions", [1, 13])


def test_selection_checks_name_the_kind_with_did_you_mean():
    get_task("mmmu").check_selection("subjects", ["Accounting", "acc", "Art Theory"])
    with pytest.raises(ValueError, match="unknown MMMU subject 'Acounting'; did you mean 'Accounting'"):
        get_task("mmmu").check_selection("subjects", ["Acounting"])
    with pytest.raises(ValueError, match="unknown CMMMU category 'Scince'"):
        get_task("cmmmu").check_selection("subjects", "Scince")
    get_task("cmmmu").check_selection("dimensions", [99])  # not a parameter CMMMU selects by: ignored


def test_register_refuses_a_taken_name_and_an_incomplete_task():
    class Clash(type(get_task("seed2"))):
        name = "seed-clash"
        aliases = ("seed1",)

    with pytest.raises(ValueError, match="'seed1' is already taken by 'seed'"):
        register_task(Clash)
    assert "seed-clash" not in task_names()

    class Half(GenerationTask):
        name, title = "half", "Half"
        module = tasks.get("mmmu")
        dimensions, groups = {1: ("a",)}, {"All": (1,)}

    with pytest.raises(TypeError, match="does not satisfy the contract: .*needs parser"):
        register_task(Half)


def test_one_load_items_for_both_protocols(demo):
    for name in task_names():
        t = get_task(name)
        items = tasks.load_items(name, t.demo_args(demo))
        assert items and all(isinstance(it, Item) and it.benchmark == name for it in items)
        if t.protocol == "generation":  # the manifest records source/split/subjects: the same items again
            man = {"source": demo[name][t.demo_source_key], "split": t.default_split, "subjects": None}
            assert [it.id for it in t.load_items(**t.manifest_args(man))] == [it.id for it in items]


# ------------------------------------------------------------------------------------------------ no names outside tasks/

#: words that name a benchmark (registered or announced), matched as whole tokens of a lower-cased string
BENCHMARK_TOKENS = {"seed1", "seed2", "seedbench", "seed2plus", "mmmu", "cmmmu", "mmmupro"}
#: spelled with a separator: "SEED-Bench", "MMMU-Pro", "SEED-Bench-2-Plus" (file names such as 10_seed_bench.ipynb are not names)
BENCHMARK_RE = re.compile(r"seed[- ]?bench|mmmu[-_ ]?pro")
#: modules allowed to name benchmarks: the tasks themselves, the demo data builders
ALLOWED = ("mmbench_lib/tasks/", "mmbench_lib/demo/")


def _docstrings(tree) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def names_benchmark(text: str) -> bool:
    low = text.lower()
    return bool(BENCHMARK_RE.search(low)) or any(t in BENCHMARK_TOKENS for t in re.split(r"[^a-z0-9]+", low))


def _seed_as_benchmark(node, parents) -> bool:
    """The bare word "seed" is also the RNG seed; it names SEED-Bench when compared with a value
    (``b == "seed"``, ``b in ("seed", ...)``)."""
    p = parents.get(id(node))
    if isinstance(p, (ast.Tuple, ast.List, ast.Set)):
        p = parents.get(id(p))
    return isinstance(p, ast.Compare)


def benchmark_names_in(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            v = node.value
            if names_benchmark(v) or (v.strip().lower() == "seed" and _seed_as_benchmark(node, parents)):
                hits.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: {v[:60]!r}")
    return hits


def test_the_scanner_finds_names_and_only_names():
    assert names_benchmark("mmmu") and names_benchmark("seed1-ppl") and names_benchmark("SEED-Bench-2")
    assert names_benchmark("cmmmu_table4") and names_benchmark("MMMU-Pro") and names_benchmark("seed2plus")
    assert not names_benchmark("seed") and not names_benchmark("random seed") and not names_benchmark("seeds")
    tree = ast.parse('x = b == "seed"\ny = {"seed": 1}\nz = b in ("seed", "x")\n')
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    seeds = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == "seed"]
    assert [_seed_as_benchmark(n, parents) for n in seeds] == [True, False, True]


#: the papers' transcribed tables and their renderers: their keys name tables of named papers
#: (``seed2_table2``, ``mmmu_fig6_errors``) and the ``papers`` values; which benchmark's runs join a table is
#: asked of the tasks (``Task.published_tables``, ``Task.paper``), so these modules are held to a narrower rule
PAPER_TABLES = ("mmbench_lib/paper/", "mmbench_lib/published/")


def selects_by_name(path: Path) -> list[str]:
    """String constants equal to a registered benchmark name or alias used to select or compare:
    inside a comparison or a list / tuple / set literal (``b == "mmmu"``, ``b in ("seed", "seed2")``, ``["seed"]``)."""
    names = set(task_names(aliases=True))
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in names:
            p = parents.get(id(node))
            if isinstance(p, (ast.Compare, ast.Tuple, ast.List, ast.Set)):
                hits.append(f"{_rel(path)}:{node.lineno}: {node.value!r}")
    return hits


def _rel(path: Path) -> str:
    return str(path.relative_to(PKG.parent)) if path.is_relative_to(PKG.parent) else str(path)


def test_no_library_module_outside_tasks_and_demo_names_a_benchmark():
    hits = []
    for path in sorted(PKG.rglob("*.py")):
        rel = str(path.relative_to(PKG.parent))
        if rel.startswith(PAPER_TABLES):
            hits.extend(selects_by_name(path))
        elif not rel.startswith(ALLOWED):
            hits.extend(benchmark_names_in(path))
    assert hits == [], "modules outside tasks/ and demo/ that name a benchmark:\n" + "\n".join(hits)


def test_every_published_table_belongs_to_exactly_one_task():
    from mmbench_lib import published
    from mmbench_lib.paper import owner

    owners = {name: owner(name) for name in published.list_tables()}
    assert set(owners.values()) <= set(task_names())
    assert owners["seed2_table2"] == "seed2" and owners["cmmmu_fig4_errors"] == "cmmmu"


def test_the_narrow_rule_catches_a_selection_by_name(tmp_path):
    f = tmp_path / "probe.py"
    f.write_text('x = _ours_rows(runs, ["seed2"])\nif b != "mmmu":\n    pass\nkey = {"mmmu": 1}\n', encoding="utf-8")
    assert sorted(h.split(": ", 1)[1] for h in selects_by_name(f)) == ["'mmmu'", "'seed2'"]  # not the dict key
