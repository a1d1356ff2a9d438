"""The README cannot go stale: its commands parse (the quick ones run), its links and paths exist.

Every fenced shell block of README.md and docs/*.md is read: each ``mmbench`` command is parsed by the real argument
parser; a ``run`` names an existing notebook and parameter files, and every parameter it sets (``-p``,
the shortcuts, the files' keys) is one the notebook takes, of the right type (paths under ``/data`` are the
user's downloads and are not looked for). The tour's commands run for real on the demo data (slow). Every
relative link in README.md and docs/*.md points at an existing file (and heading), except the pages other
parts of the project add (``PENDING``), and every repository path the README names exists.
"""
import re
import shlex
from pathlib import Path

import pytest
import yaml

from mmbench_lib.cli import build_parser, main, shortcut_overrides
from mmbench_lib.runner import check_params, notebook_parameters, parse_override

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: pages the README links that are written by other parts of the project; allowed to be missing here
PENDING = {"docs/scale.md", "docs/batching.md", "docs/adding_a_benchmark.md"}
USER_DATA = "/data/"
#: values that name what the user downloads or a run makes (not looked for)
USER_MADE = (USER_DATA, "outputs/")


def shell_commands(text: str) -> list[list[str]]:
    """The commands of the fenced ``bash``/``sh`` blocks, continuation lines joined, comments dropped."""
    out = []
    for block in re.findall(r"^```(?:bash|sh|shell)\n(.*?)^```", text, re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                out.append(words)
    return out


def mmbench_args(words: list[str]) -> list[str] | None:
    return words[1:] if Path(words[0]).name == "mmbench" else None


COMMANDS = [args for args in map(mmbench_args, shell_commands(README.read_text(encoding="utf-8"))) if args]
#: the commands of the docs pages too (a ``...`` stands for arguments shown elsewhere)
DOC_COMMANDS = [args for page in sorted((ROOT / "docs").glob("*.md"))
                for args in map(mmbench_args, shell_commands(page.read_text(encoding="utf-8")))
                if args and "..." not in args]


def _mentions_user_data(value) -> bool:
    if isinstance(value, dict):
        return any(_mentions_user_data(v) for v in value.values())
    return isinstance(value, str) and value.startswith(USER_MADE)


def test_the_readme_is_a_short_guide_with_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 250
    assert {"run", "metrics", "score-predictions", "score-responses"} <= {c[0] for c in COMMANDS}
    assert "make demo" in text and "make test" in text and "make lab" in text


def test_the_notebook_table_names_every_notebook():
    text = README.read_text(encoding="utf-8")
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"| `{nb.name}` |" in text, nb.name


def test_make_targets_named_in_the_readme_exist():
    text = README.read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in set(re.findall(r"`make ([a-z-]+)`", text)) | {w[1] for w in shell_commands(text) if w[0] == "make"}:
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"make {target}"


@pytest.mark.parametrize("args", COMMANDS + DOC_COMMANDS, ids=lambda a: " ".join(a)[:70])
def test_each_mmbench_command_parses(args):
    a = build_parser().parse_args(args)
    if a.cmd != "run":
        return
    nb = ROOT / a.notebook
    assert nb.is_file(), a.notebook
    known = notebook_parameters(nb)
    params = {}
    for f in a.file or []:
        assert (ROOT / f).is_file(), f
        params.update(yaml.safe_load((ROOT / f).read_text(encoding="utf-8")) or {})
    overrides = {name: parse_override(name, value) for name, value in a.param or []}
    a.notebook = str(nb)
    overrides.update(shortcut_overrides(a, overrides))  # a shortcut the notebook does not take is refused here
    params.update(overrides)
    check_params(nb.name, {k: v for k, v in params.items() if not _mentions_user_data(v)}, known)


def _links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


DOCS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "annotations" / "README.md"]


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_point_at_existing_files_and_headings(page):
    for link in _links(page):
        target, _, anchor = link.partition("#")
        dest = (page.parent / target).resolve() if target else page
        rel = dest.relative_to(ROOT).as_posix() if dest.is_relative_to(ROOT) else str(dest)
        if rel in PENDING:
            continue
        assert dest.exists(), f"{page.name}: link {link} -> {rel} does not exist"
        if anchor and dest.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", dest.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{page.name}: no heading #{anchor} in {rel}"


def test_repository_paths_the_readme_names_exist():
    text = README.read_text(encoding="utf-8")
    roots = ("notebooks/", "params/", "docs/", "mmbench_lib/", "tests/", "scripts/", "benchmarks/", "annotations/")
    named = {p for p in re.findall(r"`([^`\s]+)`", text) if p.startswith(roots)}
    named |= {w for words in shell_commands(text) for w in words if w.startswith(roots)}
    assert named
    for p in sorted(named):
        if any(c in p for c in "<*{"):
            continue
        assert (ROOT / p).exists() or p in PENDING, p


def test_no_citation_of_files_outside_the_repository():
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        assert "spec/protocols.md" not in text and "spec/architecture.md" not in text, page.name
        assert not re.search(r"\bissue \d+", text), f"{page.name} names a work item a user cannot see"


@pytest.mark.slow
def test_the_tour_runs_on_the_demo_data(outputs, capsys):
    """The tour's demo-data commands, run for real (the SEED run cut to 3 items): the run, then its table."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## A five-minute tour"):]
    section = section[:section.index("\n## ", 1)]
    tour = [args for args in map(mmbench_args, shell_commands(section)) if args]
    runs = [c for c in tour if c[0] == "run"]
    assert runs, "the README's tour has no demo run"
    for args in runs:
        assert main([*args, "--limit", "3"]) == 0
    capsys.readouterr()
    for args in (c for c in tour if c[0] == "metrics"):
        folder = args[1].replace("outputs", str(outputs), 1)
        assert main(["metrics", folder]) == 0
        table = capsys.readouterr().out
        assert "|seed1_smollm2|seed" in table.replace(" ", ""), table
