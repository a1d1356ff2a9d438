"""The task contract: what a benchmark is, written down once, and the registry that finds one by name.

A benchmark is one module under ``mmbench_lib/tasks/`` that defines a :class:`Task` subclass and
registers it with :func:`register_task` (as inspect_ai's ``@task``; a variant of a benchmark is a
subclass of its task, as in VLMEvalKit's dataset classes). Nothing outside ``tasks/`` and ``demo/``
decides anything by a benchmark's name: it asks the task (``get_task(name).<attribute or method>``).
The registry imports every module of this package on first use, so adding a module registers it.

More: docs/modules.md, ``mmbench_lib/tasks/base.py``.
"""
from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import pkgutil
from dataclasses import dataclass
from types import ModuleType
from typing import ClassVar

from mmbench_lib.core.items import Item
from mmbench_lib.tasks.modes import OFFICIAL, PromptMode, answer_line

PROTOCOLS = ("ranking", "generation")


@dataclass(frozen=True)
class Layout:
    """One copy of a benchmark's data that its loader reads: ``key`` (what :meth:`Task.probe` returns),
    ``what`` (one line: the files, as the user holds them) and ``extra``: the other loader arguments it
    needs besides the data itself (e.g. ``image_root``; ``frames_root`` for SEED v1's frame folders)."""

    key: str
    what: str
    extra: tuple[str, ...] = ()


class UnknownTask(ValueError):
    """An unknown benchmark name; the message is one line with a did-you-mean and the known names."""



@dataclass(frozen=True)
class AuditPart:
    """A task's reproduction-audit part (``mmbench audit``, docs/audit.md): the object holding its readers and rule
    sets, named ``"module"`` or ``"module:attribute"`` and loaded on first use (audit modules import task modules).
    A task without one is not auditable."""

    rules: str
    #: what ``pipeline/audit.py`` reads from the loaded object (the rest, e.g. ``read_official``, is optional)
    REQUIRED: ClassVar[tuple[str, ...]] = ("BENCHMARK", "RULES", "from_lmms_eval", "from_vlmevalkit", "with_gold")

    def load(self):
        module, _, attr = self.rules.partition(":")
        obj = importlib.import_module(module)
        return getattr(obj, attr) if attr else obj

    def form_problems(self) -> list[str]:
        """What ``Task.problems()`` checks at registration without importing (audit modules import task modules):
        a ``module[:attribute]`` name whose module exists."""
        module = self.rules.partition(":")[0]
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        return [] if found else [f"audit part {self.rules!r}: no module {module!r}"]

    def problems(self, name: str) -> list[str]:
        """What the loaded part leaves out (checked on the audit's first use, ``tasks/audits.py``): an object that
        does not load, lacks a required attribute (the rule set and the peer readers), names another benchmark, has no
        rule set, or recognises official files it cannot read."""
        try:
            obj = self.load()
        except (ImportError, AttributeError) as e:
            return [f"audit part {self.rules!r} does not load ({e})"]
        out = [f"audit part {self.rules!r} lacks {a}" for a in self.REQUIRED if not hasattr(obj, a)]
        if hasattr(obj, "BENCHMARK") and obj.BENCHMARK != name:
            out.append(f"audit part {self.rules!r} is for {obj.BENCHMARK!r}, not {name!r}")
        if hasattr(obj, "RULES") and not obj.RULES:
            out.append(f"audit part {self.rules!r} has no rule set")
        if hasattr(obj, "official_format") and not hasattr(obj, "read_official"):
            out.append(f"audit part {self.rules!r} recognises official files (official_format) but has no reader "
                       "(read_official)")
        return out

