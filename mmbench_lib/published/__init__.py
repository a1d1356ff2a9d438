"""Published results of the source papers, transcribed to CSV.

Every results table of SEED-Bench v1, SEED-Bench-2, MMMU and CMMMU that could be read from the
papers is shipped as ``<name>.csv`` (first row = header) next to a ``<name>.md`` source note
(paper, table/figure, page, column meanings, empty cells and why, printed values that
disagree with their own table's arithmetic).

More: docs/modules.md, ``mmbench_lib/published/__init__.py``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, Mapping, Sequence

import pandas as pd

__all__ = [
    "list_tables", "load", "source",
    "competition_rank", "rank_mismatches", "check_derived", "derived_interval",
    "is_count_fraction", "rounding_feasible",
    "Derived", "DERIVED", "RANKS", "QUESTION_COUNTS", "ERROR_SAMPLE_SIZES",
    "value_columns", "rank_columns", "count_columns",
]


# --------------------------------------------------------------------------- loading
def _root():
    return resources.files(__name__)


def list_tables() -> list[str]:
    """Names of the transcribed tables (each has a CSV and a source note)."""
    root = _root()
    names = set()
    for entry in root.iterdir():
        if entry.name.endswith(".csv"):
            stem = entry.name[: -len(".csv")]
            if root.joinpath(stem + ".md").is_file():
                names.add(stem)
    return sorted(names)


def _check_name(name: str) -> None:
    if name not in list_tables():
        raise KeyError(f"unknown published table {name!r}; see list_tables()")


def load(name: str) -> pd.DataFrame:
    """The table as a DataFrame. Empty cells become NaN; nothing else is interpreted
    (a model called "NA" would stay a string)."""
    _check_name(name)
    with _root().joinpath(name + ".csv").open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh, keep_default_na=False, na_values=[""])


def source(name: str) -> str:
    """The source note (markdown) of a table."""
    _check_name(name)
    return _root().joinpath(name + ".md").read_text(encoding="utf-8")


def rank_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.endswith("_rank") or c == "rank"]


def count_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith("n_") or c == "dimension_id"]


def value_columns(df: pd.DataFrame) -> list[str]:
    """Numeric columns holding accuracies / percentages (not ranks, not counts, not flags)."""
    skip = set(rank_columns(df)) | set(count_columns(df))
    return [
        c for c in df.columns
        if c not in skip
        and pd.api.types.is_numeric_dtype(df[c])
        and not pd.api.types.is_bool_dtype(df[c])
    ]


# --------------------------------------------------------------------------- ranks
def competition_rank(values: Iterable[float], descending: bool = True) -> list:
    """Standard competition ranking ("1224"): equal values share the best rank and the
    next rank skips. Ranks are ints; NaN/None get NaN and do not occupy a rank."""
    vals = [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
            for v in values]
    present = [v for v in vals if v is not None]
    out: list = []
    for v in vals:
        if v is None:
            out.append(float("nan"))
            continue
        better = sum(1 for w in present if (w > v if descending else w < v))
        out.append(better + 1)
    return out


def rank_mismatches(df: pd.DataFrame, rank_col: str, value_col: str,
                    key: str = "model", descending: bool = True) -> list[tuple]:
    """Rows whose printed rank differs from the competition rank recomputed from the
    printed (rounded) values: ``[(key, value, printed_rank, recomputed_rank), ...]``.
    Rows with no printed rank or no value are ignored."""
    sub = df[df[rank_col].notna() & df[value_col].notna()]
    rec = competition_rank(sub[value_col].tolist(), descending=descending)
    out = []
    for (_, row), r in zip(sub.iterrows(), rec):
        if int(row[rank_col]) != int(r):
            out.append((row[key], float(row[value_col]), int(row[rank_col]), int(r)))
    return out


# --------------------------------------------------------------------------- averages
@dataclass(frozen=True)
class Derived:
    """A printed column that is a weighted mean of other printed columns.

    ``weights`` maps source column -> weight (question counts for question-weighted
    averages, number of dimensions for means of dimension accuracies).
    ``in_decimals``/``out_decimals``: the number of decimals the inputs and the output
    are printed with; the check allows exactly the error that this rounding can cause.
    """
    target: str
    weights: Mapping[str, float]
    in_decimals: int
    out_decimals: int
    kind: str  # "question-weighted" or "mean of dimensions"


# Question counts printed in the papers' table headers / statistics (see the .md notes).
QUESTION_COUNTS = {
    # SEED-Bench v1 (paper version, 19,242 questions): dims 1-9 image, 10-12 video.
    "seed1_dimensions": {
        1: 3158, 2: 1831, 3: 4649, 4: 978, 5: 2447, 6: 657, 7: 97, 8: 331, 9: 85,
        10: 1740, 11: 2077, 12: 1192,
    },
    "seed1_spatial": 14233,
    "seed1_temporal": 5009,
    "mmmu_test_disciplines": {
        "art_design": 1163, "business": 1428, "science": 2426, "health_medicine": 1752,
        "humanities_social_sci": 947, "tech_engineering": 2784,
    },
    "mmmu_val_disciplines": {
        "art_design": 120, "business": 150, "science": 150, "health_medicine": 150,
        "humanities_social_sci": 120, "tech_engineering": 210,
    },
    "mmmu_test_subjects": {
        "mmmu_table4_art_design": {"art": 231, "art_theory": 429, "design": 169, "music": 334},
        "mmmu_table5_business": {"accounting": 380, "economics": 267, "finance": 355,
                                 "manage": 245, "marketing": 181},
        "mmmu_table6_science": {"biology": 345, "chemistry": 603, "geography": 565,
                                "math": 505, "physics": 408},
        "mmmu_table7_health_medicine": {"basic_medical_science": 326, "clinical_medicine": 325,
                                        "diagnostics_lab_medicine": 162, "pharmacy": 430,
                                        "public_health": 509},
        "mmmu_table8_humanities_social_sci": {"history": 278, "literature": 112,
                                              "sociology": 252, "psychology": 305},
        "mmmu_table9_tech_engineering": {"agriculture": 287, "architecture_engineering": 551,
                                         "computer_science": 371, "electronics": 256,
                                         "energy_power": 432, "materials": 458,
                                         "mechanical_engineering": 429},
    },
    "mmmu_difficulty": {"easy": 2946, "medium": 4917, "hard": 2637},
    "cmmmu_test_disciplines": {
        "art_design": 1091, "business": 1538, "science": 2494, "health_medicine": 1865,
        "humanities_social_sci": 1038, "tech_engineering": 2974,
    },
    "cmmmu_question_type": {"multiple_choice": 7076, "fill_in_the_blank": 2753,
                            "true_or_false": 1171},
    "cmmmu_difficulty": {"easy": 3369, "medium": 6328, "hard": 1303},
}

# Number of annotated error cases behind each error-distribution figure.
ERROR_SAMPLE_SIZES = {"mmmu_fig6_errors": 150, "cmmmu_fig4_errors": 141}

_QC = QUESTION_COUNTS
DERIVED: dict[str, list[Derived]] = {
    # SEED v1: Overall is pooled over questions (= spatial and temporal weighted by their
    # question counts); Spatial/Temporal cannot be re-derived (per-dimension values of
    # Table 3 are not in this version of the paper, Fig. 5 lacks ranks 1-5).
    "seed1_table3": [
        Derived("overall_acc", {"spatial_acc": _QC["seed1_spatial"],
                                "temporal_acc": _QC["seed1_temporal"]}, 2, 2,
                "question-weighted"),
    ],
    # SEED-Bench-2: levels are the plain mean over dimensions (22 in part-1, 2 in part-2,
    # 3 in part-3); question-weighting does NOT reproduce the printed L2 (see the note).
    "seed2_table2": [
        Derived("l2_acc", {"l1_acc": 22, "part2_acc": 2}, 1, 1, "mean of dimensions"),
        Derived("l3_acc", {"l1_acc": 22, "part2_acc": 2, "part3_acc": 3}, 1, 1,
                "mean of dimensions"),
    ],
    "mmmu_table2": [
        Derived("test_overall", _QC["mmmu_test_disciplines"], 1, 1, "question-weighted"),
    ],
    "mmmu_table3_difficulty": [
        Derived("overall", _QC["mmmu_difficulty"], 1, 1, "question-weighted"),
    ],
    "cmmmu_table4": [
        Derived("test_overall", _QC["cmmmu_test_disciplines"], 1, 1, "question-weighted"),
    ],
    "cmmmu_table5_question_type": [
        Derived("overall", _QC["cmmmu_question_type"], 1, 1, "question-weighted"),
    ],
    "cmmmu_table6_difficulty": [
        Derived("overall", _QC["cmmmu_difficulty"], 1, 1, "question-weighted"),
    ],
    # the leaderboard's test overall pools the six disciplines' questions, as Table 2 of the paper does
    "mmmu_test_leaderboard": [
        Derived("test_overall", _QC["mmmu_test_disciplines"], 1, 1, "question-weighted"),
    ],
    # SEED-Bench-2-Plus Table 2: Average is the plain mean of the three categories (see its note)
    "seed2plus_table2": [
        Derived("average", {"charts": 1, "maps": 1, "webs": 1}, 1, 1, "mean of dimensions"),
    ],
    # MMStar paper: every Avg. is the plain mean of its six columns (capabilities of 250 questions each in Tables
    # 3 and 5, so also question-weighted there; six benchmarks in Tables 1, 2 and 7)
    **{t: [Derived("avg", dict.fromkeys(("cp", "fp", "ir", "lr", "st", "ma"), 1), 1, 1, "mean of dimensions")]
       for t in ("mmstar_table3", "mmstar_table5")},
    **{t: [Derived("avg", dict.fromkeys(("mmmu_val", "mmb_en_dev", "scienceqa", "ai2d", "seed_image", "mathvista"), 1), 1, 1,
                   "mean of dimensions")] for t in ("mmstar_table1", "mmstar_table2", "mmstar_table7")},
}
for _name, _w in _QC["mmmu_test_subjects"].items():
    DERIVED[_name] = [Derived("test_overall", _w, 1, 1, "question-weighted")]

# rank column -> value column it ranks (descending, competition ranking on printed values)
RANKS: dict[str, dict[str, str]] = {
    "seed1_table3": {"spatial_rank": "spatial_acc", "temporal_rank": "temporal_acc",
                     "overall_rank": "overall_acc"},
    "seed2_table2": {"l1_rank": "l1_acc", "part2_rank": "part2_acc", "l2_rank": "l2_acc",
                     "part3_rank": "part3_acc", "l3_rank": "l3_acc"},
}


def derived_interval(values: Sequence[float], weights: Sequence[float],
                     in_decimals: int) -> tuple[float, float, float]:
    """(low, point, high) of a weighted mean whose inputs were printed rounded to
    ``in_decimals``: each true input lies within half a unit of its printed value."""
    half = 0.5 * 10 ** (-in_decimals)
    tw = float(sum(weights))
    point = sum(v * w for v, w in zip(values, weights)) / tw
    return point - half, point, point + half


def check_derived(name: str, df: pd.DataFrame | None = None, key: str = "model") -> pd.DataFrame:
    """Recompute every derived column of ``name`` from the transcribed inputs.

    One row per (row, derived column) where the inputs and the printed value are present:
    ``key, target, kind, printed, recomputed, low, high, ok``. ``ok`` is True iff the
    printed value, widened by its own half-unit of rounding, overlaps the interval the
    rounded inputs allow (an exact rounding-consistency test, no ad-hoc tolerance).
    """
    if df is None:
        df = load(name)
    rows = []
    for spec in DERIVED.get(name, []):
        cols = list(spec.weights)
        ws = [spec.weights[c] for c in cols]
        out_half = 0.5 * 10 ** (-spec.out_decimals)
        eps = 1e-9
        for _, r in df.iterrows():
            if pd.isna(r[spec.target]) or any(pd.isna(r[c]) for c in cols):
                continue
            lo, point, hi = derived_interval([float(r[c]) for c in cols], ws, spec.in_decimals)
            printed = float(r[spec.target])
            ok = (printed + out_half + eps >= lo) and (printed - out_half - eps <= hi)
            rows.append({key: r[key], "target": spec.target, "kind": spec.kind,
                         "printed": printed, "recomputed": round(point, 4),
                         "low": lo, "high": hi, "ok": bool(ok)})
    return pd.DataFrame(rows, columns=[key, "target", "kind", "printed", "recomputed",
                                       "low", "high", "ok"])


# --------------------------------------------------------------------------- plausibility
def is_count_fraction(acc: float, n: int, decimals: int = 2) -> bool:
    """True iff ``acc`` (a percentage printed with ``decimals`` decimals) equals
    ``100*k/n`` rounded, for some integer ``k`` in 0..n: a printed accuracy over ``n``
    questions must be of this form."""
    k0 = round(acc * n / 100.0)
    for k in (k0 - 1, k0, k0 + 1):
        if 0 <= k <= n and abs(round(100.0 * k / n, decimals) - acc) < 10 ** (-decimals) / 2:
            return True
    return False


def rounding_feasible(percents: Sequence[float], n: int) -> bool:
    """Whether integer counts summing to ``n`` exist whose percentages round (half-up or
    half-even, to integers) to the printed ``percents``."""
    ranges = []
    for p in percents:
        lo = math.ceil((p - 0.5) * n / 100.0 - 1e-9)
        hi = math.floor((p + 0.5) * n / 100.0 + 1e-9)
        ranges.append((max(lo, 0), min(hi, n)))
    return sum(a for a, _ in ranges) <= n <= sum(b for _, b in ranges)
