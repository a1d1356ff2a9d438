"""The MMMU / CMMMU generation loop: real SmolLM2 on demo items, resume, official-order parsing,
the four baselines (random, frequent, text-only LLM, LLM + tesseract OCR) and the test-split submission."""
import json
import shutil

import pytest

from mmbench_lib.core.rows import base_row
from mmbench_lib.pipeline import generation as g
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.tasks import cmmmu, mmmu
from mmbench_lib.core.requests import Generation
from mmbench_lib.core.store import RunStore


@pytest.fixture(scope="module")
def mmmu_val(demo):
    return mmmu.load(demo["mmmu"]["source"], split="validation")


@pytest.fixture(scope="module")
def cmmmu_val(demo):
    return cmmmu.load(demo["cmmmu"]["root"], split="val")


class Counting:
    """Wraps an adapter and records every request it is asked to generate for."""

    def __init__(self, inner):
        self.inner, self.requests = inner, []
        self.name, self.sees_images = inner.name, inner.sees_images

    def generate(self, requests):
        self.requests.extend(requests)
        return self.inner.generate(requests)

    def describe(self):
        return self.inner.describe()


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_smollm2_generation_stores_responses_flags_truncation_and_resumes(mmmu_val, smollm2, tmp_path):
    items = [it for it in mmmu_val if it.dimension == "Math"] + [mmmu_val[2]]  # MC and open (Art_3)
    ad = Counting(smollm2)
    store = RunStore(tmp_path / "run")
    g.generate_items(items[:2], ad, store, max_new_tokens=3, progress=False)  # an interrupted run
    assert len(ad.requests) == 2
    g.generate_items(items, ad, RunStore(tmp_path / "run"), max_new_tokens=3, progress=False)  # resumed
    assert [r.id for r in ad.requests] == [it.id for it in items]  # nothing generated twice
    rows = _rows(tmp_path / "run" / "predictions.jsonl")
    assert [r["id"] for r in rows] == [it.id for it in items]
    assert all(r["status"] == "ok" and isinstance(r["response"], str) for r in rows)
    # the official prompt went to the model; the chat template wraps it
    req = ad.requests[0]
    assert req.prompt == mmmu.parser.prompt(items[0].question, items[0].choices, items[0].question_type)
    assert req.images == [] and req.max_new_tokens == 3
    # responses cut at max_new_tokens are flagged, not silently scored
    assert all(r["truncated"] == (r["num_tokens"] >= 3 and r["truncated"]) for r in rows)
    assert any(r["truncated"] for r in rows)
    scored, metrics = g.score_run(items, RunStore(tmp_path / "run"))
    assert metrics["counts"]["truncated"] == sum(r["truncated"] for r in rows)
    assert [r["truncated"] for r in scored] == [r["truncated"] for r in rows]
    assert {"parsed_pred", "fallback", "mode", "correct"} <= set(scored[0])
    assert metrics["overall"]["n"] == 4 and set(metrics["per_difficulty"]) <= {"Easy", "Medium", "Hard"}


def test_parsing_uses_one_seeded_rng_in_official_order_whatever_the_store_order(mmmu_val, tmp_path):
    """A resumed run stores rows in another order; parsing must not depend on it (docs/protocols.md §3.7)."""
    junk = ["I am not sure", "", "maybe", "no idea at all", "(B)", "hmm"]  # mostly random fallbacks
    rows = [{**base_row(it), "status": "ok", "response": junk[i % len(junk)], "truncated": False}
            for i, it in enumerate(mmmu_val)]
    a, b = RunStore(tmp_path / "a"), RunStore(tmp_path / "b")
    a.append(rows)
    b.append(rows[10:][::-1])  # "resumed": stored later, in reverse
    b.append(rows[:10])
    ra, ma = g.score_run(mmmu_val, a)
    rb, mb = g.score_run(mmmu_val, b)
    assert [(r["id"], r["parsed_pred"], r["fallback"], r["mode"]) for r in ra] == \
           [(r["id"], r["parsed_pred"], r["fallback"], r["mode"]) for r in rb]
    assert ma["overall"] == mb["overall"] and ma["counts"]["fallbacks"] >= 10
    # the same parse as the official rescoring of the files the run wrote (same code path)
    from mmbench_lib.pipeline.rescoring import score_mmmu_outputs

    with pytest.warns(UserWarning, match="subjects have no output.json"):  # the demo has 8 of 30
        official, _ = score_mmmu_outputs(tmp_path / "a" / "official")
    assert {r["id"]: r["parsed_pred"] for r in official} == {r["id"]: r["parsed_pred"] for r in ra}


