"""Model families by spec prefix, in the manner of lm-evaluation-harness ``lm_eval/api/registry.py``.

A family registers its loader once::

    @register_model("causal")
    def load_causal(target, *, placement, dtype, scorer, revision, trust_remote_code, append_eos): ...

``load_adapter("causal:<id>")`` then finds it by the spec's prefix (the part before ``:``; a spec
without ``:`` is its own prefix, e.g. ``smollm2``, ``tiny-llava``). Loaders import torch /
transformers inside, so registering a family costs nothing until it is used.

Models outside the library register the same way from a plugin module named in ``$MMBENCH_PLUGINS``
(:func:`load_plugins`; the tests' tiny models: ``tests.tiny_models``). A new transformers family is a
record in ``family_records`` instead (docs/adding_a_family.md).
"""
from __future__ import annotations

import importlib
import os

from collections.abc import Callable
from dataclasses import dataclass

from mmbench_lib.core import manifest


@dataclass(frozen=True)
class Family:
    prefix: str
    loader: Callable
    endpoint: bool  # takes endpoint options (base_url, api_key_env, ...) instead of the local-model ones
    needs_target: bool  # the spec must name something after the ":" (a hub id, a served model)
    can_rank: bool = True  # gives log-likelihoods of given continuations (the ranking protocol needs them)
    settings: tuple = ()  # an endpoint family's local settings from load_adapter (dtype, revision, ...)
    served_name: bool = False  # the target is a name the server knows, never a local path (openai:<name>)
    can_generate: bool = True  # writes text (the generation protocol and the generated-letter recipes need it)


MODEL_REGISTRY: dict[str, Family] = {}


def register_model(*prefixes: str, endpoint: bool = False, needs_target: bool = False, can_rank: bool = True,
                   settings: tuple = (), served_name: bool = False, can_generate: bool = True):
    """Decorator registering ``loader(target, **options)`` under each of ``prefixes``. ``can_rank=False``:
    its adapters cannot score given continuations (a chat endpoint without prompt log-probabilities),
    so ranking recipes refuse it before the run (:func:`rank_problem`; on a declared vLLM server too: that route
    takes no images). ``settings``: an endpoint
    family's local settings from ``load_adapter`` (dtype, revision, ...). ``served_name``: the target is sent to
    a server as given and never read as a path. ``can_generate=False``: it writes no text (the Random Choice
    baseline), so generation is refused before the run (:func:`generate_problem`)."""
    def decorate(loader):
        for p in prefixes:
            if p in MODEL_REGISTRY and MODEL_REGISTRY[p].loader is not loader:
                raise ValueError(f"model prefix {p!r} is already registered by {MODEL_REGISTRY[p].loader.__qualname__}")
            MODEL_REGISTRY[p] = Family(p, loader, endpoint, needs_target, can_rank, tuple(settings), served_name,
                                       can_generate)
        return loader
    return decorate


def split_spec(spec: str) -> tuple[str, str]:
    """``"causal:org/model"`` -> ``("causal", "org/model")``; ``"smollm2"`` -> ``("smollm2", "")``."""
    prefix, _, target = spec.partition(":")
    return prefix, target


def check_spec(spec: str) -> Family:
    """The registered family of ``spec`` (nothing is loaded); ``ValueError`` for an unknown one."""
    prefix, target = split_spec(spec)
    family = MODEL_REGISTRY.get(prefix)
    if family is None:
        raise ValueError(f"unknown model spec {spec!r}; use one of " + ", ".join(
            f"{p}:<id>" if f.needs_target else p for p, f in sorted(MODEL_REGISTRY.items())))
    if family.needs_target and not target:
        raise ValueError(f"model spec {spec!r} needs a name after the colon, e.g. {prefix}:<hub id or path>")
    return family


def is_served_name(prefix: str) -> bool:
    """Whether a spec of ``prefix`` names its model on a server (``openai:<served model name>``): never a path."""
    family = MODEL_REGISTRY.get(prefix)
    return bool(family and family.served_name)


