"""Tables under a run folder (analysis/tables.py): the CSV keeps every digit, the Markdown view is formatted
per column so a p-value next to percentages is not rounded to one decimal."""
import pandas as pd

from mmbench_lib.analysis.tables import save_table


def test_markdown_formats_per_column_and_csv_keeps_digits(tmp_path):
    df = pd.DataFrame({"dimension": ["Scene"], "blind %": [33.3333], "p (> chance)": [0.578125]})
    csv, md = save_table(df, tmp_path, "t", floatfmt={"p (> chance)": ".3f"})
    row = md.read_text().splitlines()[-1]
    assert "33.3" in row and "0.578" in row and "33.333" not in row
    assert pd.read_csv(csv)["p (> chance)"].iloc[0] == 0.578125
    _, md1 = save_table(df, tmp_path, "u")  # one format for all: the p-value loses its digits
    assert "0.6" in md1.read_text().splitlines()[-1]
