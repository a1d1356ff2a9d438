"""The one rule for a yes/no value, wherever it comes from (YAML, JSON, a ``-p`` string, a Python value).

``true``/``false``, ``yes``/``no``, ``1``/``0`` (any case, surrounding spaces ignored; the numbers also as ints)
and Python's ``True``/``False``. Anything else (``"maybe"``, ``2``, ``1.0``, ``None``, ``"on"``) is refused:
:func:`parse_bool` raises ``ValueError`` with a message the caller prefixes with the field's name
(``<part>.<field>: ...``, ``run.retry_failed: ...``). The run spec (``pipeline.config``) parses every boolean
field with it once; code after it reads the parsed value, never ``is True``.
"""
from __future__ import annotations

TRUE = ("true", "yes", "1")
FALSE = ("false", "no", "0")


def parse_bool(value) -> bool:
    """``value`` as a bool by the module's rule, else ``ValueError``.

    >>> parse_bool("Yes"), parse_bool(0), parse_bool(" false ")
    (True, False, False)
    >>> parse_bool("maybe")
    Traceback (most recent call last):
    ValueError: expected bool (true/false, yes/no, 1/0), got 'maybe'
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE + FALSE:
        return value.strip().lower() in TRUE
    raise ValueError(f"expected bool (true/false, yes/no, 1/0), got {value!r}")


def is_bool(value) -> bool:
    """Whether :func:`parse_bool` accepts ``value``."""
    try:
        parse_bool(value)
    except ValueError:
        return False
    return True
