"""The report figures (blind-solvability, CircularEval, protocol sensitivity) name benchmarks and models by their
display names, never by internal keys ("seed2", "smollm2"), and keep every text at 8 pt or more."""
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from mmbench_lib.analysis.plots import MIN_FONT, smallest_font
from mmbench_lib.reports import blind, circular
from mmbench_lib.reports import protocol as pr

from .test_protocol import PROTOCOLS, _hand_made_runs


def _texts(fig) -> str:
    return " ".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))


def _iv(acc, n):
    return {"accuracy": acc, "wilson_low": max(acc - 0.2, 0), "wilson_high": min(acc + 0.2, 1), "n": n}


def test_blind_figure_names():
    rows = [{"label": "smollm2", "dimension_id": d, "dimension": name, "n": 3, "chance": 0.25, "accuracy": acc,
             "wilson_low": 0.0, "wilson_high": 0.8, "p_holm": 1.0}
            for d, name, acc in ((1, "Scene Understanding", 1 / 3), (None, blind.ALL, 1 / 3))]
    solvable = pd.DataFrame([{"share": 1 / 3, "expected_share": 0.25, "blind_solvable": 1, "n": 3}] * 2)
    audit = SimpleNamespace(per_model=pd.DataFrame(rows), solvable=solvable, benchmark="seed2", split="",
                            models=[{"label": "smollm2", "model": "smollm2"}])
    fig = blind.figure(audit)
    title = fig._suptitle.get_text()
    assert title == "Blind-solvability of SEED-Bench-2: SmolLM2-135M-Instruct without the images"
    assert "smollm2" not in _texts(fig) and "seed2" not in _texts(fig)
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)


def test_circular_figure_names():
    per_dim = pd.DataFrame([{"dimension_id": None, "dimension": dim, "plain": _iv(0.5, 4), "circular": _iv(0.25, 4),
                             "chance": 0.25, "chance_circular": 0.25 ** 4} for dim in ("Computer_Science", circular.ALL)])
    letters = pd.DataFrame([{"letter": x, "gold": 4, "predicted": 4, "accuracy_when_gold": 0.5, "wilson_low": 0.2,
                             "wilson_high": 0.8} for x in "ABCD"])
    r = SimpleNamespace(per_dimension=per_dim, letters=letters, position_bias={"p_value": 0.5}, mode="rotations",
                        orders=["rot-0"], model="smollm2", recipe="mmmu-gen", benchmark="mmmu")
    fig = circular.figure(r)
    assert fig._suptitle.get_text() == "CircularEval on MMMU: SmolLM2-135M-Instruct (mmmu-gen), all cyclic rotations"
    assert "smollm2" not in _texts(fig)
    assert fig.axes[0].get_yticklabels()[0].get_text() == "Computer Science (n=4)"  # the subject, not its key
    assert smallest_font(fig) >= MIN_FONT
    plt.close(fig)


def test_protocol_figures_use_display_names(tmp_path):
    report = pr.ProtocolReport("seed2", "smollm2", pr.ranking_long(PROTOCOLS, _hand_made_runs(tmp_path)),
                               sources=pd.DataFrame())
    for make in (pr.accuracy_figure, pr.agreement_figure, pr.delta_heatmap, pr.summary_figure):
        fig = make(report)
        titles = [t for t in [fig._suptitle] + [ax.title for ax in fig.axes] if t is not None and t.get_text()]
        assert titles and titles[0].get_text().startswith("SEED-Bench-2"), make.__name__
        assert "seed2" not in _texts(fig) and "smollm2" not in _texts(fig), make.__name__
        assert smallest_font(fig) >= MIN_FONT, make.__name__
        plt.close(fig)
