"""SEED-Bench (v1), SEED-Bench-2 and SEED-Bench-2-Plus items from other harnesses' files and this suite's runs,
and the rule sets a reproduction audit re-scores them with: one :class:`SeedAudit` per benchmark.

The papers rank the choices by likelihood; no rule here re-does that from a text. The reference rule
(``letter exact match``) is a strict reading of a written letter, NOT the papers' protocol; a ranking run
of this suite adds its ranked result (``paper ranking (this suite)``). The peers' rules are lmms-eval's
first character and VLMEvalKit's exact matching (``can_infer``).

More: docs/modules.md, docs/audit.md (SEED section).
"""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Callable, Sequence

from mmbench_lib.core.items import DataError, read_utf8
from mmbench_lib.core.jsonl import parse_line, read_rows
from mmbench_lib.tasks import peer_rules
from mmbench_lib.tasks import seed1, seed2, seed2plus
from mmbench_lib.tasks.base import get_task
from mmbench_lib.tasks.letters import lmms_eval_letter
from mmbench_lib.tasks.letters import vlmevalkit_can_infer
from mmbench_lib.tasks.seed_results import dimension_of_id, read_questions, read_results
from mmbench_lib.tasks.thinking import strip_trace

LETTERS = ("A", "B", "C", "D")
REFERENCE = "letter exact match"
RANKING = "paper ranking (this suite)"
#: the reference rule: after trimming, one option letter, alone, in () or [], optionally with a period
_STRICT = re.compile(r"\s*(?:([A-Z])|\(([A-Z])\)|\[([A-Z])\])\.?\s*")


def strict_letter(response, letters: Sequence[str] = LETTERS) -> str | None:
    """The letter of a response that is nothing but an option letter ("B", "(B)", "[B].", " B. "), else None.

    >>> strict_letter(" (C) "), strict_letter("The answer is B"), strict_letter("b")
    ('C', None, None)
    """
    m = _STRICT.fullmatch(response or "")
    letter = m and next(g for g in m.groups() if g)
    return letter if letter and letter in letters else None


_first_text = peer_rules.first_text  # one copy: tasks/peer_rules.py


_present = peer_rules.present


def _id(v) -> str:
    """An id as text: an integer read back as a float (a pandas column with gaps) loses its ``.0``."""
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _item(item_id, index2ans: dict, answer, response, category="", **extra) -> dict:
    return {"id": _id(item_id), "question_type": "multiple-choice", "index2ans": dict(index2ans),
            "letters": list(index2ans) or list(LETTERS), "answer": str(answer).strip(),
            "response": response if isinstance(response, str) else ("" if response is None else str(response)),
            "category": category, **extra}


# ------------------------------------------------------------------------------------------------- rules

def _reference(items, text=lambda r: r) -> list[bool]:
    return [strict_letter(text(it["response"]), it["letters"]) == it["answer"] for it in items]


def _vlmevalkit(items) -> list[bool]:
    """VLMEvalKit ``can_infer`` over the option columns (exact matching, no judge; ``mmmu_audit``)."""
    return [vlmevalkit_can_infer(it["response"], it["index2ans"] or {L: "" for L in it["letters"]}) == it["answer"]
            for it in items]


def _ranking(items) -> list[bool | None]:
    """The ranked letter of this suite's ranking run; None (no column) for items that were not ranked."""
    return [None if "ranked" not in it else it["ranked"] == it["answer"] for it in items]


