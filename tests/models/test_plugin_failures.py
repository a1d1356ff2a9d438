"""A model plugin that cannot be imported is one line naming it, before any command runs (issue 41, item 6): a
missing module, a syntax error, a prefix registered twice. The manifest records which plugins a run loaded."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmbench_lib.core.manifest import base_manifest
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module, source, says", [
    ("no_such_plugin", None, "cannot import model plugin 'no_such_plugin': not found (No module named 'no_such_plugin')"),
    ("bad_syntax", "def x(:\n", "cannot import model plugin 'bad_syntax': a syntax error ({dir}/bad_syntax.py, line 1"),
    ("dup_prefix", "from mmbench_lib.models.registry import register_model\n\n@register_model('smollm2')\n"
                   "def load(target, **kw):\n    return None\n",
     "cannot import model plugin 'dup_prefix': it raised ValueError: model prefix 'smollm2' is already registered"),
    ("raises", "raise RuntimeError('plugin broke')\n", "cannot import model plugin 'raises': it raised RuntimeError: "
                                                        "plugin broke"),
])
def test_a_broken_plugin_is_one_line_naming_it(tmp_path, module, source, says):
    if source is not None:
        (tmp_path / f"{module}.py").write_text(source)
    env = {**os.environ, "MMBENCH_PLUGINS": f"tests.tiny_models,{module}",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    env.pop("MMBENCH_DEBUG", None)
    done = subprocess.run([sys.executable, "-m", "mmbench_lib.cli", "published", "list"], env=env, capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()] and "Traceback" not in done.stderr
    assert done.stderr.startswith("mmbench: error: MMBENCH_PLUGINS: ")
    assert says.format(dir=tmp_path) in done.stderr and "fix or unset MMBENCH_PLUGINS" in done.stderr


def test_the_manifest_records_the_plugins_a_run_loaded(demo, tmp_path):
    assert os.environ["MMBENCH_PLUGINS"] == "tests.tiny_models"
    digest = hashlib.sha256((ROOT / "tests" / "tiny_models.py").read_bytes()).hexdigest()
    want = [{"module": "tests.tiny_models", "loaded": True, "file": str(ROOT / "tests" / "tiny_models.py"),
             "sha256": digest}]
    assert base_manifest()["plugins"] == want
    runs.evaluate(RunConfig("seed", tmp_path / "r", data=runs.demo_args("seed", demo), model="random", limit=2,
                            progress=False))
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["plugins"] == want
