"""The package's layers: data flows one way (docs/architecture.md).

Walks every import of every ``mmbench_lib`` module (an AST walk, nothing is imported) and fails on
- an import cycle between modules;
- an upward edge: a module importing a layer above its own, or a sibling layer of the same rank;
- an import of the package's own modules inside a function, unless the imported module is heavy
  (it pulls torch, transformers, open_clip, playwright or pytesseract at import time): lazy imports
  are for heavy optional dependencies and a fast ``--help``, not for hiding a cycle.
"""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "mmbench_lib"

#: layer -> rank; a module may import modules of its own layer (no cycles) and of lower ranks only
LAYERS = {
    "core": 0,
    "tasks": 1, "scoring": 1, "published": 1,
    "models": 2,
    "pipeline": 3,
    "analysis": 4,
    "paper": 5, "error_analysis": 5, "reports": 5,
    "demo": 6,
    "runner": 7,
    "launch": 8,
    "cli": 9,
}
HEAVY = {"torch", "transformers", "open_clip", "playwright", "pytesseract", "accelerate"}


def _modules():
    mods = {}
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG.parent).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        mods[name] = p
    return mods


MODULES = _modules()


def _resolve(name):
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(name, path):
    """(target module, is top level, external top-level package) for each import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    top_level = {id(n) for n in tree.body} | {id(c) for n in tree.body if isinstance(n, (ast.If, ast.Try))
                                               for c in ast.walk(n)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(pkg[: len(pkg) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else (node.module or "")
            targets = [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for t in targets:
            out.append((t, id(node) in top_level))
    return out


def _layer(name):
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def _graph():
    edges, inner, external = {}, {}, {}
    for name, path in MODULES.items():
        edges[name], inner[name], external[name] = set(), set(), set()
        for target, top in _imports(name, path):
            if target.startswith("mmbench_lib"):
                t = _resolve(target)
                if t and t != name and t != "mmbench_lib":
                    (edges if top else inner)[name].add(t)
            elif top:
                external[name].add(target.split(".")[0])
    return edges, inner, external


EDGES, INNER, EXTERNAL = _graph()


def _heavy(name, seen=None):
    seen = seen if seen is not None else set()
    if name in seen:
        return False
    seen.add(name)
    return bool(EXTERNAL[name] & HEAVY) or any(_heavy(t, seen) for t in EDGES[name])


def test_every_module_belongs_to_a_layer():
    loose = [m for m in MODULES if m != "mmbench_lib" and _layer(m) not in LAYERS]
    assert not loose, f"modules outside the layers {sorted(LAYERS)}: {loose}"


def test_no_upward_or_sideways_imports():
    bad = []
    for a, targets in EDGES.items():
        for b in targets | INNER[a]:
            la, lb = _layer(a), _layer(b)
            if la and lb and la != lb and LAYERS[lb] >= LAYERS[la]:
                bad.append(f"{a} ({la}, rank {LAYERS[la]}) imports {b} ({lb}, rank {LAYERS[lb]})")
    assert not bad, "imports against the data flow:\n" + "\n".join(sorted(bad))


def test_no_import_cycles():
    graph = {a: EDGES[a] | INNER[a] for a in EDGES}
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_function_level_imports_of_own_modules_are_only_for_heavy_ones():
    bad = [f"{a} imports {b} inside a function" for a in INNER for b in sorted(INNER[a]) if not _heavy(b)]
    assert not bad, "\n".join(bad)


def test_the_walk_sees_the_real_graph():
    # the test must be able to fail: known edges exist and a planted upward edge would be caught
    assert "mmbench_lib.core.items" in EDGES["mmbench_lib.tasks.seed1"]
    assert _heavy("mmbench_lib.scoring.engine") and not _heavy("mmbench_lib.core.items")
    assert LAYERS[_layer("mmbench_lib.pipeline.ranking")] > LAYERS[_layer("mmbench_lib.models")]