class SeedAudit:
    """One SEED benchmark's audit module (the interface ``pipeline/audit.py`` and ``demo/audit.py`` call)."""

    OFFICIAL_FILES = ("a run folder of this suite (predictions.jsonl, manifest.json), SEED's results.json (lines of "
                      "{question_id, prediction[, gt_answer]}), its questions JSON (as --gold)")
    DEMO_FILTERS: dict = {}
    DEMO_RUN: dict = {}

    def __init__(self, benchmark: str, lmms_task: str, metric_all: str, vlmevalkit_dataset: str,
                 choice_keys: Sequence[str], category_field: str, lmms_case_insensitive: bool, categories: dict):
        self.BENCHMARK, self.LMMS_TASK, self.METRIC_ALL = benchmark, lmms_task, metric_all
        self.VLMEVALKIT_DATASET, self.CHOICE_KEYS, self.CATEGORY_FIELD = vlmevalkit_dataset, tuple(choice_keys), category_field
        self.lmms_case_insensitive = lmms_case_insensitive
        self.LMMS_TASKS, self.VLMEVALKIT_DATASETS = (lmms_task,), (vlmevalkit_dataset,)  # file names (audit_inputs)
        self.categories = categories  # dimension id -> the category the peers' files carry
        self.DEMO_FILES = {"lmms-eval": f"samples_{lmms_task}_demo.jsonl", "vlmevalkit": f"demo_{vlmevalkit_dataset}.tsv"}
        self.VLMEVALKIT_COLUMNS = ("A", "B", "C", "D", "prediction", "answer", "index")
        self.RULES: dict[str, tuple[Callable, str]] = {
            REFERENCE: (_reference, "the response is one option letter (strict; NOT the papers' answer ranking)"),
            f"{REFERENCE}, trace removed": (lambda items: _reference(items, strip_trace),
                                            "letter exact match after removing a thinking trace (NOT official)"),
            "lmms-eval": (self.lmms_eval_rule, f"lmms-eval {lmms_task} seed_process_result (first character)"),
            "vlmevalkit": (_vlmevalkit, "VLMEvalKit exact matching (can_infer, no judge, no circular)"),
            RANKING: (_ranking, "this suite's ranking run: the ranked letter (the papers' protocol)"),
        }

    def __repr__(self) -> str:
        return f"SeedAudit({self.BENCHMARK!r})"

    # -------------------------------------------------------------------------------------- lmms-eval
    def lmms_eval_pred(self, response: str) -> str:
        """``pred`` of ``seed_process_result``: the stripped response's first character ("" when empty)."""
        return lmms_eval_letter(response).letter or ""

    def _lmms_eval_hit(self, pred, answer) -> bool:
        """``seed_aggregation_result``: equality (SEED-Bench-2-Plus: after ``lower().strip()``)."""
        pred, answer = str(pred), str(answer)
        return pred.lower().strip() == answer.lower().strip() if self.lmms_case_insensitive else pred == answer

    def lmms_eval_rule(self, items) -> list[bool]:
        return [self._lmms_eval_hit(self.lmms_eval_pred(it["response"]), it["answer"]) for it in items]

    def from_lmms_eval(self, row: dict) -> dict:
        """One sample-log row: ``doc`` (``question_id``, choices, ``answer``), the raw ``resps`` (before a reasoning
        tag strip), ``own_correct`` from the stored ``<all>`` metric's ``pred`` by their aggregation."""
        doc = row["doc"]
        if not isinstance(doc, dict) or "question_id" not in doc:
            raise ValueError(f"its doc has no question_id: not a sample log of lmms-eval's {self.LMMS_TASK}")
        index2ans = {L: str(doc[k]) for L, k in zip(LETTERS, self.CHOICE_KEYS)}
        raw = _first_text(row.get("resps"))
        it = _item(doc["question_id"], index2ans, doc["answer"], raw if raw is not None else _first_text(row.get("filtered_resps")),
                   str(doc.get(self.CATEGORY_FIELD) or ""), doc_id=row.get("doc_id"), question=doc.get("question", ""))
        metric = row.get(self.METRIC_ALL)
        if isinstance(metric, dict) and "pred" in metric:
            it["own_correct"] = self._lmms_eval_hit(metric["pred"], metric.get("answer", it["answer"]))
        return it

    # ------------------------------------------------------------------------------------- VLMEvalKit
    def from_vlmevalkit(self, row: dict) -> dict:
        """One prediction row: the item id is ``question_id`` when the file has one, else VLMEvalKit's ``index``."""
        index2ans = {L: str(row[L]) for L in LETTERS if _present(row.get(L))}
        qid = row["question_id"] if _present(row.get("question_id")) else row["index"]
        prediction = row.get("prediction") if _present(row.get("prediction")) else ""
        return _item(qid, index2ans, row.get("answer"), prediction, str(row.get("category") or ""),
                     index=row.get("index"), question=str(row.get("question") or ""))

    def from_task_item(self, item) -> dict:
        """A question of the task's own data copy (``Task.load_items``) as a gold item."""
        return _item(item.id, dict(zip(item.letters, item.choices)), item.answer, "",
                     self.categories.get(item.dimension_id, ""), dimension_id=item.dimension_id,
                     question=item.question, split=item.split)

    @staticmethod
    def with_gold(row: dict, gold: dict) -> dict:
        """A plain ``{id, response}`` row with the question fields of its gold item (its verdicts dropped)."""
        base = {k: v for k, v in gold.items() if k not in ("own_correct", "ranked")}
        return {**base, "response": row["response"] if isinstance(row.get("response"), str) else "",
                **{k: v for k, v in row.items() if k not in ("id", "response")}}

    # -------------------------------------------------------------------------- this suite's own runs
    def official_format(self, path) -> bool:
        """SEED's ``results.json`` / a leaderboard result file, SEED's questions JSON, or a run folder of this suite
        for this benchmark (a run of another benchmark is a DataError naming it)."""
        path = Path(path)
        if path.is_file() and path.suffix in (".json", ".jsonl"):
            return self._official_file_kind(path) is not None
        if not (path.is_dir() and (path / "predictions.jsonl").is_file()):
            return False
        held = self._manifest(path).get("benchmark")
        if held and get_task(held).name != self.BENCHMARK:
            raise DataError(str(path), f"holds a run of {held}, not {self.BENCHMARK}")
        return True

    @staticmethod
    def _official_file_kind(path: Path) -> str | None:
        """"results" (the first object has ``question_id`` and ``prediction``, no VLMEvalKit ``index`` nor lmms-eval
        ``doc``), "questions" (an object with a list ``questions``), else None."""
        text = read_utf8(path).lstrip().lstrip("[").lstrip()
        row, _problem = parse_line(text.split("\n", 1)[0], comma_terminated=True)  # core.jsonl's parse of one line
        if isinstance(row, dict) and {"question_id", "prediction"} <= set(row) and not {"index", "doc"} & set(row):
            return "results"
        if text.startswith("{") and '"questions"' in text[:1 << 16] + text[-(1 << 16):]:
            try:
                data = json.loads(text)
            except ValueError:
                return None
            return "questions" if isinstance(data, dict) and isinstance(data.get("questions"), list) else None
        return None

    @staticmethod
    def _manifest(path: Path) -> dict:
        try:
            return json.loads(read_utf8(path / "manifest.json"))
        except (OSError, ValueError):
            return {}

    def read_official(self, path, gold: Sequence[dict] | None = None) -> list[dict]:
        """SEED's ``results.json`` (:meth:`read_results_file`), its questions JSON (the questions with empty
        responses: a ``--gold``), or a run folder's ``predictions.jsonl``: a ranking row's letter is its response
        and ``ranked``; a generated-letter row keeps its raw ``response`` and its stored verdict (``own_correct``).
        Rows ``n/a`` are left out. Choices come from the run's questions (the manifest's data) when they load."""
        path = Path(path)
        if path.is_file():
            if self._official_file_kind(path) == "questions":
                return self.read_questions_file(path)
            items, report = self.read_results_file(path, gold)
            counted = {k: v for k, v in {**report["normalisations"], "left_out": report["left_out"]}.items() if v}
            if counted:
                warnings.warn(f"{path}: read as SEED-Bench's eval.py files are read, counted: "
                              + ", ".join(f"{k} {v}" for k, v in counted.items()), stacklevel=2)
            return items
        questions = self._questions(path)
        items = []
        for n, row in read_rows(path / "predictions.jsonl"):  # core.jsonl: bounded, one line per bad line
            try:
                if row.get("status") == "n/a":
                    continue
                q = questions.get(str(row["id"]))
                index2ans = dict(zip(q.letters, q.choices)) if q is not None else {}
                extra = {"question": q.question if q is not None else "", "dimension_id": row.get("dimension_id"),
                         "status": row.get("status")}
                category = self.categories.get(row.get("dimension_id"), "")
                if "response" in row:  # generated letters (pipeline/letters.py)
                    it = _item(row["id"], index2ans, row["answer"], row.get("response"), category, **extra,
                               own_correct=bool(row.get("correct")), extractor=row.get("extractor"),
                               truncated=bool(row.get("truncated")))
                else:  # answer ranking: the ranked letter
                    it = _item(row["id"], index2ans, row["answer"], row.get("prediction") or "", category, **extra,
                               ranked=row.get("prediction"))
            except (ValueError, KeyError) as e:
                raise DataError(str(path / "predictions.jsonl"), f"line {n}: cannot read the row ({e})") from None
            items.append(it)
        if not items:
            raise DataError(str(path / "predictions.jsonl"), "no rows")
        return items

    def read_questions_file(self, path) -> list[dict]:
        """SEED's questions JSON (``SEED-Bench.json``, ``SEED-Bench_v2_level1_2_3.json``) as gold items: the
        ``answer``, ``choice_a``..``choice_d``, ``question_type_id`` (``dimension_id``), empty responses."""
        return [_item(q["question_id"], {L: str(q[k]) for L, k in zip(LETTERS, ("choice_a", "choice_b", "choice_c",
                                                                                   "choice_d")) if k in q},
                      q["answer"], "", self.categories.get(q["question_type_id"], ""), dimension_id=q["question_type_id"],
                      question=str(q.get("question") or "")) for q in read_questions(path)]

    def read_results_file(self, path, gold: Sequence[dict] | None = None) -> tuple[list[dict], dict]:
        """SEED's ``results.json`` (``eval.py``: ``question_id``, ``prediction``) or a published leaderboard file
        (+ ``gt_answer``), read by ``tasks/seed_results.read_results`` (its tolerances, counts and refusals).

        The response is the prediction as written; the answer the file's ``gt_answer`` AS WRITTEN (the leaderboard
        compared it so: ``"A "`` equals no letter), else the gold item's. The items kept are those
        ``score-predictions`` scores: with ``gold``, the ids among it; without, ids with a ``gt_answer`` (SEED-2:
        and a ``<dim>_<k>`` id); a dimension outside the benchmark leaves the item out. Left-out ids are counted."""
        preds, report = read_results(path)
        task = get_task(self.BENCHMARK)
        by_id = {g["id"]: g for g in gold} if gold is not None else None
        items, left_out = [], []
        for qid, rec in preds.items():
            g = by_id.get(qid) if by_id is not None else None
            dim = g.get("dimension_id") if g is not None else None
            dim = dim if dim is not None else dimension_of_id(qid)
            if (by_id is not None and g is None) or (g is None and "gt_answer" not in rec) \
                    or (g is None and dim is None and not task.results_need_questions) \
                    or (dim is not None and dim not in task.dimensions):
                left_out.append(qid)
                continue
            index2ans = dict(g["index2ans"]) if g is not None else {}
            it = _item(qid, index2ans, "", rec["prediction"], self.categories.get(dim, ""), dimension_id=dim,
                       question=g.get("question", "") if g is not None else "")
            it["answer"] = rec["gt_answer"] if "gt_answer" in rec else g["answer"]  # as written, not stripped
            items.append(it)
        if not items:
            why = ("its lines carry no 'gt_answer': pass --gold (the benchmark's questions JSON)" if by_id is None
                   and any("gt_answer" not in r for r in preds.values()) else
                   f"none of its {len(left_out)} ids is a question of {task.title}" + ("" if by_id is None else " in --gold"))
            raise DataError(str(path), f"no prediction could be scored: {why}")
        return items, {**report, "left_out": len(left_out), "left_out_examples": left_out[:20]}

    def _questions(self, path: Path) -> dict:
        data = self._manifest(path).get("data")
        if not isinstance(data, dict):
            return {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return {it.id: it for it in get_task(self.BENCHMARK).load_items(**data)}
        except (DataError, OSError, ValueError, KeyError, TypeError) as e:
            warnings.warn(f"{path}: the run's questions do not load ({e}); VLMEvalKit's text pass sees no options",
                          stacklevel=2)
            return {}

    # ------------------------------------------------------------------------- writing the peers' formats
    def lmms_eval_rows(self, items: Sequence[dict]) -> list[dict]:
        """The items as an lmms-eval sample log of the task (``evaluator.py``'s fields; the metric fields of
        ``seed_process_result``; ``doc`` without its images, as lmms-eval drops multimodal values)."""
        out = []
        for n, it in enumerate(items):
            doc = {"question_id": it["id"], "question": it.get("question", ""), "answer": it["answer"],
                   **{k: it["index2ans"].get(L, "") for L, k in zip(LETTERS, self.CHOICE_KEYS)},
                   self.CATEGORY_FIELD: it.get("category", "")}
            pred = self.lmms_eval_pred(it["response"])
            verdict = {"pred": pred, "answer": it["answer"], "question_id": it["id"]}
            out.append({"doc_id": n, "doc": doc, "target": it["answer"], "arguments": [], "resps": [[it["response"]]],
                        "filtered_resps": [it["response"]], self._metric_of(it.get("category", "")): verdict,
                        self.METRIC_ALL: dict(verdict)})
        return out

    def _metric_of(self, category: str) -> str:
        if self.BENCHMARK == seed2plus.BENCHMARK:
            return f"seedbench_2_plus_{category.capitalize()}"
        return "seed_" + "_".join(category.split(" "))

    def vlmevalkit_rows(self, items: Sequence[dict]) -> list[dict]:
        """The items as a VLMEvalKit prediction file (the dataset's columns but ``image``, and ``prediction``)."""
        return [{"index": it["id"], "question": it.get("question", ""),
                 **{L: it["index2ans"].get(L, "") for L in LETTERS}, "answer": it["answer"],
                 "category": it.get("category", ""), "prediction": it["response"]} for it in items]

    @staticmethod
    def misleading_trace(it: dict) -> str:
        """The response behind a thinking trace that names a wrong option first."""
        wrong = next((L for L in it["letters"] if L != it["answer"]), "A")
        return (f"<think>My first guess is ({wrong}) {it['index2ans'].get(wrong, '')}. Let me check that again."
                f"</think>{it['response']}")


#: the peers' category per dimension id: lmms-eval's ``data_type`` (v1, SEED-2) / ``question_image_type`` (2-Plus)
_V1_TYPES = {d: m for d, (_n, m) in seed1.DIMENSIONS.items()}
_V2_TYPES = {**{d: "Single Image" for d in range(1, 17)}, 17: "Multiple Images", 18: "Multiple Images",
             **{d: "Video" for d in (19, 20, 21, 22)}, 23: "Interleaved Image", 24: "Interleaved Image",
             25: "Image Generation", 26: "Image Generation", 27: "Image & Text Generation"}
_PLUS_TYPES = {d: v for d, (_n, v) in seed2plus.DIMENSIONS.items()}

SEED = SeedAudit(seed1.BENCHMARK, "seedbench", "seed_all", "SEEDBench_IMG", ("choice_a", "choice_b", "choice_c", "choice_d"),
                 "data_type", False, _V1_TYPES)
SEED2 = SeedAudit(seed2.BENCHMARK, "seedbench_2", "seed_all", "SEEDBench2", ("choice_a", "choice_b", "choice_c", "choice_d"),
                  "data_type", False, _V2_TYPES)
SEED2PLUS = SeedAudit(seed2plus.BENCHMARK, "seedbench_2_plus", "seedbench_2_plus_all", "SEEDBench2_Plus",
                      ("choice_A", "choice_B", "choice_C", "choice_D"), "question_image_type", True, _PLUS_TYPES)
