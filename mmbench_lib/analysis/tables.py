"""Result tables of runs side by side (pandas), and their CSV + Markdown files under a run folder."""
from __future__ import annotations

from pathlib import Path


def dimension_table(runs: dict[str, dict]):
    """Per-dimension accuracy of several runs side by side (columns = run labels)."""
    import pandas as pd

    cols = {}
    base = None
    for label, m in runs.items():
        df = pd.DataFrame(m["per_dimension"], columns=None if m["per_dimension"] else
                          ["dimension_id", "dimension", "n", "accuracy", "random_expected"])  # an empty shard
        df = df.set_index(["dimension_id", "dimension"])
        cols[label] = 100 * df["accuracy"].astype(float)  # metrics hold fractions; the table shows percent
        base = df if base is None else base
    table = pd.DataFrame(cols)
    table["n"] = base["n"]
    table["random (expected)"] = 100 * base["random_expected"].astype(float)
    return table.reset_index()


def group_table(runs: dict):
    """Group averages (micro and dimension-mean, %) of several runs, one row per (run, group).

    ``runs`` maps a label (a string, or a tuple joined by ``/``) to a run's metrics; the label goes to
    column ``run``, ``benchmark`` and ``model`` come from the metrics themselves."""
    import pandas as pd

    frames = []
    for key, m in runs.items():
        df = pd.DataFrame(m["groups"])
        if df.empty:
            continue
        label = "/".join(map(str, key)) if isinstance(key, tuple) else str(key)
        for i, (name, value) in enumerate((("run", label), ("benchmark", m.get("benchmark")), ("model", m.get("model")))):
            df.insert(i, name, value)
        for c in ("accuracy", "accuracy_micro", "accuracy_dim_mean", "ci_low", "ci_high"):  # fractions -> percent
            if c in df:
                df[c] = 100 * df[c].astype(float)
        frames.append(df.drop(columns=["missing_dimensions", "accuracy"], errors="ignore"))  # accuracy = micro
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def save_table(df, out_dir, name: str, floatfmt: str | dict = ".1f") -> list[Path]:
    """Write a table as ``tables/<name>.csv`` and ``.md`` under the run folder; ``floatfmt`` formats the
    ``.md`` (``.1f`` suits percentages; fraction tables need ``.3f``), or a dict of column -> format
    with ``.1f`` for the others (p-values beside percentages). The CSV keeps every digit."""
    folder = Path(out_dir) / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    csv, md = folder / f"{name}.csv", folder / f"{name}.md"
    df.to_csv(csv, index=False)
    if isinstance(floatfmt, dict):
        floatfmt = tuple(floatfmt.get(c, ".1f") for c in df.columns)
    md.write_text(df.to_markdown(index=False, floatfmt=floatfmt) + "\n", encoding="utf-8")
    return [csv, md]


def breakdown_table(runs: dict[str, dict], key: str):
    """Accuracy (%) of several runs side by side for one breakdown (``per_subject``, ``per_discipline``,
    ``per_difficulty``, ``per_image_type``, ``per_question_type``), with the item count ``n``."""
    import pandas as pd

    names = list(dict.fromkeys(k for m in runs.values() for k in (m.get(key) or {})))
    table = pd.DataFrame({key.removeprefix("per_"): names})
    first = next(iter(runs.values()))
    for label, m in runs.items():
        table[label] = [100 * m[key][k]["accuracy"] if k in (m.get(key) or {}) else None for k in names]
    table["n"] = [((first.get(key) or {}).get(k) or {}).get("n") for k in names]
    return table


def summary_table(runs: dict[str, dict]):
    """One row per run: its protocol (``generation (<prompt mode>)``, ``tasks.modes``), overall accuracy (%) with
    its 95% Wilson interval, items, failed, truncated, parser fallbacks."""
    import pandas as pd

    def pct(m, k):
        v = (m.get("overall") or {}).get(k)
        return None if v is None else 100 * v

    return pd.DataFrame([
        {"run": label, "protocol": f"generation ({m.get('prompt_mode') or 'official'})", "accuracy": pct(m, "accuracy"), "ci_low": pct(m, "ci_low"), "ci_high": pct(m, "ci_high"),
         "n": (m.get("overall") or {}).get("n"), "failed": m["counts"]["failed"], "truncated": m["counts"]["truncated"],
         "fallbacks": m["counts"]["fallbacks"]}
        for label, m in runs.items()
    ])


RESPONSE_COLUMNS = ("run", "id", "question_type", "response", "truncated", "parsed_pred", "mode", "fallback",
                    "answer", "correct", "status")


def responses_table(out_dir, labels) -> "pd.DataFrame":
    """Every scored response of the runs ``out_dir/<label>/scored.jsonl``, one row each, labelled by run."""
    import pandas as pd

    frames = []
    for label in labels:
        df = pd.read_json(Path(out_dir) / label / "scored.jsonl", lines=True)
        df.insert(0, "run", label)
        frames.append(df)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return df[[c for c in RESPONSE_COLUMNS if c in df]]


#: the breakdowns of MMMU / CMMMU generation metrics, in the order the papers' tables give them
BREAKDOWNS = ("per_discipline", "per_subject", "per_difficulty", "per_image_type", "per_question_type")


def generation_tables(results: dict[str, dict], out_dir) -> dict:
    """The summary and every breakdown of several generation runs side by side (percent), each saved
    as ``tables/<name>.csv`` and ``.md`` under ``out_dir``; keys ``summary``, ``discipline``, ...
    (breakdowns only over runs that were scored, i.e. not a test-split submission)."""
    out = {"summary": summary_table(results)}
    scored = {k: m for k, m in results.items() if m.get("scored")}
    for key in BREAKDOWNS if scored else ():
        out[key.removeprefix("per_")] = breakdown_table(scored, key)
    for name, df in out.items():
        save_table(df, out_dir, name)
    return out
