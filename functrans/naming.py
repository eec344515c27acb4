"""Naming functions made by factories: a function built in a closure carries its public
name where Python looks for one (``__name__``, ``__qualname__``, ``__module__`` and the code
object, which argument errors read), so errors name what the user called.

The bottom layer: it imports nothing from functrans, so every layer can use it.
"""
from __future__ import annotations

import inspect
import types

__all__ = ["public", "alias"]


def public(fn, name: str, doc: str | None = None, module: str = "functrans.numpy"):
    """Give a factory-made function its public name everywhere Python looks for one:
    ``__name__``, ``__qualname__``, ``__module__`` and the code object, which argument
    errors read (``sin() takes 1 positional argument ...``, not ``fn() ...``)."""
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    fn.__code__ = _renamed_code(fn.__code__, name)
    if doc is not None:
        fn.__doc__ = doc
    return fn


def alias(fn, name: str):
    """A copy of ``fn`` under another public name (``abs`` for ``absolute``), so that its
    errors and ``help`` name what the user called."""
    copy = types.FunctionType(_renamed_code(fn.__code__, name), fn.__globals__, name,
                              fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__dict__.update(fn.__dict__)
    copy.__doc__ = f"Alias of ``{fn.__name__}``.\n\n{inspect.cleandoc(fn.__doc__ or '')}".rstrip()
    copy.__qualname__ = name
    copy.__module__ = fn.__module__
    return copy


def _renamed_code(code: types.CodeType, name: str) -> types.CodeType:
    if hasattr(code, "co_qualname"):  # Python 3.11+
        return code.replace(co_name=name, co_qualname=name)  # type: ignore[call-arg]  # 3.11+
    return code.replace(co_name=name)
