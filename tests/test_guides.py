"""The guides are followed literally: ``docs/adding_a_family.md`` by adding a toy family (VipLLaVA) in a temporary
module exactly as its steps say, then running the equality checks its step 4 names on it;
``docs/adding_a_benchmark.md`` by registering its task snippet from a temporary module (a toy generation benchmark
on the MMMU demo files) and running it: contract, demo items, responses, official scoring."""
import importlib.util
import re
import sys
import textwrap
from pathlib import Path

import pytest

from mmbench_lib.models import family_records as fr
from mmbench_lib.models.registry import MODEL_REGISTRY, Family

ROOT = Path(__file__).resolve().parents[1]

#: step 3's builder, written to a temporary module (the guide's ``...`` filled in)
TOY_BUILDER = '''
import torch

from mmbench_lib.models.tiny import llava_processor, tiny_tokenizer
from tests.tiny_models import _clip_vision, _llama_text


def tiny_vipllava(image_size=32, patch_size=8, hidden=64, layers=2, seed=0):
    from transformers import VipLlavaConfig, VipLlavaForConditionalGeneration

    tok = tiny_tokenizer()
    config = VipLlavaConfig(
        vision_config=_clip_vision(hidden, layers, image_size, patch_size), text_config=_llama_text(tok, hidden, layers),
        image_token_index=tok.convert_tokens_to_ids("<image>"), image_seq_length=(image_size // patch_size) ** 2,
        vision_feature_layer=[-1, -2],
    )
    torch.manual_seed(seed)
    model = VipLlavaForConditionalGeneration(config).eval()
    return model, llava_processor(tok, image_size, patch_size)
'''


#: step 1's module around the guide's snippet: the data loader and the generation functions the guide lists
#: (borrowed from MMMU, the items relabelled as the toy benchmark's)
TOY_TASK = '''
import dataclasses
import sys

from mmbench_lib.tasks import mmmu as _mmmu
from mmbench_lib.tasks.base import GenerationTask, Layout, register_task
from mmbench_lib.tasks.mmmu import (DIMENSIONS, GROUPS, answer_kind, baseline_answer, baseline_choices,
                                    generation_prompt, image_placeholders, parser, probe, write_official,
                                    write_submission)


def load(**kwargs):
    return [dataclasses.replace(it, benchmark="mybench") for it in _mmmu.load(**kwargs)]

'''


def _python_blocks(page: str) -> list[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return [textwrap.dedent(b) for _, b in re.findall(r"^( *)```python\n(.*?)^\1```", text, re.M | re.S)]


def test_the_family_guide_names_the_files_it_touches():
    text = (ROOT / "docs" / "adding_a_family.md").read_text(encoding="utf-8")
    files = re.findall(r"^## \d\. .*?`([\w/.]+\.py)`", text, re.M)
    assert files == ["mmbench_lib/models/family_records.py", "mmbench_lib/models/families.py", "tests/tiny_models.py",
                     "tests/models/test_more_families.py"]
    assert all((ROOT / f).is_file() for f in files)


def test_adding_a_family_as_the_guide_says(tmp_path, monkeypatch, demo):
    import tests.tiny_models as tiny_models
    from tests.models import test_families, test_more_families

    record_src, builder_src = _python_blocks("adding_a_family.md")
    # 1. the record, added to RECORDS
    record = eval(record_src.strip().rstrip(","), {"FamilyRecord": fr.FamilyRecord})
    assert fr.record_for("vipllava") is fr.GENERIC  # a family the suite did not know
    monkeypatch.setattr(fr, "RECORDS", (*fr.RECORDS, record))
    # 2. no adapter: VipLLaVA's processor is LLaVA's
    # 3. the builder in a (temporary) module, its spec in TINY_FAMILIES; the plugin registers its entries
    (tmp_path / "toy_family.py").write_text(TOY_BUILDER, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("toy_family", tmp_path / "toy_family.py")
    toy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(toy)
    monkeypatch.setattr(tiny_models, "TINY_FAMILIES", dict(tiny_models.TINY_FAMILIES))
    [entry] = [line for line in builder_src.splitlines() if line.startswith("TINY_FAMILIES[")]
    exec(entry, {"TINY_FAMILIES": tiny_models.TINY_FAMILIES, "tiny_vipllava": toy.tiny_vipllava})
    assert tiny_models.TINY_FAMILIES["tiny-vipllava"] == (toy.tiny_vipllava, {})
    monkeypatch.setitem(MODEL_REGISTRY, "tiny-vipllava", Family("tiny-vipllava", tiny_models.load_tiny_family,
                                                                False, False))
    # 4. the spec in test_more_families.FAMILIES, and its checks run
    monkeypatch.setitem(test_more_families.FAMILIES, "tiny-vipllava", "VipLLaVA")
    try:
        test_more_families.test_family_engine_matches_reference("tiny-vipllava")
        test_more_families.test_family_batched_generation_equals_one_at_a_time("tiny-vipllava", demo)
        a = test_families.adapter("tiny-vipllava")
        assert type(a.model).__name__ == "VipLlavaForConditionalGeneration" and a.describe()["family_record"] == "VipLLaVA"
    finally:
        test_families._CACHE.pop("tiny-vipllava", None)
    assert any(line.startswith("VipLLaVA ") for line in fr.table())


@pytest.mark.parametrize("page", ["adding_a_family.md"])
def test_guide_code_blocks_are_python(page):
    for block in _python_blocks(page):
        compile(block.replace("...", "pass"), page, "exec")


def test_adding_a_benchmark_as_the_guide_says(tmp_path, demo, tiny_llava):
    from mmbench_lib import tasks
    from mmbench_lib.core.store import RunStore
    from mmbench_lib.pipeline.generation import generate_items, score_run
    from mmbench_lib.tasks import base

    [snippet] = _python_blocks("adding_a_benchmark.md")
    (tmp_path / "mybench.py").write_text(TOY_TASK + snippet, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("mybench", tmp_path / "mybench.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["mybench"] = module  # the snippet's ``sys.modules[__name__]``
    try:
        spec.loader.exec_module(module)  # registers the task
        task = base.get_task("mybench")
        assert type(task).__name__ == "MyTask" and task.problems() == [] and task.module is module
        paths = {**demo, "mybench": demo[base.get_task("mmmu").name]}  # step 2: the demo builder's entry
        assert task.probe(task.demo_args(paths)["source"], "validation") == "per-config"
        items = tasks.load_items("mybench", task.demo_args(paths))
        assert items and {it.benchmark for it in items} == {"mybench"}
        store = RunStore(tmp_path / "run")
        generate_items(items[:2], tiny_llava, store, max_new_tokens=4, progress=False)
        rows, metrics = score_run(items[:2], store)
        assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
        assert metrics["benchmark"] == "mybench" and (tmp_path / "run" / "metrics.json").is_file()
    finally:
        sys.modules.pop("mybench", None)
        base._REGISTRY.pop("mybench", None)
        for alias, name in list(base._ALIASES.items()):
            if name == "mybench":
                del base._ALIASES[alias]
    assert "mybench" not in base.task_names()
