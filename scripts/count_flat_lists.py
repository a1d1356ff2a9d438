"""Count the places in mmbench_lib/ that list five or more of the run spec's flat names.

A place is one AST node that names flat parameters side by side: a tuple, list or set literal of strings, a dict
literal's string keys, a call's keyword arguments, a function's parameters, or a class body's annotated fields.
The flat names are ``pipeline.config.FLAT`` plus the run's own fields (``RUN_FIELDS``): 46 names.

    python scripts/count_flat_lists.py [--list] [ROOT]

prints ``<places> places in <files> files`` (and each place with ``--list``). Nothing is imported but the config.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIN_NAMES = 5


def flat_names(root: Path) -> set[str]:
    sys.path.insert(0, str(root))
    from mmbench_lib.pipeline.config import FLAT, RUN_FIELDS

    return set(FLAT) | set(RUN_FIELDS)


def listed(node: ast.AST) -> set[str]:
    """The strings / names a node lists side by side."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    if isinstance(node, ast.Dict):
        return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    if isinstance(node, ast.Call):
        return {k.arg for k in node.keywords if k.arg}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        return {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    if isinstance(node, ast.ClassDef):
        return {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    return set()


def places(root: Path) -> list[tuple[str, int, str, list[str]]]:
    names = flat_names(root)
    out = []
    for f in sorted((root / "mmbench_lib").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            hit = listed(node) & names
            if len(hit) >= MIN_NAMES:
                out.append((str(f.relative_to(root)), node.lineno, type(node).__name__, sorted(hit)))
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--list"]
    root = Path(args[0]).resolve() if args else ROOT
    found = places(root)
    if "--list" in argv:
        for path, line, kind, hit in found:
            print(f"{path}:{line} {kind} {len(hit)}: {', '.join(hit)}")
    print(f"{len(found)} places in {len({p for p, *_ in found})} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
