"""docs/models.md lists what the registries hold: its spec table is the library's registered prefixes (plugins
left out), its family table is ``family_records.table()``, the one ``mmbench list models`` prints."""
import re
from pathlib import Path

from mmbench_lib.models import MODEL_REGISTRY, family_records
from mmbench_lib.models.registry import is_builtin

MODELS_MD = Path(__file__).resolve().parents[1] / "docs" / "models.md"


def _spec_table() -> dict[str, str]:
    text = MODELS_MD.read_text(encoding="utf-8")
    table = text[text.index("| spec | model |"):].split("\n\n", 1)[0].splitlines()[2:]
    return {spec: row.split(" | ", 1)[1] for row in table for spec in re.findall(r"`([^`]+)`", row.split(" | ")[0])}


def test_the_spec_table_is_the_library_registry():
    prefixes = {spec.split(":")[0] for spec in _spec_table()}
    assert prefixes == {p for p in MODEL_REGISTRY if is_builtin(p)}
    assert not any(p.startswith("tiny-") for p in prefixes - {"tiny-llava", "tiny-qwen2-vl"})


def test_plugin_specs_are_not_in_the_table():
    plugins = {p for p in MODEL_REGISTRY if not is_builtin(p)}
    assert "tiny-gemma3" in plugins  # the tests' plugin (tests/conftest.py) is loaded
    assert not plugins & {spec.split(":")[0] for spec in _spec_table()}


def test_the_family_table_is_the_records_table():
    text = MODELS_MD.read_text(encoding="utf-8")
    block = text[text.index("### Family records"):].split("```text\n", 1)[1].split("```", 1)[0]
    assert block.rstrip("\n").splitlines() == family_records.table()
