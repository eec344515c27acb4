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
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterable, NamedTuple, Sequence, TypeVar

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
    "PyTreeDef", "SequenceKey", "keystr", "register_dataclass", "register_pytree_node",
    "register_pytree_with_keys", "tree_all", "tree_flatten", "tree_flatten_with_path",
    "tree_leaves", "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce",
    "tree_structure", "tree_unflatten", "treedef_is_leaf",
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