def test_random_baseline_is_seeded_per_item(demo, mmmu_val, tmp_path):
    r1 = [g.RandomAnswer(0).answer(it) for it in mmmu_val]
    assert r1 == [g.RandomAnswer(0).answer(it) for it in reversed(mmmu_val)][::-1]
    assert all(a in it.letters for a, it in zip(r1, mmmu_val) if it.question_type == "multiple-choice")
    assert all(a == "" for a, it in zip(r1, mmmu_val) if it.question_type != "multiple-choice")
    m = g.evaluate_generation(RunConfig("mmmu", tmp_path / "r", source=demo["mmmu"]["source"],
                                        baseline="random", progress=False))
    assert m["counts"]["items"] == 24 and m["counts"]["fallbacks"] == 0 and m["baseline"] == "random"


def test_frequent_choice_by_hand(demo, mmmu_val, cmmmu_val, tmp_path):
    table = g.frequent_table(mmmu_val)
    # by hand from the demo's validation answers (ties go to the answer seen first); the demo gives each
    # subject's multiple-choice questions different gold letters, so Frequent Choice is right on one of them:
    # Art MC C,B -> C (tie); Physics D,A,B -> D; History A,B,C -> A; Computer_Science C,D,A -> C;
    # Math open "9"; Electronics open is the list gold ['3/4', '0.75']; split-wide MC: A 6, B 5, C 5, D 4 -> A
    assert table["Art"] == {"multiple-choice": "C", "short-answer": "Robot"}
    assert table["Physics"]["multiple-choice"] == "D" and table["History"]["multiple-choice"] == "A"
    assert table["Computer_Science"]["multiple-choice"] == "C" and table["Math"]["short-answer"] == "9"
    assert table["*"]["multiple-choice"] == "A"
    assert g.FrequentAnswer(table).answer(next(it for it in mmmu_val if it.id == "validation_Electronics_3")) == "3/4"
    m = g.evaluate_generation(RunConfig("mmmu", tmp_path / "f", source=demo["mmmu"]["source"],
                                        baseline="frequent", progress=False))
    # right: the first MC question of each subject and the four open ones: Art 1,3; Accounting 1,2; Math 1,2;
    # Physics 1; Pharmacy 1; History 1; CS 1; Electronics 1,3 (the MMMU paper's Frequent Choice: 26.8% on
    # validation; three questions per subject cannot go below one right per subject and kind)
    assert (m["overall"]["correct"], m["overall"]["n"]) == (12, 24)
    ctable = g.frequent_table(cmmmu_val)
    # the fill-in words are drawn in Chinese with the pinned CJK font, as Latin transliterations without it;
    # each subcategory's questions of one type come in groups with different golds (Accounting: B, AC, D)
    huang_he = "黄河" if demo["cmmmu"]["cjk_font"] else "HUANG HE"
    assert ctable["Accounting"]["选择"] == "B" and ctable["*"]["判断"] == "对" and ctable["*"]["填空"] == huang_he
    cm = g.evaluate_generation(RunConfig("cmmmu", tmp_path / "cf", source=demo["cmmmu"]["root"],
                                         baseline="frequent", split="val", progress=False))
    assert cm["overall"]["correct"] == 9  # one per group of two or three: 9 of 20, not all of them
    assert cm["overall"]["n"] == 20 and cm["per_question_type"]["true-false"]["n"] == 6


def test_vlm_gets_all_images_in_placeholder_order_and_missing_images_fail(mmmu_val, tmp_path):
    class Recorder:
        name, sees_images = "rec", True

        def __init__(self):
            self.requests = []

        def generate(self, requests):
            self.requests += requests
            return [Generation("(A)", 2, False) for _ in requests]

        def describe(self):
            return {"adapter": "Recorder"}

    two = next(it for it in mmmu_val if it.id == "validation_Computer_Science_3")  # <image 2> before <image 1>
    assert two.meta["image_tags"] == ["<image 2>", "<image 1>"]
    broken = mmmu.Item(**{**two.to_dict(), "id": "validation_Computer_Science_9", "images": [str(tmp_path / "gone.png")]})
    rec = Recorder()
    store = RunStore(tmp_path / "v")
    g.generate_items([two, broken], rec, store, progress=False)
    assert len(rec.requests) == 1 and len(rec.requests[0].images) == 2
    rows = {r["id"]: r for r in store.rows()}
    assert rows[broken.id]["status"] == "failed" and "gone.png" in rows[broken.id]["error"]
    _scored, metrics = g.score_run([two, broken], store)
    assert metrics["counts"]["failed"] == 1 and metrics["overall"]["n"] == 1


