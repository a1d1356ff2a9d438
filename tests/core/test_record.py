"""The typed run record (core.record): a manifest of any version read in one place, and one comparison of two runs
naming every field in which they differ."""
import pytest

from mmbench_lib.core.record import differences, flat_params, from_manifest
from mmbench_lib.pipeline.config import RunSpec, run_params


@pytest.mark.parametrize("params", [
    {"benchmark": "seed2", "data": {"annotation_file": "a.json", "cc3m_dir": "c"}, "model": "smollm2",
     "model_name": "Mine", "recipe": "seed1-ppl", "reduction": "mean", "rotation": 1, "limit": 5, "batch_size": 3},
    {"benchmark": "mmmu-pro", "source": "data/demo/mmmu-pro", "subjects": ["Art"], "split": "standard4-cot",
     "model": "random", "baseline": "random", "permutation_seed": 3, "max_new_tokens": 7},
])
def test_the_spec_flattens_as_the_flat_surface_names_it(params, tmp_path):
    """core cannot import pipeline: its flattening is checked here against ``pipeline.config.run_params``."""
    man = {"spec": RunSpec.from_params(out_dir=tmp_path, **params).to_dict()}
    assert flat_params(man) == run_params(man)
    for name, value in params.items():
        assert flat_params(man)[name] == value, name


def test_older_manifests_read_as_records():
    flat = from_manifest({"config": {"benchmark": "seed", "model": "random", "recipe": "seed1-ppl"}})
    assert flat.benchmark == "seed" and flat.get("model") == "random"
    assert flat.get("prompt_mode") == "official" and flat.get("rotation") == 0  # defaults from before the fields
    oldest = from_manifest({"benchmark": "seed", "data": {"annotation_file": "x.json"}})
    assert oldest.benchmark == "seed" and oldest.params["data"] == {"annotation_file": "x.json"}
    assert from_manifest(None).params == {} and from_manifest({}).benchmark is None


def test_differences_name_every_differing_field(tmp_path):
    def rec(**kw):
        base = {"benchmark": "mmmu-pro", "source": "s", "model": "random", "baseline": "random", "batch_size": 1}
        return from_manifest({"spec": RunSpec.from_params(out_dir=tmp_path, **{**base, **kw}).to_dict(),
                              "data_sha256": {"questions": kw.get("sha", "aa")}} if "sha" not in kw else
                             {"spec": RunSpec.from_params(out_dir=tmp_path, **base).to_dict(),
                              "data_sha256": {"questions": kw["sha"]}})
    a = rec(split="standard4-direct")
    assert differences(a, rec(split="standard4-direct", batch_size=8)) == []  # speed is not what a run computes
    assert differences(a, rec(split="standard10-direct")) == ["split: 'standard4-direct' vs 'standard10-direct'"]
    two = differences(a, rec(split="standard10-direct", prompt_mode="cot"))
    # the CoT mode names its split and brings its own token budget: all three named, sorted by field
    assert two == ["max_new_tokens: 16 vs 512", "prompt_mode: 'official' vs 'cot'", "split: 'standard4-direct' vs 'standard10-cot'"]
    assert differences(rec(sha="aaaaaaaaaaaaaaaa"), rec(sha="bbbbbbbbbbbbbbbb"))[-1] == \
        "data file questions: sha256 aaaaaaaaaaaa vs bbbbbbbbbbbb"


def test_the_defaults_of_older_runs_are_the_spec_fields_defaults():
    """One table (``record.DEFAULTS``, by spec part): each is the default of the spec field it names, and every name
    the record sets apart (``NOT_IDENTITY``) is a flat parameter of the spec."""
    from dataclasses import MISSING, fields

    from mmbench_lib.core.record import NOT_IDENTITY, PART_DEFAULTS
    from mmbench_lib.pipeline.config import FLAT, PARTS, RUN_FIELDS

    for part, defaults in PART_DEFAULTS.items():
        spec_fields = {f.name: f for f in fields(PARTS[part])}
        for key, value in defaults.items():
            f = spec_fields[key]
            default = f.default if f.default is not MISSING else f.default_factory()
            assert (list(default) if isinstance(default, tuple) else default) == value, (part, key)
    assert set(NOT_IDENTITY) <= set(FLAT) | set(RUN_FIELDS)


def test_one_comparison_with_options():
    """``differences`` over the recorded spec identity (dotted, ``ignore`` with sub-fields, ``where``) and over what a
    run wrote it was made with (in order; a wording hook may drop a field)."""
    from mmbench_lib.core.record import call_record, changes

    a = from_manifest({"benchmark": "seed", "model": {"name": "m"}, "recipe": {"name": "r"}, "video_input": {},
                       "identity": {"task": {"data": {"image_root": "/a/img", "dimensions": [1]}, "split": None},
                                    "selection": {"seed": 0, "options": {"rotation": 1}}}})
    b = call_record({"benchmark": "seed", "model": "n", "recipe": {"name": "r"}, "video_input": "native"},
                    {"task": {"data": {"image_root": "/b/img", "dimensions": [2]}, "split": None},
                     "selection": {"seed": 0, "options": None}})
    assert differences(a, b, (), over="spec") == ["selection.options: {'rotation': 1} vs None",
                                                  "task.data.dimensions: [1] vs [2]",
                                                  "task.data.image_root: '/a/img' vs '/b/img'"]
    assert differences(a, b, ("task.data",), over="spec") == ["selection.options: {'rotation': 1} vs None"]
    assert [n for n, *_ in changes(a.spec_identity, b.spec_identity, where=False)] == \
        ["selection.options", "task.data.dimensions"]  # where the data is, not what it is
    assert differences(a, b, (), over="made") == ["model: 'm' vs 'n'", "video_input: 'frames' vs 'native'"]
    assert differences(a, b, (), over="made", word=lambda n, x, y: None if n == "video_input" else n) == ["model"]
