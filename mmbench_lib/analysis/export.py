"""A table as text, Markdown, LaTeX or CSV (``mmbench compare``, ``mmbench published show``): missing values
print as ``n/a`` (empty in CSV), never ``nan``."""
from __future__ import annotations

import math

import pandas as pd

FORMATS = ("text", "markdown", "latex", "csv")
_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def cells(df: pd.DataFrame, na: str = "n/a") -> list[list[str]]:
    """The header and rows as strings: floats with the digits they have (integers without ``.0``), missing as ``na``."""
    def text(v):
        if _missing(v):
            return na
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return str(v)
    return [[str(c) for c in df.columns]] + [[text(v) for v in row] for row in df.itertuples(index=False)]


def _numeric(column: list[str]) -> bool:
    def num(s):
        try:
            float(s.split("-")[0] if s.count("-") == 1 and not s.startswith("-") else s)
            return True
        except ValueError:
            return s in ("n/a", "")
    return all(num(s) for s in column)


def render(df: pd.DataFrame, fmt: str = "text", caption: str = "") -> str:
    """``df`` in ``fmt`` (:data:`FORMATS`); numbers right-aligned in text, Markdown and LaTeX."""
    if fmt not in FORMATS:
        raise ValueError(f"--format {fmt!r}: use one of {list(FORMATS)}")
    if fmt == "csv":
        return df.to_csv(index=False)
    rows = [[" ".join(c.splitlines()) for c in r] for r in cells(df)]  # a newline (in a model name) would end a row
    right = [_numeric([r[i] for r in rows[1:]]) and len(rows) > 1 for i in range(len(rows[0]))]
    if fmt == "latex":
        esc = [["".join(_LATEX.get(ch, ch) for ch in c) for c in r] for r in rows]
        spec = "".join("r" if x else "l" for x in right)
        body = [" & ".join(esc[0]) + r" \\", r"\midrule"] + [" & ".join(r) + r" \\" for r in esc[1:]]
        out = [r"\begin{tabular}{" + spec + "}", r"\toprule", *body, r"\bottomrule", r"\end{tabular}"]
        if caption:
            out = [r"\begin{table}", r"\centering", *out, r"\caption{" + "".join(_LATEX.get(ch, ch) for ch in caption)
                   + "}", r"\end{table}"]
        return "\n".join(out) + "\n"
    widths = [max(3, *(len(r[i]) for r in rows)) for i in range(len(rows[0]))]

    def line(r, sep):
        parts = [c.rjust(w) if x else c.ljust(w) for c, w, x in zip(r, widths, right)]
        return sep.join(parts) if sep == "  " else "|" + "|".join(parts) + "|"

    if fmt == "markdown":
        rule = "|" + "|".join("-" * (w - 1) + (":" if x else "-") for w, x in zip(widths, right)) + "|"
        rows_md = [[c.replace("|", r"\|") for c in r] for r in rows]
        return "\n".join([line(rows_md[0], "|"), rule, *(line(r, "|") for r in rows_md[1:])]) + "\n"
    return "\n".join(line(r, "  ").rstrip() for r in rows) + "\n"
