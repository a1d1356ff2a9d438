"""The private transformers / torch calls of the engines live in one module and still work.

``hf_internals.problems()`` exercises every call on a tiny random Llama (a deprecation warning counts as a
failure: transformers 5.24 announces that ``past_key_values`` goes away in 5.40); a change in transformers
fails here, naming the call, before any engine test runs into it.
"""
import ast
from pathlib import Path

import pytest

from mmbench_lib.scoring import hf_internals

PKG = Path(__file__).resolve().parents[2] / "mmbench_lib"
#: the private names; outside hf_internals.py no code of the package may use them
PRIVATE = {"_attn_implementation", "past_key_values", "batch_select_indices", "DynamicCache", "DynamicLayer",
           "AttentionInterface", "_global_mapping", "sdpa_attention_forward", "_mkl_linear",
           "_mkl_reorder_linear_weight", "_hf_hook", "rope_deltas", "is_initialized"}


def test_every_private_call_still_works_on_the_installed_transformers():
    assert hf_internals.problems() == []


def test_a_changed_call_is_reported_by_its_name(monkeypatch):
    from transformers import DynamicCache

    def gone(self, *a, **k):
        raise AttributeError("'DynamicCache' object has no attribute 'batch_select_indices'")

    monkeypatch.setattr(DynamicCache, "batch_select_indices", gone)  # as a release that removed it
    assert [p.split(":")[0] for p in hf_internals.problems()] == ["DynamicCache.batch_select_indices"]


def test_the_old_cache_keyword_is_reported_as_deprecated(monkeypatch):
    monkeypatch.setattr(hf_internals, "cache_name", lambda model: "past_key_values")
    names = [p.split(":")[0] for p in hf_internals.problems()]
    if not names:
        pytest.skip("this transformers still takes past_key_values without a warning")
    assert names[0] == "forward(cache=... | past_key_values=...)"


def _private_uses(path: Path) -> list[str]:
    """Private names a module uses in code: attributes, keywords, imported names, strings naming them."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        name = (node.attr if isinstance(node, ast.Attribute) else node.arg if isinstance(node, ast.keyword)
                else node.id if isinstance(node, ast.Name) else node.name if isinstance(node, ast.alias)
                else node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None)
        if name in PRIVATE:
            out.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: {name}")
    return out


def test_no_other_module_makes_a_private_call():
    offenders = [use for path in sorted(PKG.rglob("*.py")) if path.name != "hf_internals.py"
                 for use in _private_uses(path)]
    assert offenders == []
