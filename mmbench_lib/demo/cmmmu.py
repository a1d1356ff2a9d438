"""CMMMU demo in the official repository layout (JSONL + images per category) and the HF parquet layout
(docs/protocols.md §4.1); Chinese text is drawn with a PyPI-pinned CJK font, else its Latin transliteration."""
from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

from PIL import Image, ImageFont

from mmbench_lib.demo.draw import (SEED, labelled_bars, load_font, move_gold, pick_options, save_image, text_image,
                                   write_hf_parquet)
from mmbench_lib.tasks.cmmmu_parser import CATEGORY_FOLDER

#: the CJK font the CMMMU demo draws with: Noto Sans CJK (OFL) from the PyPI wheel
#: ``cvttf-NotoSansCJK-Regular`` (a dependency), never a system font, so the demo's bytes do not
#: depend on the machine's fonts
CJK_FONT_PACKAGE, CJK_FONT_FILE = "cvttf_NotoSansCJK_Regular", "NotoSansCJKtc-Regular.otf"


def cjk_font_path() -> str | None:
    """The pinned CJK font shipped by ``cvttf-NotoSansCJK-Regular``, or None when that package is not
    installed (the demo then draws Latin transliterations and the Chinese-text tests skip)."""
    spec = importlib.util.find_spec(CJK_FONT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / CJK_FONT_FILE
    return str(path) if path.is_file() else None


CMMMU_PLAN = {  # category folder -> [(subcategory, kind), ...] for val; dev/test add one each
    # Questions of one subcategory and type come in groups of two or three with different golds, so the
    # Frequent Choice baseline (most frequent gold per subcategory and type) is right on one per group
    # (CMMMU §4.1, after MMMU): 9 of 20, not every one.
    "art_and_design": [("设计", "fill_word"), ("设计", "fill_word"), ("艺术", "tf_word"), ("艺术", "tf_word")],
    "business": [("会计", "mc_value"), ("会计", "mc_multi"), ("会计", "mc_value")],
    "science": [("数学", "mc_value"), ("数学", "mc_option_images"), ("数学", "mc_value"), ("物理", "fill_sum"),
                ("物理", "fill_sum")],
    "health_and_medicine": [("临床医学", "tf_chart"), ("临床医学", "tf_chart"), ("制药", "fill_word"),
                            ("制药", "fill_word")],
    "humanities_and_social_sciences": [("心理学", "tf_word"), ("心理学", "tf_word")],
    "technology_and_engineering": [("计算机科学", "mc_multi"), ("计算机科学", "mc_value")],
}
CN_WORDS = (("北京", "BEIJING"), ("长城", "GREAT WALL"), ("熊猫", "PANDA"), ("黄河", "HUANG HE"), ("上海", "SHANGHAI"))
CN_LABELS = (("甲", "JIA"), ("乙", "YI"), ("丙", "BING"))
IMG_TYPES_CN = {"mc": "公式", "tf_chart": "图表", "word": "其他"}


class _CmmmuWriter:
    """Collects one split's records and image files for the official layout (and the HF copy)."""

    def __init__(self, root: Path, zh_font: str | None):
        self.root, self.zh_font = root, zh_font
        self.images: dict[str, Image.Image] = {}

    def font(self, size: int):
        return ImageFont.truetype(self.zh_font, size) if self.zh_font else load_font(size)

    def text(self, zh: str, latin: str, size=(420, 150)) -> Image.Image:
        """Chinese text with a CJK font; the Latin fallback without one (README says which)."""
        return text_image([zh if self.zh_font else latin], self.font(64), size)


def _cmmmu_record(w: _CmmmuWriter, rng: random.Random, qid: int, category: str, subcategory: str, kind: str,
                  used: dict | None = None) -> dict:
    """One record of ``kind``. ``used`` (answers already given in this split, by subcategory and kind)
    makes the golds of a group differ: true / false alternate, fill-in answers and option letters repeat
    no earlier one."""
    used = {} if used is None else used
    seen = used.setdefault((subcategory, kind.split("_")[0]), [])
    q_img = f"q_{qid}_001.png"
    rec = {"id": qid, "type": None, "source_type": "demo", "source": "mmbench demo", "question": None}
    rec.update({f"option{i}": None for i in range(1, 5)})
    rec.update(answer=None, analysis=None, distribution="本科", difficulty_level=("easy", "middle", "hard")[qid % 3],
               img_list=[q_img], category=category, subcategory=subcategory, subfield=[subcategory + "基础"],
               img_type=[IMG_TYPES_CN["word"]])
    if kind == "mc_value":
        v = rng.randint(11, 99)
        w.images[q_img] = text_image([f"x = {v}"], load_font(64), (360, 150))
        opts, ans = pick_options(rng, str(v), [str(v + k) for k in (-11, -2, 3, 7, 10, 20)])
        if ans in seen:  # another letter than the group's earlier golds (options swapped, nothing redrawn)
            opts, ans = move_gold(opts, ans, next(x for x in "ABCD" if x not in seen))
        rec.update(type="选择", question=f'<img="{q_img}">图中 x 的值是多少？', answer=ans, img_type=[IMG_TYPES_CN["mc"]])
        rec.update({f"option{i}": o for i, o in enumerate(opts, start=1)})
    elif kind == "mc_multi":
        nums = ["12", "7", "30", "9"]  # even numbers are options A and C: a multi-letter gold "AC"
        w.images[q_img] = text_image(["   ".join(nums)], load_font(56), (480, 150))
        rec.update(type="选择", question=f'<img="{q_img}">图中哪些数是偶数？', answer="AC", img_type=[IMG_TYPES_CN["mc"]])
        rec.update({f"option{i}": o for i, o in enumerate(nums, start=1)})
    elif kind == "mc_option_images":
        (zh, latin), (zh2, latin2) = rng.sample(CN_WORDS, 2)
        names = [f"a_{qid}_00{i}.png" for i in (1, 2)]
        w.images[q_img] = w.text(zh, latin)
        order = [(zh, latin), (zh2, latin2)]
        rng.shuffle(order)
        if "AB"[order.index((zh, latin))] in seen:  # another letter than the group's earlier golds
            order.reverse()
        for name, (z, lt) in zip(names, order):
            w.images[name] = w.text(z, lt)
        rec.update(type="选择", question=f'<img="{q_img}">哪个选项中的图片与题目中的图片写着相同的词语？',
                   answer="AB"[order.index((zh, latin))], img_list=[q_img, *names])
        rec.update(option1=f'<img="{names[0]}">', option2=f'<img="{names[1]}">', option3="都不是", option4="无法判断")
    elif kind == "tf_word":
        (zh, latin), (zh2, _) = rng.sample(CN_WORDS, 2)
        w.images[q_img] = w.text(zh, latin)
        claim_true = len(seen) % 2 == 0  # 对, 错, 对, ... within a group
        rec.update(type="判断", question=f'<img="{q_img}">图中写的词语是“{zh if claim_true else zh2}”。',
                   answer="对" if claim_true else "错")
    elif kind == "tf_chart":
        values = rng.sample(range(2, 10), 3)
        labels = [zh if w.zh_font else latin for zh, latin in CN_LABELS]
        w.images[q_img] = labelled_bars(labels, values, w.font(44), load_font(44))
        top = values.index(max(values))
        k = top if len(seen) % 2 == 0 else (top + 1 + rng.randrange(2)) % 3  # 对, 错, 对, ... within a group
        rec.update(type="判断", question=f'<img="{q_img}">图中{CN_LABELS[k][0]}的数值最大。',
                   answer="对" if values[k] == max(values) else "错", img_type=[IMG_TYPES_CN["tf_chart"]])
    elif kind == "fill_sum":
        a, b = rng.randint(2, 40), rng.randint(2, 40)
        while str(a + b) in seen:
            b = rng.randint(2, 40)
        w.images[q_img] = text_image([f"{a} + {b} = ?"], load_font(64), (420, 150))
        rec.update(type="填空", question=f'<img="{q_img}">图中算式的结果是___。', answer=str(a + b), img_type=[IMG_TYPES_CN["mc"]])
    elif kind == "fill_word":
        zh, latin = rng.choice([wd for wd in CN_WORDS if (wd[0] if w.zh_font else wd[1]) not in seen] or CN_WORDS)
        w.images[q_img] = w.text(zh, latin)
        rec.update(type="填空", question=f'<img="{q_img}">图中写的词语是___。', answer=zh if w.zh_font else latin)
    else:
        raise ValueError(kind)
    seen.append(rec["answer"])
    return rec


def make_cmmmu_demo(out_dir, seed: int = SEED + 3) -> dict:
    """CMMMU demo: the official layout ``<out_dir>/cmmmu-data-{dev,val,test}/<category>/<category>.jsonl``
    with image files beside each file, and the same records in the HF layout under
    ``<out_dir>/hf/<category>/{dev,val,test}-00000-of-00001.parquet`` (docs/protocols.md §4.1).

    val: 2-5 items per category (选择 incl. the multi-letter gold "AC" and option images, 判断 对/错,
    填空) in groups of one subcategory and type with different golds (``CMMMU_PLAN``); dev: one 选择 per category with ``analysis``; test: one item per category without
    ``answer``/``analysis``. Chinese text is drawn with the pinned CJK font (see ``cjk_font_path``), else its
    Latin transliteration.
    """

    folder_to_category = {f: c for c, f in CATEGORY_FOLDER.items()}
    out = Path(out_dir)
    rng = random.Random(seed)
    zh_font = cjk_font_path()
    next_id = 10001
    counts: dict[str, int] = {}
    hf_columns = ("id", "type", "source_type", "source", "question", "option1", "option2", "option3", "option4",
                  "answer", "analysis", "distribution", "difficulty_level", "subcategory", "category", "subfield",
                  "img_type", *(f"image_{i}_filename" for i in range(1, 6)), *(f"image_{i}" for i in range(1, 6)))
    for split in ("dev", "val", "test"):
        for folder, plan in CMMMU_PLAN.items():
            category = folder_to_category[folder]
            if split == "dev":
                plan = [(plan[0][0], "mc_value")]
            elif split == "test":
                plan = [(plan[-1][0], plan[-1][1])]
            w = _CmmmuWriter(out / f"cmmmu-data-{split}" / folder, zh_font)
            records, used = [], {}
            for subcategory, kind in plan:
                rec = _cmmmu_record(w, rng, next_id, category, subcategory, kind, used)
                next_id += 1
                if split == "dev":
                    rec["analysis"] = "图中直接写出了 x 的值。"
                if split == "test":
                    rec.pop("answer")
                    rec.pop("analysis")
                records.append(rec)
            w.root.mkdir(parents=True, exist_ok=True)
            for name, img in w.images.items():
                save_image(img, w.root / name)
            (w.root / f"{folder}.jsonl").write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
            hf_rows = []
            for r in records:
                row = {k: v for k, v in r.items() if k != "img_list"}
                row["subfield"], row["img_type"] = repr(r["subfield"]), repr(r["img_type"])
                for i, name in enumerate(r["img_list"], start=1):
                    row[f"image_{i}_filename"], row[f"image_{i}"] = name, w.images[name]
                hf_rows.append(row)
            write_hf_parquet(out / "hf" / folder / f"{split}-00000-of-00001.parquet", hf_rows, hf_columns,
                             {f"image_{i}" for i in range(1, 6)}, int_columns={"id"})
            counts[split] = counts.get(split, 0) + len(records)
    return {"root": str(out), "hf_root": str(out / "hf"), "splits": list(counts), "counts": counts,
            "cjk_font": zh_font}


_README = """
## CMMMU (`cmmmu/`), the official repository layout (docs/protocols.md §4.1)

    cmmmu/cmmmu-data-{{dev,val,test}}/<category>/<category>.jsonl   + q_<id>_001.png, a_<id>_00k.png beside it
    cmmmu/hf/<category>/{{dev,val,test}}-00000-of-00001.parquet       the same records in the HF layout

val: 20 items over the 6 categories: 选择 (two with the multi-letter gold "AC", one with option
images), 判断 (对/错) and 填空. Questions of one subcategory and type come in groups of two or three
with different golds, so the Frequent Choice baseline is right on one per group (9 of 20; Random
Choice is near chance). dev: one 选择 per category with `analysis`; test: one item per
category without `answer`. Chinese text in the images is drawn with {font}.

Load with `cmmmu.load("<demo>/cmmmu", split="val")` or `cmmmu.load("<demo>/cmmmu/hf", split="val")`.
"""


def readme(paths: dict) -> str:
    """The CMMMU section of the demo README, naming the font ``make_cmmmu_demo`` drew with."""
    font = paths["cjk_font"]
    return _README.format(
        font=f"the CJK font `{Path(font).name}` (PyPI `cvttf-NotoSansCJK-Regular`)" if font
        else "no CJK font (`cvttf-NotoSansCJK-Regular` not installed): their Latin transliterations")