@dataclass(frozen=True)
class PublishedColumn:
    """A column of another paper's published tables that reports this benchmark, e.g. the text-only (blind) scores of
    the MMStar paper's Tables 1 and 2 (``seed_image``, ``mmmu_val``): the ``tables`` (``published`` names), the
    ``column``, what the paper calls it, the group of this task's dimensions it covers (a ``Task.groups`` key, empty:
    every dimension) and the data values a run must have to hold the same items (e.g. ``{"split": "validation"}``)."""

    tables: tuple[str, ...]
    column: str
    what: str
    group: str = ""
    data: tuple[tuple[str, str], ...] = ()


class Task:
    """One benchmark. Subclass it in the benchmark's module, set the attributes, register it."""

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    title: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    published_tables: ClassVar[tuple[str, ...]] = ()
    error_table: ClassVar[tuple[str, str] | None] = None
    order: ClassVar[int] = 100
    protocol: ClassVar[str] = "ranking"
    splits: ClassVar[tuple[str, ...]] = ("test",)
    split_aliases: ClassVar[dict[str, str]] = {}
    default_split: ClassVar[str] = "test"
    validation_split: ClassVar[str | None] = None
    #: split -> its number of items as published (a run is a "full split" only when it holds that many ids)
    split_sizes: ClassVar[dict[str, int]] = {}
    dimensions: ClassVar[dict[int, tuple]] = {}
    groups: ClassVar[dict[str, tuple[int, ...]]] = {}
    group_kind: ClassVar[str] = "dimension"
    numbered_dimensions: ClassVar[bool] = False
    hub_id: ClassVar[str | None] = None
    #: the copies of the data the loader reads, and the loader argument naming the data
    layouts: ClassVar[tuple[Layout, ...]] = ()
    data_key: ClassVar[str] = "annotation_file"
    demo_source_key: ClassVar[str] = "root"
    path_parameters: ClassVar[tuple[str, ...]] = ()
    parameter_choices: ClassVar[dict[str, tuple]] = {}
    #: the data values a report notebook's ``data = {}`` stands for (the evaluation notebooks' defaults), so the
    #: runs it makes equal theirs
    data_defaults: ClassVar[dict] = {}
    ocr_lang: ClassVar[str | None] = None
    #: the format of the task's official output files; the task that defines :meth:`score_official` for it owns it,
    #: and a task naming the same format is scored by that one (MMMU's ``subject-folders``)
    official_output: ClassVar[str | None] = None
    #: with an own :meth:`score_official`: ``(what --responses is, what --answers is)`` for
    #: ``mmbench score-responses --help``
    official_output_help: ClassVar[tuple[str, str] | None] = None
    results_need_questions: ClassVar[bool] = False
    deviations: ClassVar[tuple[str, ...] | list[str]] = ()
    parser_variants: ClassVar[dict] = {}
    #: generation prompt modes (``mmbench_lib.tasks.modes``); every generation task has ``official``
    prompt_modes: ClassVar[dict[str, PromptMode]] = {"official": OFFICIAL}
    #: the module holding the loader, tables and prompt functions (``load``, ...)
    module: ClassVar[ModuleType | None] = None
    #: the official answer parser module (generation tasks)
    parser: ClassVar[ModuleType | None] = None
    #: the reproduction audit's part (readers and rule sets); None: the task is not auditable
    audit: ClassVar[AuditPart | None] = None
    #: the published column holding other papers' text-only scores on this benchmark (notebook 51's reference rows)
    blind_reference: ClassVar[PublishedColumn | None] = None
    #: ranking tasks: the protocols notebook 50 compares (``tasks.recipes.Protocol`` by key; their ``kind`` says which
    #: is the benchmark's official one) and the keys it compares unless told otherwise
    ranking_protocols: ClassVar[dict] = {}
    default_ranking_protocols: ClassVar[tuple[str, ...]] = ()

    # ------------------------------------------------------------------ data
    def load(self, **args) -> list[Item]:
        """The loader itself; by default the module's ``load``."""
        return self.module.load(**args)

    def load_items(self, **args) -> list[Item]:
        """Items from the loader's keyword arguments (paths, split, filters), as recorded in manifests."""
        return self.load(**args)

    def data_parameters(self) -> tuple[str, ...]:
        """The loader's keyword arguments (the signature of the module's ``load``)."""
        return tuple(inspect.signature(self.module.load).parameters)

    def declared_size(self, split: str | None) -> int:
        """The published item count of ``split`` (the default split when none), 0 when the task declares none."""
        return self.split_sizes.get(self.resolve_split(split), 0)

    def manifest_args(self, man: dict) -> dict:
        """``load_items`` arguments recorded in a run's manifest (ranking: ``data``); KeyError naming the field."""
        data = man.get("data")
        if not isinstance(data, dict):
            raise KeyError("data")
        return data

    #: a ranking task's demo set: the ``make_demo`` keys passed to its loader, and the filters passed on as given
    demo_keys: ClassVar[tuple[str, ...]] = ()
    demo_filters: ClassVar[tuple[str, ...]] = ()

    def demo_args(self, paths: dict, **filters) -> dict:
        """``load_items`` arguments for this task's demo set; ``paths``: ``mmbench_lib.demo.make_demo``'s result
        (:attr:`demo_keys` of its entry plus the :attr:`demo_filters` given)."""
        if not self.demo_keys or self.name not in paths:
            raise ValueError(f"no demo set for {self.name!r}")
        d = paths[self.name]
        return {**{k: d[k] for k in self.demo_keys}, **{k: v for k, v in filters.items() if k in self.demo_filters}}

    #: published-table column -> task group (pooled over its questions), for tables whose columns are the task's
    #: groups (MMStar Table 3/5: one column per core capability); empty: the task has no such table
    table_groups: ClassVar[dict[str, str]] = {}

    def table_column(self, table: str, split: str | None) -> str | None:
        """The column of the published table ``table`` (one of :attr:`published_tables`) that a run of ``split``
        fills with its overall accuracy, where the table has one column per setting; None (the default) when the
        task's tables are built column by column from the item rows instead."""
        return None

    def probe(self, location, split: str | None = None) -> str:
        """The key of the layout ``location`` (the ``data_key`` value) is, after a cheap look at its layout,
        columns and first rows; ``DataError`` naming the file, what was expected and what was found."""
        raise NotImplementedError(f"{self.name} declares no probe")

    def unread_paths(self, values: dict) -> tuple[str, ...]:
        """The path parameters the run's selection in ``values`` never reads (not checked to exist): none by default."""
        return ()

    def layout(self, key: str) -> Layout:
        """The declared layout ``key`` (KeyError otherwise)."""
        for x in self.layouts:
            if x.key == key:
                return x
        raise KeyError(key)

    # ------------------------------------------------------------------ checks
    def resolve_split(self, split: str | None) -> str:
        """The split a user's value means (empty: the default; an alias: its split)."""
        return self.split_aliases.get(split, split) if split else self.default_split

    def takes_split(self) -> bool:
        """Whether the loader selects a split (SEED's files are one test set: a ``split`` value is ignored)."""
        return "split" in self.data_parameters()

    def check_split(self, split) -> None:
        """ValueError unless ``split`` is empty, a split or an alias (ignored when the loader takes none)."""
        if split in ("", None) or not self.takes_split():
            return
        if self.split_aliases.get(split, split) not in self.splits:
            known = [*self.splits, *self.split_aliases]
            raise ValueError(f"unknown {self.name} split; use one of {list(self.splits)} (default "
                             f"{self.default_split!r}){did_you_mean(split, known)}")

    def selection_names(self) -> list[str]:
        """Names a user may give to select part of the benchmark (for the did-you-mean)."""
        return [str(v[0]) for v in self.dimensions.values()]

    def check_selection(self, name: str, value) -> None:
        """``subjects`` / ``dimensions`` values: ValueError naming the first that this task does not know.
        A parameter this task does not select by is ignored (notebooks carry both)."""

    # ------------------------------------------------------------------ generation protocol
    def prompt(self, item: Item, mode: str = "official") -> str:
        raise NotImplementedError(f"{self.name} is a {self.protocol} task: no generation prompt")

    def prompt_mode(self, key: str | None) -> PromptMode:
        """The mode named ``key`` (empty: official); ValueError with one line naming the modes this task has."""
        key = key or "official"
        if key not in self.prompt_modes:
            raise ValueError(f"{self.title or self.name} has no prompt mode {key!r}; use one of "
                             f"{list(self.prompt_modes)}{did_you_mean(key, self.prompt_modes)}")
        return self.prompt_modes[key]

    def resolve_mode(self, split: str | None, mode: str | None) -> tuple[str | None, str]:
        """``(split, mode)`` as a run records them (checked; by default unchanged)."""
        return split, self.prompt_mode(mode).key

    def parser_input(self, response, mode: str | None) -> tuple[str, str | None]:
        """``(text the official parser reads, the answer line found or None)`` of a stored response under
        ``mode``: the response itself, or with an answer-line mode the text of its last ``Answer:`` line
        when it has one (``modes.answer_line``)."""
        if not self.prompt_mode(mode).answer_line:
            return response, None
        line = answer_line(response)
        return (response if line is None else line), line

    def image_placeholders(self, item: Item) -> list[tuple[int, str, str]]:
        return []

    def answer_kind(self, item: Item) -> str:
        return item.question_type

    def baseline_choices(self, item: Item) -> list[str]:
        return item.letters

    def baseline_answer(self, item: Item, value: str) -> str:
        return value

    def write_official(self, items: list[Item], stored: dict, root):
        raise NotImplementedError(f"{self.name} writes no official response files")

    def write_submission(self, items: list[Item], stored: dict, rows: list[dict], out):
        raise NotImplementedError(f"{self.name} has no submission format")

    def score_official(self, responses, answers=None, questions=None, **kw):
        """``(rows, summary)`` of official response files with the official scorer (rows carry ``parsed_pred``,
        ``correct``, ``fallback``, ``mode``; the summary ``overall`` and ``official``). A task overrides it for its
        format; by default the task owning the same ``official_output`` (:meth:`format_owner`) scores them."""
        owner = self.format_owner()
        if owner is None:
            raise NotImplementedError(f"{self.name} has no official scorer")
        return owner.score_official(responses, answers, questions, **kw)

    def format_owner(self) -> Task | None:
        """The task whose own :meth:`score_official` reads this task's official files: itself when it defines one,
        else the registered task that does for the same ``official_output``; None when none does."""
        if type(self).score_official is not Task.score_official:
            return self
        return next((t for t in all_tasks() if self.official_output and t.official_output == self.official_output
                     and type(t).score_official is not Task.score_official), None)

    def fallback_wins(self, row: dict, options: tuple) -> tuple:
        raise NotImplementedError(f"{self.name} has no random fallback")

    # ------------------------------------------------------------------ contract check
    def problems(self) -> list[str]:
        """What this task leaves out of the contract (empty when it satisfies it)."""
        out = []
        if not self.name or not self.title:
            out.append("name and title are required")
        if self.protocol not in PROTOCOLS:
            out.append(f"protocol must be one of {PROTOCOLS}, got {self.protocol!r}")
        if self.module is None:
            out.append("module (the loader's module) is required")
        if not self.splits or self.default_split not in self.splits:
            out.append(f"default_split {self.default_split!r} is not in splits {self.splits}")
        if any(v not in self.splits for v in self.split_aliases.values()):
            out.append("a split alias names an unknown split")
        if self.validation_split is not None and self.validation_split not in self.splits:
            out.append(f"validation_split {self.validation_split!r} is not in splits")
        if not self.dimensions or not self.groups:
            out.append("dimensions and groups are required")
        for g, ids in self.groups.items():
            if any(i not in self.dimensions for i in ids):
                out.append(f"group {g!r} names an unknown dimension id")
        if not self.layouts or type(self).probe is Task.probe:
            out.append("layouts (the copies the loader reads) and probe() are required")
        if self.audit is not None:
            out += self.audit.form_problems()
        if (type(self).score_official is not Task.score_official) != bool(self.official_output_help):
            out.append("score_official() and official_output_help go together (a task scoring its own format says "
                       "what --responses and --answers are)")
        if self.blind_reference is not None and self.blind_reference.group and \
                self.blind_reference.group not in self.groups:
            out.append(f"blind_reference group {self.blind_reference.group!r} is not in groups")
        if any(k not in self.ranking_protocols for k in self.default_ranking_protocols):
            out.append("default_ranking_protocols names a protocol not in ranking_protocols")
        if self.group_kind not in ("dimension", "subject", "category"):
            out.append(f"group_kind must be dimension, subject or category, got {self.group_kind!r}")
        if self.protocol == "generation":
            for attr in ("parser", "ocr_lang", "official_output", "hub_id"):
                if not getattr(self, attr):
                    out.append(f"a generation task needs {attr}")
            for meth in ("prompt", "write_official", "write_submission"):
                if getattr(type(self), meth) is getattr(Task, meth):
                    out.append(f"a generation task defines {meth}()")
            if self.prompt_modes.get("official") != OFFICIAL:
                out.append("prompt_modes must hold the unchanged 'official' mode (modes.OFFICIAL)")
            if any(k != m.key for k, m in self.prompt_modes.items()):
                out.append("prompt_modes keys must be their modes' keys")
        return out

    def __repr__(self) -> str:
        return f"<Task {self.name} ({self.protocol})>"


