"""Argument handling shared by the transforms (``api``), ``intermediates``, ``gradcheck``
and ``testing``: which positional arguments a transform differentiates, a function of
those alone with the others fixed, and the names of a function's positional parameters.

>>> from functrans.api_util import argnums_tuple, partial_over
>>> argnums_tuple(-1, 3, "grad")
(2,)
>>> partial_over(lambda x, y, z: (x, y, z), (1, 2, 3), (0, 2))(10, 30)
(10, 2, 30)
"""
from __future__ import annotations

import inspect
import weakref
from typing import Callable, Sequence

import numpy as np

__all__ = ["argnums_tuple", "partial_over", "positional_names", "argnums_with_names"]


def argnums_tuple(argnums: int | Sequence[int], nargs: int, name: str) -> tuple[int, ...]:
    """``argnums`` (an int or a sequence of ints, negative ones counting from the end) as a
    tuple of non-negative positions among ``nargs`` positional arguments; a ValueError
    naming the transform ``name`` when one is out of range or two name the same argument."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, (int, np.integer)) or not -nargs <= i < nargs:
            raise ValueError(f"{name}: argnums {argnums!r} is out of range for a function "
                             f"called with {nargs} positional argument(s)")
    positions = tuple(int(i) % nargs for i in nums)
    if len(set(positions)) != len(positions):
        raise ValueError(f"{name}: argnums {argnums!r} names the same positional argument "
                         f"more than once (as positions {positions}); list each argument once")
    return positions


def partial_over(fun: Callable, args: Sequence, argnums: Sequence[int]) -> Callable:
    """``fun`` as a function of ``args[argnums]`` alone, the other arguments fixed."""
    def partial_fun(*dyn_args):
        full = list(args)
        for i, x in zip(argnums, dyn_args):
            full[i] = x
        return fun(*full)
    return partial_fun


#: function -> the names of its positional parameters (inspect.signature is slow)
_POSITIONAL_NAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def positional_names(fun: Callable) -> list[str]:
    """The names of ``fun``'s positional parameters, in order (empty when Python cannot
    tell, as for some builtins).

    >>> positional_names(lambda x, y=1, *args, z: None)
    ['x', 'y']
    """
    try:
        return list(_POSITIONAL_NAMES[fun])
    except (KeyError, TypeError):  # TypeError: not weakly referenceable or not hashable
        pass
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in params if p.kind in kinds]
    try:
        _POSITIONAL_NAMES[fun] = names
    except TypeError:
        pass
    return list(names)


def argnums_with_names(fun: Callable, nums: Sequence[int], names: str | Sequence[str],
                       what: str, argument: str) -> tuple[int, ...]:
    """``nums`` with the positions of the positional parameters ``names`` names, sorted
    (``argument`` is the keyword that named them, e.g. ``static_argnames``, in the error
    ``what`` raises for a name that is not a positional parameter of ``fun``).

    >>> argnums_with_names(lambda x, n, k: None, (0,), "k", "checkpoint", "static_argnames")
    (0, 2)
    """
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        return tuple(nums)
    positional = positional_names(fun)
    unknown = [n for n in names if n not in positional]
    if unknown:
        label = getattr(fun, "__name__", type(fun).__name__)
        raise ValueError(f"{what}: {argument} {unknown} are not positional parameters of "
                         f"{label}, whose are {positional}")
    return tuple(sorted(set(nums) | {positional.index(n) for n in names}))

