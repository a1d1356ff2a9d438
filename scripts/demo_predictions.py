"""Run every task's demo and print one JSON object: each run's ``predictions.jsonl`` sha256 and its predictions.

Before and after a refactor (issue 38: "never change a demo prediction"):

    python scripts/demo_predictions.py --out /tmp/before > before.json
    ...change...
    python scripts/demo_predictions.py --out /tmp/after > after.json
    python scripts/demo_predictions.py --diff before.json after.json

Runs: the random model on every task's demo set (each MMMU-Pro direct setting), SmolLM2 on each ranking task's
demo set (``seed1-ppl``, summed log-likelihood, as the quickstart runs SEED) and SmolLM2 generating on the MMMU
demo split (the error-analysis demo). Rows are compared whole (scores included), in file order.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _runs(demo: dict, out: Path):
    from mmbench_lib.pipeline.config import RunSpec
    from mmbench_lib.tasks.base import all_tasks

    for task in all_tasks():
        try:
            task.demo_args(demo)
        except ValueError:
            continue
        splits = [s for s in task.splits if s.endswith("-direct") and not s.startswith("vision")] or [None]
        for split in splits:
            data = dict(task.demo_args(demo, split=split) if split else task.demo_args(demo))
            kw = {"split": data.pop("split")} if "split" in data else {}
            models = ["random"] if task.protocol == "generation" else ["random", "smollm2"]
            for model in models:
                extra = dict(kw)
                if task.protocol == "generation":
                    extra["baseline"] = "random"
                elif model == "smollm2":
                    extra.update(recipe="seed1-ppl", reduction="sum")
                name = f"{task.name}{'__' + split if split else ''}__{model}"
                yield name, RunSpec.from_params(task.name, out / name, data=data, model=model, progress=False, **extra)
    yield "mmmu__smollm2_generate", RunSpec.from_params(
        "mmmu", out / "mmmu__smollm2_generate", source=demo["mmmu"]["source"], model="smollm2", baseline="none",
        split="validation", max_new_tokens=16, seed=0, progress=False)


def snapshot(out: Path, data_dir: Path) -> dict:
    from mmbench_lib.demo import ensure_demo
    from mmbench_lib.pipeline import runs

    demo = ensure_demo(data_dir)
    result = {}
    for name, spec in _runs(demo, out):
        print(f"{name} ...", file=sys.stderr, flush=True)
        runs.evaluate(spec)
        pred = out / name / "predictions.jsonl"
        rows = [json.loads(line) for line in pred.read_text().splitlines() if line.strip()]
        result[name] = {"sha256": hashlib.sha256(pred.read_bytes()).hexdigest(), "n": len(rows),
                        "predictions": [[r.get("id"), r.get("prediction")] for r in rows]}
    return result


def diff(a: dict, b: dict) -> list[str]:
    out = []
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            out.append(f"{name}: only in {'after' if name in b else 'before'}")
        elif a[name]["sha256"] != b[name]["sha256"]:
            moved = sum(x != y for x, y in zip(a[name]["predictions"], b[name]["predictions"]))
            out.append(f"{name}: predictions.jsonl differs ({moved} predictions of {a[name]['n']} changed)")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="a new folder for the runs")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "demo")
    ap.add_argument("--diff", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    a = ap.parse_args(argv)
    if a.diff:
        before, after = (json.loads(p.read_text()) for p in a.diff)
        lines = diff(before, after)
        print("\n".join(lines) if lines else f"{len(before)} runs: every predictions.jsonl byte-identical")
        return 1 if lines else 0
    if a.out is None:
        ap.error("--out is required (a new folder)")
    print(json.dumps(snapshot(a.out, a.data), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
