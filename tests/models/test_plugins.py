"""Model plugins (``$MMBENCH_PLUGINS``): modules the model registry imports, whose loaders join it; child processes
inherit them (the tests' tiny families reach ``mmbench list models`` through the variable)."""
import os
import subprocess
import sys

import pytest

from mmbench_lib.models.registry import PLUGINS_ENV, is_builtin, load_plugins


def test_the_tests_plugin_registers_the_tiny_families():
    from mmbench_lib.models import MODEL_REGISTRY

    assert os.environ[PLUGINS_ENV] == "tests.tiny_models"
    assert not is_builtin("tiny-gemma3") and is_builtin("tiny-llava") and is_builtin("tiny-qwen2-vl")
    assert MODEL_REGISTRY["tiny-gemma3"].loader.__module__ == "tests.tiny_models"


def test_a_child_process_sees_the_plugin_models_and_without_it_does_not():
    code = "from mmbench_lib.models import MODEL_REGISTRY as R; print('tiny-gemma3' in R, 'tiny-llava' in R)"
    run = lambda env: subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert run(os.environ).stdout.split() == ["True", "True"]
    assert run({k: v for k, v in os.environ.items() if k != PLUGINS_ENV}).stdout.split() == ["False", "True"]


def test_a_plugin_that_cannot_be_imported_is_one_line_naming_it():
    with pytest.raises(ImportError, match=r"^MMBENCH_PLUGINS: cannot import model plugin 'no_such_plugin': "):
        load_plugins("tests.tiny_models, no_such_plugin")
    assert load_plugins(" ,") == []