class GenerationTask(Task):
    """A generation benchmark whose module defines the generation hooks (``generation_prompt``,
    ``image_placeholders``, ``answer_kind``, ``baseline_choices``, ``baseline_answer``,
    ``write_official``, ``write_submission``, ``load_split``)."""

    protocol = "generation"
    demo_source_key = "source"
    data_key = "source"
    #: the loader's keyword for the selection the user calls ``subjects``
    subjects_arg: ClassVar[str] = "subjects"

    def load_items(self, **args) -> list[Item]:
        """``source``, ``split`` (aliases accepted), ``subjects`` (this task's selection), ``cache_dir``."""
        args = dict(args)
        if "split" in args:
            args["split"] = self.resolve_split(args["split"])
        if "subjects" in args and self.subjects_arg != "subjects":
            args[self.subjects_arg] = args.pop("subjects")
        return self.load(**args)

    def manifest_args(self, man: dict) -> dict:
        if not man.get("source"):
            raise KeyError("source")
        return {"source": man["source"], "split": man.get("split") or self.default_split,
                "subjects": man.get("subjects")}

    def demo_args(self, paths: dict, **filters) -> dict:
        d = paths[self.name]
        return {"source": d[self.demo_source_key], "split": filters.get("split") or self.default_split,
                "subjects": filters.get("subjects")}

    def check_selection(self, name: str, value) -> None:
        if name != "subjects" or value in ("all", None, [], ()):
            return
        for s in [value] if isinstance(value, str) else value:
            try:
                self.resolve_subject(s)
            except (ValueError, AttributeError, TypeError):
                known = self.selection_names()
                hint = did_you_mean(s, known) or f"; known: {known[:8]} ... (mmbench list benchmarks)"
                raise ValueError(f"unknown {self.title} {self.group_kind} {s!r}{hint}") from None

    def resolve_subject(self, name: str) -> str:
        raise NotImplementedError

    def prompt(self, item: Item, mode: str = "official") -> str:
        """The prompt of ``item`` under ``mode`` (the module's ``generation_prompt(item)``, or
        ``generation_prompt(item, "cot")`` for a mode with the CoT prompt)."""
        style = self.prompt_mode(mode).prompt
        return self.module.generation_prompt(item) if style == "official" else self.module.generation_prompt(item, style)

    def image_placeholders(self, item: Item) -> list[tuple[int, str, str]]:
        return self.module.image_placeholders(item)

    def answer_kind(self, item: Item) -> str:
        return self.module.answer_kind(item)

    def baseline_choices(self, item: Item) -> list[str]:
        return self.module.baseline_choices(item)

    def baseline_answer(self, item: Item, value: str) -> str:
        return self.module.baseline_answer(item, value)

    def write_official(self, items, stored, root):
        return self.module.write_official(items, stored, root)

    def write_submission(self, items, stored, rows, out):
        return self.module.write_submission(items, stored, rows, out)


