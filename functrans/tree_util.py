"""Pytrees: nested containers (tuples, lists, dicts, namedtuples, None and registered
classes) whose leaves are arrays.  Transforms flatten their arguments and results with these.

>>> from functrans.tree_util import tree_flatten, tree_unflatten
>>> leaves, treedef = tree_flatten({"b": (1, 2), "a": [3, None]})
>>> leaves
[3, 1, 2]
>>> tree_unflatten(treedef, [30, 10, 20])
{'a': [30, None], 'b': (10, 20)}

Key paths say where each leaf sits: a tuple of keys, one per level (``DictKey`` for a dict
entry, ``SequenceKey`` for a tuple or list position, ``GetAttrKey`` for a namedtuple field or
dataclass attribute, ``FlattenedIndexKey`` for a child of a node registered without keys).

>>> [(keystr(path), leaf) for path, leaf in tree_leaves_with_path({"w": [1, 2], "b": 3})]
[("['b']", 3), ("['w'][0]", 1), ("['w'][1]", 2)]
"""
from __future__ import annotations

import dataclasses
import functools
import operator
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterable, NamedTuple, Sequence, TypeVar

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
    "PyTreeDef", "SequenceKey", "all_leaves", "flatten_one_level",
    "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
    "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
    "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
    "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf", "treedef_tuple",
]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The key of an entry of a tuple or list: its position."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """The key of a dict (or OrderedDict) entry."""
    key: Hashable

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The key of a namedtuple field or a registered dataclass attribute."""
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The key of a child of a node registered without keys: its position among the
    children its flatten function returns."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


KeyEntry = Any  # one of the key classes above, or any hashable a user's node returns
KeyPath = tuple  # a tuple of KeyEntry, outermost first


class _NodeType(NamedTuple):
    to_iterable: Callable[[Any], tuple[Iterable, Hashable]]
    from_iterable: Callable[[Hashable, Iterable], Any]
    # x -> (((key, child), ...), aux_data); None: keys are FlattenedIndexKey(position).
    to_keyed: Callable[[Any], tuple[Iterable, Hashable]] | None = None


