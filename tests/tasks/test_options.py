"""Option orders of lettered multiple choice (CircularEval): every shown answer maps back to its original option."""
import pytest

from mmbench_lib.core.items import Item
from mmbench_lib.tasks.options import (arrange, lettered, permutation_order, rotation_order, select_and_arrange,
                                       to_original)


def _item(choices, answer, id_="q1", **kw):
    return Item(id=id_, benchmark="seed", question="Which?", choices=list(choices), answer=answer, **kw)


def test_rotation_worked_example():
    it = _item(["cat", "dog", "cow", "hen"], "B")
    assert rotation_order(4, 1) == [1, 2, 3, 0]
    r = select_and_arrange([it], rotation=1)[0]
    assert r.choices == ["dog", "cow", "hen", "cat"] and r.answer == "A"  # the original B is shown as A
    assert r.meta["option_order"] == [1, 2, 3, 0] and r.id == it.id
    assert to_original("A", r.meta["option_order"]) == "B" and to_original("D", r.meta["option_order"]) == "A"
    assert it.choices == ["cat", "dog", "cow", "hen"] and it.answer == "B"  # the original is untouched


@pytest.mark.parametrize("k", range(4))
def test_every_shown_letter_maps_back_to_the_same_content(k):
    it = _item(["cat", "dog", "cow", "hen"], "C")
    r = select_and_arrange([it], rotation=k, lettered_only=True)[0]
    for j, letter in enumerate("ABCD"):
        back = to_original(letter, r.meta["option_order"])
        assert it.choices["ABCD".index(back)] == r.choices[j]
    assert to_original(r.answer, r.meta["option_order"]) == "C" and r.choices["ABCD".index(r.answer)] == "cow"


def test_each_item_is_asked_under_exactly_its_own_rotations():
    three = _item(["x", "y", "z"], "A", id_="three")
    four = _item(["a", "b", "c", "d"], "D", id_="four")
    open_q = Item(id="open", benchmark="mmmu", question="How many?", answer="7", question_type="short-answer")
    runs = [[it.id for it in select_and_arrange([three, four, open_q], rotation=k, lettered_only=True)] for k in range(4)]
    assert runs == [["three", "four"], ["three", "four"], ["three", "four"], ["four"]]
    golds = [select_and_arrange([three], rotation=k, lettered_only=True)[0].answer for k in range(3)]
    assert sorted(golds) == ["A", "B", "C"]  # the gold sits once at each position
    assert select_and_arrange([open_q, three, four], lettered_only=True, limit=1)[0].id == "three"
    assert select_and_arrange([open_q, three], limit=1) == [open_q]  # defaults: nothing filtered or moved


def test_cmmmu_padding_stays_and_multi_letter_gold_moves_in_abcd_order():
    it = Item(id="c1", benchmark="cmmmu", question="?", choices=["x", "y", "z", ""], answer="AC")
    r = arrange(it, [1, 2, 0, 3])  # rotation 1 of the three real options
    assert select_and_arrange([it], rotation=1)[0].choices == r.choices == ["y", "z", "x", ""]
    assert r.answer == "BC"  # x (A) is shown at C, z (C) at B: official scorer compares "BC"
    assert to_original("BC", r.meta["option_order"]) == "AC" and to_original("CB", r.meta["option_order"]) == "AC"
    assert [i.id for i in select_and_arrange([it], rotation=3)] == []  # only 3 options move


def test_mmmu_list_gold_and_option_images_move():
    it = Item(id="m1", benchmark="mmmu", question="?", choices=["<image 2>", "<image 3>", "none"], answer=["A", "C"],
              meta={"option_images": {"A": "<image 2>", "B": "<image 3>"}, "answer_raw": "['A', 'C']"})
    r = select_and_arrange([it], rotation=2)[0]
    assert r.meta["option_order"] == [2, 0, 1] and r.choices == ["none", "<image 2>", "<image 3>"]
    assert r.answer == ["B", "A"] and "answer_raw" not in r.meta
    assert r.meta["option_images"] == {"B": "<image 2>", "C": "<image 3>"}
    assert to_original(["B", "A"], r.meta["option_order"]) == ["A", "C"]


def test_seeded_permutations_are_reproducible_per_item():
    a = permutation_order(4, 7, "q1")
    assert a == permutation_order(4, 7, "q1") and sorted(a) == [0, 1, 2, 3]
    assert any(permutation_order(4, s, "q1") != a for s in range(8))
    it = _item(["cat", "dog", "cow", "hen"], "A")
    r = select_and_arrange([it], permutation_seed=7)[0]
    assert r.meta["option_order"] == a and to_original(r.answer, a) == "A"


def test_lettered_and_bad_settings():
    assert lettered(_item(["a", "b"], "B")) and lettered(_item(["a", "b"], None))
    assert not lettered(_item(["a"], "A")) and not lettered(_item(["a", "b"], "E"))
    assert not lettered(Item(id="t", benchmark="cmmmu", question="?", answer="对", question_type="true-false"))
    assert to_original("E", [0, 1]) is None and to_original(None, [0, 1]) is None
    with pytest.raises(ValueError, match="not both"):
        select_and_arrange([], rotation=1, permutation_seed=0)
    with pytest.raises(ValueError, match="not an order"):
        arrange(_item(["a", "b"], "A"), [0, 0])
