"""Number-extraction speed: the official MMMU/CMMMU patterns against the linear-time ones.

Prints ONE JSON object on stdout. For digit runs of 1k, 16k and 1M characters (each followed by
``e``, so that no scientific number matches and the official patterns retry from every start),
the seconds ``extract_numbers`` of ``mmbench_lib.tasks.mmmu_parser`` and ``cmmmu_parser`` take
against ``re.findall`` with the official ``eval_utils.py`` patterns. The official patterns run in
a child process killed after ``--old-limit`` seconds (default 30; a killed run is reported as
``null`` with ``old_timed_out``), and not at all on 1M characters (quadratic: hours; ``old_run``
false). Both results must agree where the old one finishes.

    .venv/bin/python benchmarks/parser_speed.py [--old-limit 20]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mmbench_lib.tasks import cmmmu_parser, mmmu_parser  # noqa: E402

OFFICIAL = {
    "mmmu": (r"-?\b\d{1,3}(?:,\d{3})+\b", r"-?\d+(?:\.\d+)?[eE][+-]?\d+",
             r"-?(?:\d+\.\d+|\.\d+|\d+\b)(?![eE][+-]?\d+)(?![,\d])"),
    "cmmmu": (r"-?\d{1,3}(?:，\d{3})+", r"-?\d+(?:\.\d+)?[eE][+-]?\d+",
              r"-?(?:\d+\.\d+|\.\d+|\d+)(?![eE][+-]?\d+)(?!，\d)"),
}
NEW = {"mmmu": mmmu_parser.extract_numbers, "cmmmu": cmmmu_parser.extract_numbers}
SIZES = {"1k": 1_000, "16k": 16_000, "1M": 1_000_000}


def _text(n: int) -> str:
    return "7" * n + "e"


def _old(parser: str, n: int, out) -> None:
    text = _text(n)
    t = time.perf_counter()
    found = [m for pattern in OFFICIAL[parser] for m in re.findall(pattern, text)]
    out.put((time.perf_counter() - t, found))


def _time_old(parser: str, n: int, limit: float):
    queue = mp.Queue()
    child = mp.Process(target=_old, args=(parser, n, queue), daemon=True)
    child.start()
    child.join(limit)
    if child.is_alive():
        child.kill()
        child.join()
        return None, None
    return queue.get()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old-limit", type=float, default=30.0, help="seconds before the official patterns are stopped")
    a = ap.parse_args(argv)
    report = {"input": "digit run of n characters followed by 'e'", "old_limit_s": a.old_limit, "results": {}}
    for parser in ("mmmu", "cmmmu"):
        for label, n in SIZES.items():
            t = time.perf_counter()
            found = NEW[parser](_text(n))
            new_s = time.perf_counter() - t
            old_run = n <= 16_000
            old_s, old_found = _time_old(parser, n, a.old_limit) if old_run else (None, None)
            report["results"][f"{parser}_{label}"] = {
                "chars": n, "new_s": round(new_s, 5), "old_s": None if old_s is None else round(old_s, 5),
                "old_run": old_run, "old_timed_out": old_run and old_s is None,
                "speedup": None if old_s is None else round(old_s / max(new_s, 1e-9), 1),
                "same_result": None if old_found is None else old_found == found,
            }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