_registry: dict[type, _NodeType] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable
                         ) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x) -> (children, aux_data)``: the children (an iterable) and hashable
    static data; ``unflatten_func(aux_data, children) -> x`` rebuilds the node.

    >>> class Pair:
    ...     def __init__(self, first, second):
    ...         self.first, self.second = first, second
    ...
    >>> register_pytree_node(Pair, lambda p: ((p.first, p.second), None),
    ...                      lambda aux, children: Pair(*children))
    >>> tree_leaves([Pair(1, 2), 3])
    [1, 2, 3]
    >>> tree_map(lambda x: 10 * x, Pair(1, 2)).second
    20
    """
    _register(nodetype, _NodeType(flatten_func, unflatten_func))


def _register(nodetype: type, node: _NodeType) -> None:
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = node


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable, flatten_func: Callable | None = None
                              ) -> None:
    """Make ``nodetype`` a pytree node whose children have keys in key paths.

    ``flatten_with_keys(x) -> (((key, child), ...), aux_data)``; ``unflatten_func`` as for
    :func:`register_pytree_node`; ``flatten_func`` (optional) is a faster flatten without
    keys.

    >>> class Pair:
    ...     def __init__(self, first, second):
    ...         self.first, self.second = first, second
    ...
    >>> register_pytree_with_keys(
    ...     Pair, lambda p: (((GetAttrKey("first"), p.first), (GetAttrKey("second"), p.second)),
    ...                      None),
    ...     lambda _, children: Pair(*children))
    >>> [keystr(path) for path, _ in tree_leaves_with_path(Pair(1, [2]))]
    ['.first', '.second[0]']
    """
    if flatten_func is None:
        def flatten_func(x):
            keyed, aux = flatten_with_keys(x)
            return tuple(child for _, child in keyed), aux
    _register(nodetype, _NodeType(flatten_func, unflatten_func, flatten_with_keys))


def _require_class(function: str, cls, *methods: str) -> None:
    if not isinstance(cls, type):
        raise TypeError(f"{function}: expects a class (use it as a class decorator), got "
                        f"{cls!r} of type {type(cls).__name__}")
    missing = [m for m in methods if not callable(getattr(cls, m, None))]
    if missing:
        raise AttributeError(
            f"{function}: class {cls.__name__} has no {' or '.join(missing)}; define "
            f"{' and '.join(_CLASS_PROTOCOL[m] for m in methods)}")


_CLASS_PROTOCOL = {
    "tree_flatten": "tree_flatten(self) -> (children, aux_data)",
    "tree_flatten_with_keys":
        "tree_flatten_with_keys(self) -> (((key, child), ...), aux_data)",
    "tree_unflatten": "a classmethod tree_unflatten(cls, aux_data, children)",
}


def register_pytree_node_class(cls: type[T]) -> type[T]:
    """Make ``cls`` a pytree node flattened by its ``tree_flatten`` method and rebuilt by its
    ``tree_unflatten`` classmethod; returns ``cls``, so it works as a class decorator.

    ``x.tree_flatten() -> (children, aux_data)``; ``cls.tree_unflatten(aux_data, children)
    -> x``.  Keys in key paths are ``FlattenedIndexKey`` (use
    :func:`register_pytree_with_keys_class` for named keys).  Subclasses are not registered
    with it: register each class that is flattened.

    >>> @register_pytree_node_class
    ... class Scaled:
    ...     def __init__(self, value, scale):
    ...         self.value, self.scale = value, scale
    ...     def tree_flatten(self):
    ...         return (self.value,), self.scale   # value is a child, scale static
    ...     @classmethod
    ...     def tree_unflatten(cls, scale, children):
    ...         return cls(children[0], scale)
    ...
    >>> tree_leaves([Scaled(1.0, 2), 3.0])
    [1.0, 3.0]
    >>> tree_map(lambda v: v * 10, Scaled(1.0, 2)).value
    10.0
    """
    _require_class("register_pytree_node_class", cls, "tree_flatten", "tree_unflatten")
    register_pytree_node(cls, operator.methodcaller("tree_flatten"),
                         cls.tree_unflatten)  # type: ignore[attr-defined]
    return cls


def register_pytree_with_keys_class(cls: type[T]) -> type[T]:
    """Make ``cls`` a pytree node whose children have keys: flattened by its
    ``tree_flatten_with_keys`` method (and, if it has one, by its ``tree_flatten`` method
    where no keys are needed), rebuilt by its ``tree_unflatten`` classmethod; returns
    ``cls``, so it works as a class decorator.

    >>> @register_pytree_with_keys_class
    ... class Pair:
    ...     def __init__(self, first, second):
    ...         self.first, self.second = first, second
    ...     def tree_flatten_with_keys(self):
    ...         return (((GetAttrKey("first"), self.first),
    ...                  (GetAttrKey("second"), self.second)), None)
    ...     @classmethod
    ...     def tree_unflatten(cls, aux_data, children):
    ...         return cls(*children)
    ...
    >>> [keystr(path) for path, _ in tree_leaves_with_path(Pair(1, [2]))]
    ['.first', '.second[0]']
    """
    _require_class("register_pytree_with_keys_class", cls, "tree_flatten_with_keys",
                   "tree_unflatten")
    flatten = (operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten")
               else None)
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten,  # type: ignore[attr-defined]
                              flatten)
    return cls


def register_static(cls: type[T]) -> type[T]:
    """Make the instances of ``cls`` pytree nodes without children: each instance is kept
    whole in the tree's structure (so it must be hashable, and ``jit`` specializes on its
    value, as for ``static_argnums``) and has no leaves.  Returns ``cls``, so it works as a
    class decorator.

    >>> import functrans as ft
    >>> @register_static
    ... class Mode(str):
    ...     pass
    ...
    >>> tree_leaves([Mode("add"), 1.0])
    [1.0]
    >>> ft.jit(lambda x, y, mode: x + y if mode == "add" else x - y)(1.0, 2.0, Mode("sub"))
    -1.0
    """
    _require_class("register_static", cls)
    if cls.__hash__ is None:
        raise TypeError(f"register_static: instances of {cls.__name__} are not hashable "
                        "(its __hash__ is None); static data is part of the tree's "
                        "structure, which is hashed: define __hash__ and __eq__")
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x, lambda x: ((), x))
    return cls


def _sequence_keyed(xs):
    return tuple((SequenceKey(i), x) for i, x in enumerate(xs)), None


def _dict_keyed(d):
    keys = tuple(sorted(d))
    return tuple((DictKey(k), d[k]) for k in keys), keys


register_pytree_with_keys(tuple, _sequence_keyed, lambda _, xs: tuple(xs),
                          lambda t: (t, None))
register_pytree_with_keys(list, _sequence_keyed, lambda _, xs: list(xs), lambda t: (t, None))
register_pytree_with_keys(
    dict, _dict_keyed, lambda keys, xs: dict(zip(keys, xs)),
    lambda d: (tuple(d[k] for k in sorted(d)), tuple(sorted(d))))
register_pytree_with_keys(
    OrderedDict, lambda d: (tuple((DictKey(k), v) for k, v in d.items()), tuple(d)),
    lambda keys, xs: OrderedDict(zip(keys, xs)), lambda d: (tuple(d.values()), tuple(d)))
register_pytree_with_keys(type(None), lambda _: ((), None), lambda _, __: None,
                          lambda _: ((), None))


def _node_type(x):
    t = type(x)
    node = _registry.get(t)
    if node is None and isinstance(x, tuple) and hasattr(t, "_fields"):
        return t, _node_type_for_namedtuple(t)
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
    """The leaves of ``tree`` (left to right; dict keys sorted) and its structure.

    >>> tree_flatten({"b": (1, 2), "a": [3]})
    ([3, 1, 2], PyTreeDef({'a': [*], 'b': (*, *)}))
    >>> tree_flatten([1, None])  # None is an empty node, not a leaf
    ([1], PyTreeDef([*, None]))
    """
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
    """Rebuild a pytree of structure ``treedef`` from its leaves.

    >>> leaves, treedef = tree_flatten({"a": 1, "b": (2, 3)})
    >>> tree_unflatten(treedef, [x * 10 for x in leaves])
    {'a': 10, 'b': (20, 30)}
    """
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
    fields = getattr(t, "_fields")
    return _NodeType(lambda nt: (tuple(nt), None), lambda _, xs: t(*xs),
                     lambda nt: (tuple((GetAttrKey(f), x) for f, x in zip(fields, nt)), None))


def tree_leaves(tree: Any, is_leaf=None) -> list:
    """The leaves of ``tree``, left to right (dict keys sorted); ``None`` has none.

    >>> tree_leaves({"b": (1, 2), "a": [3, None]})
    [3, 1, 2]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf=None) -> PyTreeDef:
    """The structure of ``tree``: what :func:`tree_flatten` returns besides the leaves.

    >>> tree_structure({"a": 1.0, "b": [2.0, 3.0]})
    PyTreeDef({'a': *, 'b': [*, *]})
    """
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` is the structure of a single leaf.

    >>> treedef_is_leaf(tree_structure(1.0)), treedef_is_leaf(tree_structure((1.0,)))
    (True, False)
    """
    return treedef.node_type is None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the children of ``treedef``'s root node, left to right (an empty
    list for a leaf or an empty node such as ``None``).

    >>> treedef_children(tree_structure([(1, 2), 3, {"a": 4}]))
    [PyTreeDef((*, *)), PyTreeDef(*), PyTreeDef({'a': *})]
    """
    if not isinstance(treedef, PyTreeDef):
        raise TypeError(f"treedef_children: treedef must be a PyTreeDef (from "
                        f"tree_structure), got {type(treedef).__name__}")
    return list(treedef.children)


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose elements have the structures ``treedefs``.

    >>> treedef_tuple([tree_structure([1, 2]), tree_structure(None)])
    PyTreeDef(([*, *], None))
    >>> _ == tree_structure(([1, 2], None))
    True
    """
    try:
        children = tuple(treedefs)
    except TypeError:
        raise TypeError(f"treedef_tuple: treedefs must be an iterable of PyTreeDefs, got "
                        f"{type(treedefs).__name__}") from None
    for i, child in enumerate(children):
        if not isinstance(child, PyTreeDef):
            raise TypeError(f"treedef_tuple: treedefs[{i}] is {type(child).__name__}, not a "
                            f"PyTreeDef (make one with tree_structure)")
    return PyTreeDef(tuple, None, children)


def is_tree_node(typ: type) -> bool:
    """Whether ``typ`` is a pytree node type: a built-in container (``tuple``, ``list``,
    ``dict``, ``OrderedDict``, ``None``'s type), a namedtuple class or a registered class.
    Subclasses of node types are leaves unless registered themselves.

    >>> is_tree_node(dict), is_tree_node(type(None)), is_tree_node(float)
    (True, True, False)
    """
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node: typ must be a type, got a {type(typ).__name__} "
                        f"instance; for a value x, ask is_tree_node(type(x))")
    return typ in _registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None
               ) -> bool:
    """Whether every element of ``iterable`` is a leaf (``None`` is not: it is an empty
    node); with ``is_leaf``, elements it accepts count as leaves too.

    >>> all_leaves(tree_leaves({"a": [1, 2]})), all_leaves([1, (2,)]), all_leaves([None])
    (True, False, False)
    """
    try:
        items = iter(iterable)
    except TypeError:
        raise TypeError(f"all_leaves: iterable must be iterable (a list of candidate "
                        f"leaves), got {type(iterable).__name__}") from None
    return all((is_leaf is not None and is_leaf(x)) or _node_type(x)[1] is None
               for x in items)


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """The children of the root node of ``tree`` and its static data, as its node type's
    flatten function gives them (children are not flattened further).

    >>> flatten_one_level({"b": [1, 2], "a": 3})
    ((3, [1, 2]), ('a', 'b'))
    """
    node = _node_type(tree)[1]
    if node is None:
        raise ValueError(f"flatten_one_level: can't tree-flatten type {type(tree)}: it is a "
                         "leaf, not a pytree node (see is_tree_node)")
    return node.to_iterable(tree)


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """The ``(key, child)`` pairs of the root node of ``tree`` and its static data
    (``FlattenedIndexKey`` keys for a node registered without keys).

    >>> flatten_one_level_with_keys([1, (2, 3)])
    (((SequenceKey(idx=0), 1), (SequenceKey(idx=1), (2, 3))), None)
    """
    node = _node_type(tree)[1]
    if node is None:
        raise ValueError(f"flatten_one_level_with_keys: can't tree-flatten type "
                         f"{type(tree)}: it is a leaf, not a pytree node (see is_tree_node)")
    return _keyed_children(node, tree)


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


def tree_all(tree: Any, *, is_leaf: Callable | None = None) -> bool:
    """Whether every leaf of ``tree`` is truthy (``True`` for a tree without leaves).

    >>> tree_all([True, {"a": 1}]), tree_all((True, 0))
    (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


class _NoInitializer:
    def __repr__(self):
        return "<no initializer>"


_NO_INITIALIZER = _NoInitializer()


def tree_reduce(function: Callable, tree: Any, initializer: Any = _NO_INITIALIZER,
                is_leaf: Callable | None = None) -> Any:
    """``function`` folded over the leaves of ``tree``, left to right, as ``functools.reduce``.

    >>> tree_reduce(lambda a, b: a + b, {"x": 1, "y": [2, 3]})
    6
    >>> tree_reduce(max, [], initializer=0)
    0
    """
    found = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        if not found:
            raise TypeError("tree_reduce: the tree has no leaves and no initializer was "
                            "given; pass initializer= for trees that may be empty")
        return functools.reduce(function, found)
    return functools.reduce(function, found, initializer)


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: Any = _NO_INITIALIZER,
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """``operation`` (assumed associative) applied over the leaves of ``tree`` as a
    balanced binary tree, as JAX does: the halves of the leaf list are reduced separately
    and then combined, so the depth of nesting is logarithmic.  ``identity`` is returned for
    a tree without leaves (a TypeError without it).

    >>> tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5])
    ((1, 2), (3, (4, 5)))
    >>> tree_reduce_associative(lambda a, b: a + b, {}, identity=0)
    0
    """
    sequence = tree_leaves(tree, is_leaf)
    if not sequence:
        if identity is _NO_INITIALIZER:
            raise TypeError("tree_reduce_associative: the tree has no leaves; pass "
                            "identity= (the value to return for an empty tree)")
        return identity

    def halves(lo: int, hi: int) -> Any:  # recursion depth: log2 of the number of leaves
        if hi - lo == 1:
            return sequence[lo]
        mid = lo + (hi - lo) // 2
        return operation(halves(lo, mid), halves(mid, hi))

    return halves(0, len(sequence))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn a tree of structure ``outer_treedef`` whose subtrees at its leaves all have the
    structure ``inner_treedef`` into a tree of structure ``inner_treedef`` whose subtrees
    have the structure ``outer_treedef``; ``inner_treedef=None`` takes the structure of the
    first inner tree.  A tree that does not have these structures is a ValueError naming
    the first place where it differs.

    >>> outer, inner = tree_structure([0, 0]), tree_structure({"a": 0, "b": 0})
    >>> tree_transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3, "b": 4}])
    {'a': [1, 3], 'b': [2, 4]}
    """
    for arg, value in (("outer_treedef", outer_treedef), ("inner_treedef", inner_treedef)):
        if not isinstance(value, PyTreeDef) and not (arg == "inner_treedef" and value is None):
            raise TypeError(f"tree_transpose: {arg} must be a PyTreeDef (from "
                            f"tree_structure), got {type(value).__name__}")
    try:
        inner_trees = flatten_up_to(outer_treedef, pytree_to_transpose)
    except ValueError as e:
        raise ValueError(f"tree_transpose: pytree_to_transpose does not have the outer "
                         f"structure {outer_treedef} ({e})") from None
    if inner_treedef is None:
        if not inner_trees:
            raise ValueError("tree_transpose: inner_treedef=None needs at least one inner "
                             "tree to take the structure from; pass inner_treedef")
        inner_treedef = tree_structure(inner_trees[0])
    columns = []
    for i, sub in enumerate(inner_trees):
        try:
            columns.append(flatten_up_to(inner_treedef, sub))
        except ValueError as e:
            raise ValueError(f"tree_transpose: inner tree {i} does not have the structure "
                             f"{inner_treedef} ({e})") from None
    if columns:
        rows = [outer_treedef.unflatten(list(row)) for row in zip(*columns)]
    else:  # an outer structure without leaves
        rows = [outer_treedef.unflatten([]) for _ in range(inner_treedef.num_leaves)]
    return inner_treedef.unflatten(rows)


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """A tree of ``full_tree``'s structure in which each leaf of ``prefix_tree`` (a tree
    prefix of ``full_tree``) is repeated over every leaf of the matching subtree.
    ``is_leaf`` decides where ``prefix_tree``'s leaves are; the result has the structure of
    ``full_tree`` flattened without it, as in JAX.

    >>> tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0)))
    (1, {'a': 2, 'b': 2}, (3, 3))
    """
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    full_leaves, full_def = tree_flatten(full_tree)
    try:
        subtrees = flatten_up_to(prefix_def, full_tree)
    except ValueError as e:
        raise ValueError(f"tree_broadcast: prefix_tree (structure {prefix_def}) is not a "
                         f"prefix of full_tree (structure {full_def}): {e}") from None
    leaves = []
    for value, sub in zip(prefix_leaves, subtrees):
        leaves.extend([value] * len(tree_leaves(sub)))
    assert len(leaves) == len(full_leaves)
    return full_def.unflatten(leaves)


def _keyed_children(node: _NodeType, value) -> tuple[tuple, Hashable]:
    if node.to_keyed is not None:
        keyed, data = node.to_keyed(value)
        return tuple(keyed), data
    children, data = node.to_iterable(value)
    return tuple((FlattenedIndexKey(i), c) for i, c in enumerate(children)), data


def tree_flatten_with_path(tree: Any, is_leaf: Callable | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """The ``(key path, leaf)`` pairs of ``tree`` (in :func:`tree_flatten`'s order) and its
    structure.  ``is_leaf(x)``, or ``is_leaf(path, x)`` with ``is_leaf_takes_path=True``,
    stops the walk at subtrees it accepts.

    >>> pairs, treedef = tree_flatten_with_path((1, {"a": 2}))
    >>> pairs
    [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), DictKey(key='a')), 2)]
    >>> treedef
    PyTreeDef((*, {'a': *}))
    """
    pairs: list = []
    # Open nodes: [node type, data, iterator over (key, child), path, child treedefs];
    # iterative like _flatten, so deep trees need no recursion.
    stack: list = []
    value, path = tree, ()
    while True:
        node = None
        stop = is_leaf is not None and (is_leaf(path, value) if is_leaf_takes_path
                                        else is_leaf(value))
        if not stop:
            node_type, node = _node_type(value)
        if node is None:
            pairs.append((path, value))
            done = _LEAF
        else:
            keyed, data = _keyed_children(node, value)
            stack.append((node_type, data, iter(keyed), path, []))
            done = None
        while True:
            if done is not None:
                if not stack:
                    return pairs, done
                stack[-1][4].append(done)
                done = None
            node_type, data, keyed, parent, defs = stack[-1]
            entry = next(keyed, None)
            if entry is not None:
                value, path = entry[1], parent + (entry[0],)
                break
            stack.pop()
            done = PyTreeDef(node_type, data, tuple(defs))


def tree_leaves_with_path(tree: Any, is_leaf: Callable | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """The ``(key path, leaf)`` pairs of ``tree``.

    >>> tree_leaves_with_path([1, None, {"x": 2}])
    [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=2), DictKey(key='x')), 2)]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """``f(path, leaf, *others)`` for each leaf of ``tree`` and the matching subtrees of
    ``rest`` (each with ``tree``'s structure or having it as a prefix).

    >>> tree_map_with_path(lambda p, x: f"{keystr(p)}={x}", {"a": [1, 2]})
    {'a': ["['a'][0]=1", "['a'][1]=2"]}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = []
    for r in rest:
        try:
            others.append(flatten_up_to(treedef, r))
        except ValueError as e:
            raise ValueError(f"tree_map_with_path: tree structures differ: {treedef} is not a "
                             f"prefix of {tree_structure(r)} ({e})") from None
    return tree_unflatten(treedef, [f(path, x, *xs)
                                    for (path, x), *xs in zip(pairs, *others)])


def _simple_key(key) -> str:
    for cls, field in ((SequenceKey, "idx"), (DictKey, "key"), (GetAttrKey, "name"),
                       (FlattenedIndexKey, "key")):
        if type(key) is cls:
            return str(getattr(key, field))
    return str(key)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``"['a'][0].x"``; ``simple=True`` drops brackets, quotes and dots
    and joins the bare keys with ``separator``.

    >>> path = (DictKey("layers"), SequenceKey(0), GetAttrKey("w"))
    >>> keystr(path), keystr(path, simple=True, separator="/")
    ("['layers'][0].w", 'layers/0/w')
    """
    if simple:
        return separator.join(_simple_key(k) for k in keys)
    return separator.join(str(k) for k in keys)


def register_dataclass(nodetype: type[T], data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type[T]:
    """Make a dataclass-like class a pytree node: ``data_fields`` are children (leaves or
    subtrees), ``meta_fields`` static data; returns ``nodetype``, so it works as a decorator.

    For a dataclass both lists may be left out: fields are data unless declared with
    ``field(metadata=dict(static=True))``.  Between them (and ``drop_fields``) the lists must
    name exactly the dataclass's ``__init__`` fields; instances are rebuilt by calling
    ``nodetype(**fields)``.

    >>> from dataclasses import dataclass, field
    >>> @register_dataclass
    ... @dataclass
    ... class Layer:
    ...     w: float
    ...     b: float
    ...     name: str = field(default="dense", metadata=dict(static=True))
    ...
    >>> tree_map(lambda v: v * 10, Layer(1.0, 2.0))
    Layer(w=10.0, b=20.0, name='dense')
    >>> [keystr(p) for p, _ in tree_leaves_with_path(Layer(1.0, 2.0))]
    ['.w', '.b']
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(f"register_dataclass: give both data_fields and meta_fields, or "
                            f"neither (for a dataclass); got data_fields={data_fields!r}, "
                            f"meta_fields={meta_fields!r}")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype!r} is not a dataclass, so "
                            "data_fields and meta_fields must be given")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError(f"register_dataclass: fields {sorted(overlap)} are in both "
                         "data_fields and meta_fields")
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields -= set(drop_fields)
        named = {*data_fields, *meta_fields}
        if named != init_fields:
            raise ValueError(
                f"register_dataclass: data_fields and meta_fields must name exactly the "
                f"__init__ fields of {nodetype.__name__}; missing {sorted(init_fields - named)}"
                f" (list them in drop_fields to leave them out), unexpected "
                f"{sorted(named - init_fields)}")

    def flatten(x):
        return (tuple(getattr(x, n) for n in data_fields),
                tuple(getattr(x, n) for n in meta_fields))

    def flatten_with_keys(x):
        return (tuple((GetAttrKey(n), getattr(x, n)) for n in data_fields),
                tuple(getattr(x, n) for n in meta_fields))

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten, flatten)
    return nodetype


class Partial(functools.partial):
    """``functools.partial`` as a pytree: the bound arguments are children (so arrays in
    them are traced, batched and differentiated), the function is static data.  Useful for
    passing a function with captured arrays into or out of a transformed function.
    A ``Partial`` of a ``Partial`` is merged into one, so the inner arguments stay leaves
    (JAX keeps the inner one whole, as static data).

    >>> import functrans as ft
    >>> scale = Partial(lambda a, x: a * x, 3.0)
    >>> tree_leaves(scale)
    [3.0]
    >>> ft.grad(lambda s: s(2.0))(scale).args
    (2.0,)
    """

    def __new__(cls, func, *args, **kw):
        if isinstance(func, Partial):  # merge, so the inner arguments stay leaves
            args = func.args + args
            kw = {**func.keywords, **kw}
            func = func.func
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))


def flatten_up_to(prefix: PyTreeDef, tree: Any) -> list:
    """Flatten ``tree`` down to the leaves of ``prefix`` (a structure that is a prefix of
    ``tree``'s), returning one subtree per prefix leaf; ValueError if it is not a prefix."""
    out: list = []
    _flatten_up_to(prefix, tree, out)
    return out


def _flatten_up_to(prefix: PyTreeDef, tree, out: list) -> None:
    root = tree
    stack: list[tuple[PyTreeDef, Any, tuple[int, ...]]] = [(prefix, tree, ())]  # iterative
    while stack:
        prefix, tree, where = stack.pop()  # where: child positions from the root
        if prefix.node_type is None:
            out.append(tree)
            continue
        node_type, node = _node_type(tree)
        if node_type is not prefix.node_type:
            raise ValueError(f"{_position(root, where)}: expected a "
                             f"{prefix.node_type.__name__}, got {type(tree).__name__}")
        children, data = node.to_iterable(tree)
        children = tuple(children)
        if len(children) != len(prefix.children):
            raise ValueError(f"{_position(root, where)}: expected a {node_type.__name__} with "
                             f"{len(prefix.children)} children, got {len(children)}")
        if data != prefix.node_data:
            what = "keys" if node_type in (dict, OrderedDict) else "static data"
            raise ValueError(f"{_position(root, where)}: expected a {node_type.__name__} with "
                             f"{what} {prefix.node_data!r}, got {data!r}")
        stack.extend(reversed([(p, c, where + (i,))
                               for i, (p, c) in enumerate(zip(prefix.children, children))]))


def _position(tree, where: tuple[int, ...]) -> str:
    """The key path of the subtree reached from ``tree`` by child positions ``where``."""
    keys = []
    for i in where:
        keyed, _ = _keyed_children(_node_type(tree)[1], tree)
        key, tree = keyed[i]
        keys.append(key)
    return f"at key path {keystr(tuple(keys))}" if keys else "at the root"


def __dir__() -> list[str]:
    return sorted(__all__)