def rank_problem(spec: str, endpoint: dict | None = None) -> str | None:
    """Why ``spec`` cannot rank choices by log-likelihood (the SEED ranking recipes), or ``None`` if it can
    (an unknown spec is :func:`check_spec`'s to refuse). An ``openai:`` endpoint declared as a vLLM server
    (``endpoint={"server": "vllm"}``) has prompt log-probabilities but no route for the images it sends: refused too."""
    family = MODEL_REGISTRY.get(split_spec(spec)[0])
    if family is None or family.can_rank:
        return None
    if (endpoint or {}).get("server") == "vllm":  # prompt log-probabilities, but of token ids: no image goes in
        return (f"{spec!r} on a vLLM server ranks through /v1/completions, which takes token ids and no images, and "
                f"the endpoint sends every item's images: each item of an image or video benchmark would fail; use a "
                f"generated-letter recipe (recipe lmms-eval-gen or vlmevalkit-gen) on this endpoint, or a local model")
    return (f"{spec!r} cannot rank choices: its endpoint returns no log-probabilities of given answers; use a "
            f"generated-letter recipe (recipe lmms-eval-gen or vlmevalkit-gen), a local model, or vllm:<model>")


def generate_problem(spec: str) -> str | None:
    """Why ``spec`` cannot generate text (a generation benchmark, a generated-letter recipe), or ``None``."""
    family = MODEL_REGISTRY.get(split_spec(spec)[0])
    if family is None or family.can_generate:
        return None
    return f"{spec!r} writes no text (it only ranks given answers)"


#: one line per prefix for ``mmbench list models`` where a loader serves several prefixes
DESCRIPTIONS: dict[str, str] = {}


def describe_model(prefix: str) -> str:
    """One line about a registered prefix: ``DESCRIPTIONS``, else the first line of its loader's docstring."""
    if prefix in DESCRIPTIONS:
        return DESCRIPTIONS[prefix]
    doc = (MODEL_REGISTRY[prefix].loader.__doc__ or "").strip().splitlines()
    line = doc[0] if doc else ""
    if line.startswith("``") and "``: " in line:  # "``random`` or ``random:<seed>``: the ..." -> "the ..."
        line = line.rpartition("``: ")[2]
    return line.replace("``", "").rstrip(".")


def spec_usage(prefix: str) -> str:
    """How a spec of ``prefix`` is written: ``vlm:<hub id or path>``, ``openai:<served model name>``, ``smollm2``."""
    family = MODEL_REGISTRY[prefix]
    if family.endpoint:
        return f"{prefix}:<served model name>"
    if family.needs_target:
        return f"{prefix}:<hub id or path>"
    return f"{prefix}[:<seed>]" if prefix == "random" else prefix


#: environment variable naming plugin modules (comma-separated) that register more model specs
PLUGINS_ENV = manifest.PLUGINS_ENV


class PluginError(ImportError, ValueError):
    """A model plugin that cannot be imported (missing, a syntax error, a duplicate prefix, any error at import)."""


def load_plugins(value: str | None = None) -> list[str]:
    """Import each module named in ``$MMBENCH_PLUGINS`` (or ``value``), e.g. ``tests.tiny_models``; its
    ``@register_model`` loaders join the registry. A plugin is code that runs: its top-level code runs in every
    command and notebook kernel (they inherit the variable). A module that cannot be imported (missing, a syntax
    error, a prefix registered twice, anything it raises) is a one-line ``PluginError`` naming it."""
    names = [n.strip() for n in (os.environ.get(PLUGINS_ENV, "") if value is None else value).split(",") if n.strip()]
    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            raise PluginError(f"{PLUGINS_ENV}: cannot import model plugin {name!r}: not found ({e}); fix or unset "
                              f"{PLUGINS_ENV}") from e
        except SyntaxError as e:
            raise PluginError(f"{PLUGINS_ENV}: cannot import model plugin {name!r}: a syntax error ({e.filename}, line "
                              f"{e.lineno}: {e.msg}); fix or unset {PLUGINS_ENV}") from e
        except Exception as e:  # noqa: BLE001 - a plugin's own code: whatever it raises is one line naming it
            why = " ".join(str(e).split())
            raise PluginError(f"{PLUGINS_ENV}: cannot import model plugin {name!r}: it raised {type(e).__name__}: {why}; "
                              f"fix or unset {PLUGINS_ENV}") from e
    return names


def is_builtin(prefix: str) -> bool:
    """Whether ``prefix`` is registered by the library itself (not by a plugin)."""
    return MODEL_REGISTRY[prefix].loader.__module__.startswith("mmbench_lib.")
