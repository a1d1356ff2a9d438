"""The papers' tables and figures, rebuilt from the transcribed published results
(:mod:`mmbench_lib.published`), with the user's own runs added as rows marked ``source="ours"``.

* SEED-Bench-2: Table 2 (:func:`seed2_table2`) and the Fig. 5 rank heat-map (:func:`rank_heatmap`).
* SEED-Bench v1: Table 3 (:func:`seed1_table3`), the Fig. 5 per-dimension leaderboards
  (:func:`seed1_leaderboards`) and the Fig. 6 rank heat-map (:func:`seed1_rank_frame`).
* MMMU: Table 2 (disciplines), Tables 4-9 (subjects), Table 3 (difficulty), Table 12 (image types, as a bar chart),
  Fig. 6 (GPT-4V error distribution); CMMMU: Tables 4-6 and Fig. 4.

Our rows are recomputed from the run's item rows (``predictions.jsonl`` / ``scored.jsonl``) by
:mod:`mmbench_lib.paper.ours`, each with the one 95% interval (``core.uncertainty.RULE``) (``<col>_ci_low/high``) and,
in the ranked tables and heat-maps, a rank interval (``<rank col>_low/high``). Published rows carry
no item-level data: they get no interval, and the figures say so.

A short face over ``paper.rows``, ``paper.tables`` and ``paper.render``.

More: docs/modules.md, ``mmbench_lib/paper/__init__.py``.
"""
from __future__ import annotations

from mmbench_lib.paper.rows import (  # noqa: F401
    OURS_COLOR,
    PAPER,
    OURS,
    SEED2_LEVELS,
    SEED1_GROUPS,
    MMMU_DISCIPLINES,
    DIFFICULTY_COLUMNS,
    QUESTION_TYPE_COLUMNS,
    seed2_columns,
    seed1_columns,
    resolve_run,
    load_run,
    label_of,
    run_key,
    _identity,
    expand,
    _as_runs,
    _benchmark,
    owner,
    paper_tasks,
    not_comparable,
    judge_of,
    _ours_rows,
    _with_ours,
    _intervals,
    _rerank,
)
from mmbench_lib.paper.tables import (  # noqa: F401
    seed2_table2,
    seed1_table3,
    seed1_leaderboard_table,
    seed1_leaderboards,
    seed1_rank_frame,
    rank_heatmap,
    rank_interval_text,
    seed2_heatmap,
    seed1_heatmap,
    _discipline_table,
    _with_split_overall,
    mmmu_table2,
    MMMU_SUBJECT_TABLES,
    _subject_column,
    mmmu_subject_table,
    mmmu_test_leaderboard,
    seed2plus_table2,
    cmmmu_table4,
    setting_table,
    mmmu_pro_leaderboard,
    _published_with_ours,
    _split,
    mmmu_table3_difficulty,
    cmmmu_table5_question_type,
    cmmmu_table6_difficulty,
    mmmu_image_type_table,
    mmmu_image_types,
    error_distribution,
    paired_tests,
    paired_differences,
)
from mmbench_lib.paper.render import (  # noqa: F401
    save_table,
    _with_interval,
    save_figure,
    FIGURES,
    PAIRED_FIGURES,
    render_seed,
    _paired,
    render_mmmu,
    render,
    PAPER_TABLES,
    shown_benchmarks,
    placement,
    gallery,
    main,
)
