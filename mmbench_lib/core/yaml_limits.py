"""A YAML loader for parameter files that cannot hang or crash its caller.

``yaml.safe_load`` accepts three things a parameters file never needs and a hostile one uses: aliases
that expand exponentially (a 1 KB "billion laughs" file becomes 10^9 values, and whatever walks
them next hangs), nesting deep enough to exhaust Python's recursion (a list 5,000 deep is a
``RecursionError``), and repeated keys (silently last-wins). :func:`load` refuses each with a
``YamlLimitError`` (a ``yaml.YAMLError``, so callers' one-line YAML messages apply) naming the line:

* more than ``MAX_ALIASES`` aliases, or more than ``MAX_NODES`` values once aliases are expanded;
* nesting deeper than ``MAX_DEPTH``;
* a key given twice in one mapping (merge keys ``<<`` may still be overridden, as YAML defines).
"""
from __future__ import annotations

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

MAX_DEPTH = 50
MAX_ALIASES = 100
MAX_NODES = 100_000


class YamlLimitError(yaml.MarkedYAMLError):
    """A file over one of the loader's limits, or with a repeated key."""


class _Loader(yaml.SafeLoader):
    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise YamlLimitError(problem=f"more than {MAX_ALIASES} aliases", problem_mark=self.peek_event().start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise YamlLimitError(problem=f"nested more than {MAX_DEPTH} deep", problem_mark=self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None:
            _check_size(node)
        return node

    def construct_mapping(self, node, deep=False):
        if isinstance(node, MappingNode):
            seen = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node)
                if isinstance(key, (str, int, float, bool, type(None))):
                    if key in seen:
                        raise YamlLimitError(problem=f"key {key!r} given twice (first on line {seen[key] + 1})",
                                             problem_mark=key_node.start_mark)
                    seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def _check_size(root) -> None:
    """Count the values the document expands to (each alias counted at full size, memoised by node)."""
    sizes: dict[int, int] = {}
    stack = [(root, False)]
    while stack:  # iterative post-order: no recursion however the nodes nest
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = [] if isinstance(node, ScalarNode) else (
            node.value if isinstance(node, SequenceNode) else [n for kv in node.value for n in kv])
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        sizes[id(node)] = 1 + sum(sizes.get(id(c), 1) for c in children)
        if sizes[id(node)] > MAX_NODES:
            raise YamlLimitError(problem=f"expands to more than {MAX_NODES} values (aliases)", problem_mark=node.start_mark)


def load(text: str):
    """``yaml.safe_load(text)`` within the limits above."""
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
