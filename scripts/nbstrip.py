#!/usr/bin/env python3
"""Strip a notebook's outputs: the git clean filter of ``notebooks/*.ipynb`` (``make setup`` installs it).

Reads a notebook on stdin, writes it to stdout without outputs, execution counts, papermill / widget
metadata or run-specific language details, keeping cell ids and tags, so running a notebook in place
never dirties the tree. A committed (already clean) notebook passes through byte for byte. Standard
library only. By hand: ``python3 scripts/nbstrip.py < in.ipynb > out.ipynb``, or with file arguments
to strip them in place.
"""
import json
import sys

KEEP_CELL_METADATA = ("tags",)


def strip(nb: dict) -> dict:
    for cell in nb.get("cells", []):
        cell["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k in KEEP_CELL_METADATA}
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    meta = nb.get("metadata", {})
    kept = {"kernelspec": meta["kernelspec"]} if "kernelspec" in meta else {}
    if "language_info" in meta:
        kept["language_info"] = {"name": meta["language_info"].get("name", "python")}
    nb["metadata"] = kept
    return nb


def dumps(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def main(paths: list[str]) -> int:
    if not paths:  # the git filter: stdin to stdout
        text = sys.stdin.buffer.read().decode("utf-8")
        try:
            sys.stdout.buffer.write(dumps(strip(json.loads(text))).encode("utf-8"))
        except ValueError:  # not JSON (a merge in progress): pass through untouched
            sys.stdout.buffer.write(text.encode("utf-8"))
        return 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        with open(path, "w", encoding="utf-8") as f:
            f.write(dumps(strip(nb)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