# ---------------------------------------------------------------------------------------------- registry

_REGISTRY: dict[str, Task] = {}
_ALIASES: dict[str, str] = {}
_DISCOVERED = False


def register_task(task: Task | type[Task]) -> Task | type[Task]:
    """Register a task (a class is instantiated once); usable as a class decorator. A name or
    alias taken by another task is an error, as is a task that does not satisfy the contract."""
    obj = task() if isinstance(task, type) else task
    bad = obj.problems()
    if bad:
        raise TypeError(f"task {obj.name or type(obj).__name__!r} does not satisfy the contract: {'; '.join(bad)}")
    for key in (obj.name, *obj.aliases):
        owner = _ALIASES.get(key)
        if owner is not None and owner != obj.name:
            raise ValueError(f"task name {key!r} is already taken by {owner!r}")
    _REGISTRY[obj.name] = obj
    for key in (obj.name, *obj.aliases):
        _ALIASES[key] = obj.name
    return task


def _discover() -> None:
    """Import every module of this package once: each benchmark module registers its task."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    pkg = importlib.import_module(__name__.rpartition(".")[0])
    for m in pkgutil.iter_modules(pkg.__path__):
        if not m.name.startswith("_") and m.name != "base":
            importlib.import_module(f"{pkg.__name__}.{m.name}")


def did_you_mean(value, known) -> str:
    close = difflib.get_close_matches(str(value), [str(k) for k in known], n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def task_names(aliases: bool = False, protocol: str | None = None) -> list[str]:
    """Registered names in alphabetical order (each followed by its aliases when asked), of one protocol when given."""
    _discover()
    out = []
    for name, t in sorted(_REGISTRY.items()):
        if protocol is None or t.protocol == protocol:
            out.append(name)
            if aliases:
                out.extend(t.aliases)
    return out


def all_tasks(protocol: str | None = None) -> list[Task]:
    """Registered tasks (of one protocol when given) in their display ``order``."""
    return sorted((_REGISTRY[n] for n in task_names(protocol=protocol)), key=lambda t: (t.order, t.name))


def path_parameters() -> list[str]:
    """Every registered task's ``path_parameters``, each once, in registration (alphabetical) order."""
    return list(dict.fromkeys(p for t in all_tasks() for p in t.path_parameters))


def is_task(name) -> bool:
    _discover()
    return isinstance(name, str) and name in _ALIASES


def canonical_name(name: str) -> str:
    """The registered name for a name or alias (``seed1`` -> ``seed``); an unknown name is returned as is."""
    _discover()
    return _ALIASES.get(name, name) if isinstance(name, str) else name


def get_task(name: str) -> Task:
    """The task registered under ``name`` (or an alias); :class:`UnknownTask` with one line otherwise."""
    _discover()
    if isinstance(name, Task):
        return name
    try:
        return _REGISTRY[_ALIASES[name]]
    except (KeyError, TypeError):
        known = task_names(aliases=True)
        raise UnknownTask(f"unknown benchmark {name!r}{did_you_mean(name, known)} (known: {', '.join(known)})") from None


def load_items(benchmark: str, args: dict) -> list[Item]:
    """The one way items are loaded: ``get_task(benchmark).load_items(**args)``."""
    return get_task(benchmark).load_items(**args)

