"""Run identity read through the one run record (``core.record``; issue 38 item 1): an older manifest (a flat
``config`` without the fields added since) and a spec manifest of the same run are the same run for ``compare``,
report reuse and resume, and resume refuses a changed field naming it."""
import json
from pathlib import Path

import pytest

from mmbench_lib.core.record import DEFAULTS, differences, from_manifest
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunSpec, run_params
from mmbench_lib.pipeline.reuse import identity_difference
from mmbench_lib.pipeline.shards import fingerprint, fingerprint_difference


def _seed(demo, out, **kw):
    return RunSpec.from_params("seed", out, **{"data": runs.demo_args("seed", demo), "model": "random", "limit": 2,
                                               "recipe": "qwen-vl-letters", "rotation": 1, "progress": False, **kw})


def _as_older(man: dict) -> dict:
    """The manifest a run made before the spec wrote: a flat ``config`` without the fields added since."""
    config = {k: v for k, v in run_params(man).items() if k not in DEFAULTS or k in ("rotation",)}
    return {**{k: v for k, v in man.items() if k not in ("spec", "identity")}, "config": config}


def test_an_older_manifest_and_a_spec_manifest_of_one_run_are_one_identity(demo, tmp_path):
    spec = _seed(demo, tmp_path / "r")
    runs.evaluate(spec)
    man = json.loads((Path(spec.out_dir) / "manifest.json").read_text(encoding="utf-8"))
    older = _as_older(man)
    assert "stop_strings" not in older["config"] and "lettered_only" not in older["config"]
    new, old = from_manifest(man), from_manifest(older)
    assert old.spec_identity is None and new.spec_identity == spec.identity()
    assert old.identity() == new.identity() and differences(old, new) == []  # compare: the same run
    assert identity_difference(older, spec.with_params(out_dir=tmp_path / "x")) is None  # report reuse: the same run
    assert fingerprint_difference({**fingerprint(older), "identity": None}, {**fingerprint(man), "identity": None}) \
        is None  # a shard merge: the same run but for the recorded identity only newer manifests carry
    other = spec.with_params(out_dir=tmp_path / "x", rotation=2)
    assert identity_difference(older, other) == "selection.rotation 1 (wanted 2)"
    assert differences(old, from_manifest({"spec": other.to_dict()})) == ["rotation: 1 vs 2"]


def test_resume_of_an_older_manifest_refuses_a_changed_field_naming_it(demo, tmp_path):
    spec = _seed(demo, tmp_path / "r")
    runs.evaluate(spec)
    path = Path(spec.out_dir) / "manifest.json"
    path.write_text(json.dumps(_as_older(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")
    with pytest.raises(ValueError, match=r"made with other settings: selection\.seed 0 \(this call: 3\)\. Use another"):
        runs.evaluate(spec.with_params(seed=3))
    with pytest.raises(ValueError, match=r"other settings: model\.video_input 'native' \(this call: 'frames'\)"):
        runs.evaluate(spec.with_params(video_input="frames"))  # a field the older run did not record: its default
    with pytest.raises(ValueError, match=r"other settings: option order \{'rotation': 1.*\(this call: None\)"):
        runs.evaluate(spec.with_params(rotation=0))
    assert runs.evaluate(spec.with_params(limit=3))["counts"]["items"] == 3  # the same run extends
    assert from_manifest(json.loads(path.read_text(encoding="utf-8"))).spec_identity == spec.identity()
