"""Pytrees: nested containers (tuples, lists, dicts, namedtuples, None and registered
classes) whose leaves are arrays.  Transforms flatten their arguments and results with these.

>>> from functrans.tree_util import tree_flatten, tree_unflatten
>>> leaves, treedef = tree_flatten({"b": (1, 2), "a": [3, None]})
>>> leaves
[3, 1, 2]
>>> tree_unflatten(treedef, [30, 10, 20])
{'a': [30, None], 'b': (10, 20)}
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterable, NamedTuple

__all__ = [
    "PyTreeDef", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_map",
    "tree_leaves", "tree_structure", "treedef_is_leaf", "tree_all",
]


class _NodeType(NamedTuple):
    to_iterable: Callable[[Any], tuple[Iterable, Hashable]]
    from_iterable: Callable[[Hashable, Iterable], Any]


_registry: dict[type, _NodeType] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable
                         ) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x) -> (children, aux_data)``: the children (an iterable) and hashable
    static data; ``unflatten_func(aux_data, children) -> x`` rebuilds the node.
    """
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func)


register_pytree_node(tuple, lambda t: (t, None), lambda _, xs: tuple(xs))
register_pytree_node(list, lambda t: (t, None), lambda _, xs: list(xs))
register_pytree_node(
    dict, lambda d: (tuple(d[k] for k in sorted(d)), tuple(sorted(d))),
    lambda keys, xs: dict(zip(keys, xs)))
register_pytree_node(
    OrderedDict, lambda d: (tuple(d.values()), tuple(d)),
    lambda keys, xs: OrderedDict(zip(keys, xs)))
register_pytree_node(type(None), lambda _: ((), None), lambda _, __: None)


def _node_type(x):
    t = type(x)
    node = _registry.get(t)
    if node is None and isinstance(x, tuple) and hasattr(t, "_fields"):
        return t, _NodeType(lambda nt: (tuple(nt), None), lambda _, xs, t=t: t(*xs))
    return t, node


class PyTreeDef:
    """The structure of a pytree: node types, static data and the positions of leaves."""

    __slots__ = ("node_type", "node_data", "children", "num_leaves", "_flat")

    def __init__(self, node_type, node_data, children: tuple):
        self.node_type = node_type
        self.node_data = node_data
        self.children = children
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children)
        self._flat: tuple | None = None

    def _preorder(self) -> list[PyTreeDef]:
        # Every walk over a structure is iterative: pytrees may nest 100,000 levels deep.
        order, stack = [], [self]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(reversed(node.children))
        return order

    @property
    def num_nodes(self) -> int:
        return len(self._preorder())

    def _key(self) -> tuple:
        """The structure as one flat tuple (pre-order), so comparing and hashing a deep
        structure needs no recursion."""
        if self._flat is None:
            self._flat = tuple((n.node_type, n.node_data, len(n.children))
                               for n in self._preorder())
        return self._flat

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and (self is other or self._key() == other._key())

    def __hash__(self):
        return hash(self._key())

    def unflatten(self, leaves: Iterable) -> Any:
        return tree_unflatten(self, leaves)

    def __repr__(self):
        return f"PyTreeDef({self._pp()})"

    def _pp(self) -> str:
        text: dict[int, str] = {}
        for node in reversed(self._preorder()):  # children before their parents
            text[id(node)] = node._pp_node([text[id(c)] for c in node.children])
        return text[id(self)]

    def _pp_node(self, parts: list[str]) -> str:
        if self.node_type is None:
            return "*"
        inner = ", ".join(parts)
        if self.node_type is tuple:
            return f"({inner}{',' if len(parts) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.node_data, parts)) + "}"
        if self.node_type is type(None):
            return "None"
        return f"{self.node_type.__name__}({inner})"


_LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """The leaves of ``tree`` (left to right; dict keys sorted) and its structure."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(tree, leaves: list, is_leaf) -> PyTreeDef:
    # An explicit stack of open nodes: [node type, data, iterator over children, their defs].
    stack: list = []
    value = tree
    while True:
        done = None
        node = None
        if is_leaf is None or not is_leaf(value):
            node_type, node = _node_type(value)
        if node is None:
            leaves.append(value)
            done = _LEAF
        else:
            children, data = node.to_iterable(value)
            stack.append((node_type, data, iter(children), []))
        while True:  # close the nodes whose children are all done
            if done is not None:
                if not stack:
                    return done
                stack[-1][3].append(done)
                done = None
            node_type, data, children, defs = stack[-1]
            value = next(children, _sentinel)
            if value is not _sentinel:
                break
            stack.pop()
            done = PyTreeDef(node_type, data, tuple(defs))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """Rebuild a pytree of structure ``treedef`` from its leaves."""
    leaves_iter = iter(leaves)
    tree = _unflatten(treedef, leaves_iter)
    if next(leaves_iter, _sentinel) is not _sentinel:
        raise ValueError(f"tree_unflatten: too many leaves for {treedef}")
    return tree


_sentinel = object()


def _unflatten(treedef: PyTreeDef, leaves) -> Any:
    stack: list = []  # open nodes: (treedef, iterator over child defs, rebuilt children)
    current = treedef
    while True:
        if current.node_type is None:
            done = next(leaves, _sentinel)
            if done is _sentinel:
                raise ValueError("tree_unflatten: too few leaves for the tree structure")
        else:
            stack.append((current, iter(current.children), []))
            done = _sentinel
        while True:
            if done is not _sentinel:
                if not stack:
                    return done
                stack[-1][2].append(done)
                done = _sentinel
            node_def, child_defs, values = stack[-1]
            current = next(child_defs, None)  # type: ignore[assignment]  # None: node done
            if current is not None:
                break
            stack.pop()
            node = _registry.get(node_def.node_type) or _node_type_for_namedtuple(
                node_def.node_type)
            done = node.from_iterable(node_def.node_data, values)


def _node_type_for_namedtuple(t: type) -> _NodeType:
    return _NodeType(lambda nt: (tuple(nt), None), lambda _, xs: t(*xs))


def tree_leaves(tree: Any, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.node_type is None


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf=None) -> Any:
    """Apply ``f`` to the leaves of ``tree`` (and the matching subtrees of ``rest``, each of
    which has ``tree``'s structure or has it as a prefix, as in JAX).

    >>> tree_map(lambda x, y: x + y, (1, {"a": 2}), (10, {"a": 20}))
    (11, {'a': 22})
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        try:
            others.append(flatten_up_to(treedef, r))
        except ValueError as e:
            raise ValueError(f"tree_map: tree structures differ: {treedef} is not a prefix of "
                             f"{tree_structure(r)} ({e})") from None
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def tree_all(tree: Any) -> bool:
    return all(tree_leaves(tree))


def flatten_up_to(prefix: PyTreeDef, tree: Any) -> list:
    """Flatten ``tree`` down to the leaves of ``prefix`` (a structure that is a prefix of
    ``tree``'s), returning one subtree per prefix leaf; ValueError if it is not a prefix."""
    out: list = []
    _flatten_up_to(prefix, tree, out)
    return out


def _flatten_up_to(prefix: PyTreeDef, tree, out: list) -> None:
    stack = [(prefix, tree)]  # iterative: see PyTreeDef._preorder
    while stack:
        prefix, tree = stack.pop()
        if prefix.node_type is None:
            out.append(tree)
            continue
        node_type, node = _node_type(tree)
        if node_type is not prefix.node_type:
            raise ValueError(f"expected a {prefix.node_type.__name__}, got "
                             f"{type(tree).__name__}")
        children, data = node.to_iterable(tree)
        children = tuple(children)
        if data != prefix.node_data or len(children) != len(prefix.children):
            raise ValueError(f"structure {prefix} does not match {tree_structure(tree)}")
        stack.extend(reversed(list(zip(prefix.children, children))))


def __dir__() -> list[str]:
    return sorted(__all__)