def _ocr_or_skip(lang):
    from mmbench_lib.pipeline.ocr import OCR, OCRUnavailable

    try:
        return OCR(lang)
    except OCRUnavailable as e:
        pytest.skip(str(e))


def test_ocr_reads_the_demo_images_and_fills_the_prompt(demo, mmmu_val, cmmmu_val, tmp_path):
    ocr = _ocr_or_skip("eng")
    ocr.cache = tmp_path / "ocr"
    item = next(it for it in mmmu_val if it.id == "validation_Math_1")  # image reads "x = <v>"
    value = item.choices[item.answer_index]  # the correct option is the value drawn in the image
    prompt, texts = g.build_prompt(item, ocr)
    assert value in texts[1] and "x" in texts[1]
    assert prompt.startswith(f"[Image 1 OCR text: {texts[1]}] What is the value of x?") and "<image 1>" not in prompt
    calls = ocr.calls
    g.build_prompt(item, ocr)
    assert ocr.calls == calls  # cached per image
    opt = next(it for it in mmmu_val if it.id == "validation_Art_2")  # images as options
    p2, t2 = g.build_prompt(opt, ocr)
    assert set(t2) == {1, 2, 3} and "(A) [Image 2 OCR text: " in p2
    if not demo["cmmmu"]["cjk_font"]:
        pytest.skip("the CMMMU demo drew Latin text: pip install cvttf-NotoSansCJK-Regular for its Chinese images")
    zh = _ocr_or_skip("chi_sim")
    zh.cache = tmp_path / "ocr"
    citem = next(it for it in cmmmu_val if it.id == "10008")  # fill-in: the image shows 长城
    cp, ct = g.build_prompt(citem, zh)
    assert "长城" in ct[1] and "[Image 1 OCR text: " in cp and "<图片 1>" not in cp


def test_ocr_without_tesseract_says_how_to_install(monkeypatch):
    pytesseract = pytest.importorskip("pytesseract")
    from mmbench_lib.pipeline.ocr import OCR, OCRUnavailable

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    with pytest.raises(OCRUnavailable, match="apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim"):
        OCR("eng")


@pytest.mark.slow
def test_ocr_baseline_runs_the_llm_on_ocr_text(demo, smollm2, tmp_path):
    _ocr_or_skip("eng")
    m = g.evaluate_generation(RunConfig("mmmu", tmp_path / "o", source=demo["mmmu"]["source"],
                                        baseline="ocr", subjects=["Math"], max_new_tokens=4, progress=False), smollm2)
    rows = _rows(tmp_path / "o" / "predictions.jsonl")
    assert m["counts"]["ok"] == 3 and all("ocr" in r for r in rows)
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["ocr"]["engine"] == "tesseract" and manifest["generation"]["baseline"] == "ocr"
    assert any("P-M4" in d for d in manifest["deviations"])
    with pytest.raises(ValueError, match="other settings"):  # resuming with other settings is refused
        g.evaluate_generation(RunConfig("mmmu", tmp_path / "o", source=demo["mmmu"]["source"],
                                        baseline="none", subjects=["Math"], max_new_tokens=4, progress=False), smollm2)


@pytest.mark.slow
def test_test_split_writes_the_submission_file(demo, smollm2, tmp_path):
    m = g.evaluate_generation(RunConfig("mmmu", tmp_path / "t", source=demo["mmmu"]["source"],
                                        split="test", subjects=["Math", "Art"], max_new_tokens=4, progress=False), smollm2)
    assert m["scored"] is False and "overall" not in m
    sub = json.loads((tmp_path / "t" / "submission.json").read_text())
    assert set(sub) == {"test_Math_1", "test_Art_1"} and all(v in "ABCD" and len(v) == 1 for v in sub.values())
    scored = _rows(tmp_path / "t" / "scored.jsonl")
    assert all(r["correct"] is None and r["parsed_pred"] == sub[r["id"]] for r in scored)
    # CMMMU test: response-mode rows
    cm = g.evaluate_generation(RunConfig("cmmmu", tmp_path / "ct", source=demo["cmmmu"]["root"],
                                         split="test", baseline="random", progress=False))
    lines = _rows(tmp_path / "ct" / "submission.jsonl")
    assert cm["scored"] is False and len(lines) == 6 and set(lines[0]) == {"id", "type", "response"}
    shutil.rmtree(tmp_path / "t")
