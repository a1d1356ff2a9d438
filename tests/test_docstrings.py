"""Module docstrings stay short (at most 150 words); the detail lives in docs/ (docs/modules.md)."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "mmbench_lib"
LIMIT = 150


def test_every_module_docstring_is_at_most_150_words():
    long = {}
    for path in sorted(PKG.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if len(doc.split()) > LIMIT:
            long[str(path.relative_to(PKG.parent))] = len(doc.split())
    assert not long, f"module docstrings over {LIMIT} words: {long}"


def test_the_modules_page_names_existing_modules():
    text = (PKG.parent / "docs" / "modules.md").read_text(encoding="utf-8")
    names = [line[4:-1] for line in text.splitlines() if line.startswith("## `")]
    assert names and all((PKG.parent / n).is_file() for n in names)
