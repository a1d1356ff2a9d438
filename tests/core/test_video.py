"""The official 8-frame index rule (docs/protocols.md §1.4 items 6-7) on its worked examples."""
import pytest

from mmbench_lib.core.video import frame_indices, get_index


@pytest.mark.parametrize("n, expected", [
    (100, [6, 18, 31, 43, 56, 68, 80, 93]),
    (8, [0, 1, 2, 3, 4, 4, 5, 6]),  # duplicates are kept (P-S9)
    (5, [0, 1, 2, 3, 4]),  # fewer than 8 frames: every index
    (0, []),
])
def test_get_index_worked_examples(n, expected):
    assert get_index(n) == expected


def test_half_to_even_rounding():
    # n=21: seg = 2.5, start = 1; offsets round(2.5*i) half-to-even: 0, 2, 5, 8, 10, 12, 15, 18
    assert get_index(21) == [1, 3, 6, 9, 11, 13, 16, 19]


def test_dim10_drops_last_frame():
    # 101 decoded frames: get_index(100) -> the last frame (100) is never eligible
    assert frame_indices("whole_minus_last", 101, 12.0) == [6, 18, 31, 43, 56, 68, 80, 93]


def test_dim11_seconds_segment_uses_fps_and_clips():
    # 30 fps, segment [2.0, 5.5] s -> frames 60..165, start + get_index(105)
    idx = frame_indices("seconds", 300, 30.0, (2.0, 5.5))
    assert idx == [60 + i for i in get_index(105)]
    # end beyond the video is clipped to len-1
    assert frame_indices("seconds", 100, 30.0, (1.0, 50.0)) == [30 + i for i in get_index(99 - 30)]


def test_dim12_frame_segment_caps_end_at_decoded_count():
    assert frame_indices("frames", 150, 15.0, (18, 166)) == [18 + i for i in get_index(150 - 18)]
    assert frame_indices("frames", 500, 15.0, (18, 166)) == [18 + i for i in get_index(148)]
    # a short segment yields fewer than 8 frames, replicated rather than fixed
    assert frame_indices("frames", 500, 15.0, (10, 15)) == [10, 11, 12, 13, 14]


def test_unknown_rule():
    with pytest.raises(ValueError, match="unknown frame rule"):
        frame_indices("middle", 10, 1.0)


def test_pre_extracted_frame_folders_replace_decoding(demo, tmp_path):
    """frames_root/<question_id>/ holds a video question's frames (1.png ... in natural order)."""
    from mmbench_lib import tasks as benchmarks
    from mmbench_lib.core.media import load_visual_inputs
    from mmbench_lib.core.video import read_video_frames

    d = demo["seed"]
    seed1 = benchmarks.get("seed")
    videos = seed1.load(d["annotation_file"], d["image_root"], d["video_roots"], dimensions="video")
    for it in videos:
        folder = tmp_path / it.id
        folder.mkdir()
        for k, frame in enumerate(read_video_frames(it.video.path, it.video.rule, it.video.segment), 1):
            frame.save(folder / f"{k}.png")
    framed = seed1.load(d["annotation_file"], d["image_root"], frames_root=tmp_path, dimensions="video")
    assert [it.id for it in framed] == [it.id for it in videos]
    for a, b in zip(videos, framed):
        assert b.video is None and b.frames
        decoded, extracted = load_visual_inputs(a), load_visual_inputs(b)
        assert len(decoded) == len(extracted)
        assert all(x.tobytes() == y.tobytes() for x, y in zip(decoded, extracted))
