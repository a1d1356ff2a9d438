"""Notebooks 50-52 take ``-p retry_failed`` (as 10, 11 and 20 do) and every sub-run they make carries it
(``run.retry_failed`` of its spec, recorded in its manifest): ``false`` keeps a resumed run's failed items failed."""
import json
from pathlib import Path

from mmbench_lib import runner
from mmbench_lib.pipeline import runs
from mmbench_lib.reports import blind, circular, configs
from mmbench_lib.reports import protocol as pr

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ("50_protocol_sensitivity", "51_blind_solvability", "52_circular_eval")


def _recorded(folder) -> bool:
    return json.loads((Path(folder) / "manifest.json").read_text())["spec"]["run"]["retry_failed"]


def test_the_report_notebooks_accept_retry_failed():
    for name in REPORTS:
        nb = ROOT / "notebooks" / f"{name}.ipynb"
        known = runner.notebook_parameters(nb)
        assert known["retry_failed"]["default"] == "True", name
        runner.check_params(nb.name, {"retry_failed": False}, known)  # no "has no parameter(s)"


def test_every_sub_run_of_the_reports_carries_it(demo, tmp_path):
    rep = pr.seed_report("mmb", runs.demo_args("mmb", demo), tmp_path / "50", model="random", protocols=["content-sum"],
                         scorer="reference", reuse=False, retry_failed=False, progress=False)
    assert rep is not None and _recorded(tmp_path / "50" / "mmb__seed1-ppl") is False
    values = {"benchmark": "seed", "data": {}, "recipe": "qwen-vl-letters", "limit": 4, "retry_failed": False,
              "progress": False, "device": "cpu"}
    config = configs.base_config(values, tmp_path / "51", demo, model="random")
    folders = blind.blind_runs(config, ["random"], tmp_path / "51")
    assert [_recorded(f) for f in folders.values()] == [False]
    config = configs.base_config(values, tmp_path / "52", demo, model="random")
    orders = circular.order_runs(config, tmp_path / "52", permutations=2)
    assert orders and all(_recorded(f) is False for f in orders.values())
