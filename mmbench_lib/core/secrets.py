"""Credentials never reach a run's records.

A key is read from the environment at request time (``api_key_env`` names the variable); it is never a
parameter. ``credential(value)`` finds, anywhere in a parameter value (nested mappings and lists), what looks
like one, and says where and what, never the value:

- a mapping key named like a credential (``api_key``, ``token``, ``authorization``, ``password``, ``secret``, ...:
  headers, ``extra_body``, engine options);
- a URL with userinfo (``http://user:sk-...@host/v1``, ``http://TOKEN@host``);
- a command-line flag that carries one (``--api-key sk-...``, ``--token=...`` in ``server_args``);
- a string shaped like a known key (``sk-...``, ``hf_...``, ``ghp_...``, ``AKIA...``, ``Bearer ...``);
- an ``api_key_env`` that is not an environment variable's name (a key given in its place).

``check_parameters(values, where)`` raises a one-line ``ValueError`` naming the parameter; the runner calls it
before any check that could echo a value, and ``pipeline.config.ModelSpec`` on its engine options.
"""
from __future__ import annotations

import re

#: mapping keys whose value is a credential (case-insensitive, ``-``/``_`` alike)
SECRET_NAMES = re.compile(r"(?i)^(x[-_])?(api[-_]?key|access[-_]?token|auth[-_]?token|token|hf[-_]?token|secret|"
                          r"client[-_]?secret|password|passwd|authorization|proxy[-_]authorization|bearer|"
                          r"openai[-_]api[-_]key|vllm[-_]api[-_]key)$")
#: command-line flags whose argument is a credential (``--api-key KEY`` or ``--api-key=KEY``)
SECRET_FLAGS = re.compile(r"(?i)^--?(api[-_]key|token|hf[-_]token|auth[-_]token|access[-_]token|password|secret)(=.*)?$")
#: strings shaped like a key, and URLs carrying userinfo
SECRET_VALUES = (
    ("a URL with credentials (user:password@ or token@)", re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^/?#\s@]+@")),
    ("an API key (sk-...)", re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{8,}")),
    ("a Hugging Face token (hf_...)", re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{16,}")),
    ("a GitHub token", re.compile(r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{16,}")),
    ("an AWS key (AKIA...)", re.compile(r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![A-Za-z0-9])")),
    ("a bearer token", re.compile(r"(?i)\bbearer\s+[^\s\"']{8,}")),
)
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ADVICE = ("keys are read from the environment: export the key and name its variable with api_key_env "
          "(a vLLM server started by vllm: reads VLLM_API_KEY); nothing was run or written")


def _value_kind(text: str) -> str | None:
    return next((kind for kind, pattern in SECRET_VALUES if pattern.search(text)), None)


def credential(value, where: str) -> str | None:
    """``"<where>: <what it holds>"`` for the first credential found in ``value`` (see module doc), else ``None``."""
    if isinstance(value, dict):
        for k, v in value.items():
            kind = _value_kind(k) if isinstance(k, str) else None
            if kind:  # never named in the message: the name is the key (``{api_key:sk-...}`` read as one string)
                return f"{where or 'a parameter name'}: a name holding {kind}"
            inner = f"{where}.{k}" if where else str(k)
            if isinstance(k, str) and SECRET_NAMES.match(k) and v not in (None, "", [], {}):
                return f"{inner}: a credential given as a value"
            if k == "api_key_env" and isinstance(v, str) and v and not ENV_NAME.match(v):
                return f"{inner}: not an environment variable's name (the key itself?)"
            found = credential(v, inner)
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            if isinstance(v, str) and SECRET_FLAGS.match(v):
                given = "=" in v or (i + 1 < len(value) and not str(value[i + 1]).startswith("-"))
                if given:
                    return f"{where}[{i}]: {v.split('=')[0]} passes a credential on the command line"
            found = credential(v, f"{where}[{i}]")
            if found:
                return found
        return None
    if isinstance(value, str):
        kind = _value_kind(value)
        return f"{where}: {kind}" if kind else None
    return None


def check_parameters(values: dict, where: str = "") -> None:
    """A one-line ``ValueError`` naming the first parameter of ``values`` that holds a credential (never its
    value); ``where`` prefixes the names (``model.engine_options``)."""
    found = credential(values, where)
    if found:
        raise ValueError(f"{found}; {ADVICE}")


def redact(text: str) -> str:
    """``text`` with every credential-shaped string (``SECRET_VALUES``) replaced by ``[REDACTED]``."""
    text = re.sub(r"(?i)(\b[a-z][a-z0-9+.\-]*://)[^/?#\s@]+@", r"\1[REDACTED]@", text)
    for _, pattern in SECRET_VALUES[1:]:
        text = pattern.sub("[REDACTED]", text)
    return text
