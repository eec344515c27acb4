"""``functrans.debug``: printing and inspecting values from inside transformed functions,
as JAX's ``jax.debug``.

``debug.print`` and ``debug.callback`` run when the values exist: at once without a
transform or under ``grad``/``jvp`` (with the primal values), once per batch member under
``vmap``, and each time a ``jit``-compiled function runs (not when it is traced); inside
the bodies of ``lax.scan``, ``while_loop``, ``fori_loop``, ``cond`` and ``switch`` once per
iteration or branch taken, in JAX's order.  A Python ``print`` inside ``jit`` shows
tracers, once.

>>> import numpy as np, functrans as ft, functrans.numpy as fnp
>>> @ft.jit
... def f(x):
...     ft.debug.print("x = {}", x)
...     return fnp.sum(x * x)
...
>>> f(np.array([1.0, 2.0]))
x = [1. 2.]
array(5.)
>>> f(np.array([3.0, 4.0]))
x = [3. 4.]
array(25.)
"""
from __future__ import annotations

import builtins
import cmd
import linecache
import os
import pprint
import string
import sys
import traceback
import types
from typing import IO, Any, Callable, NamedTuple

from functrans.primitives.callbacks import debug_callback, split_values
from functrans.tree_util import tree_flatten, tree_unflatten

__all__ = ["breakpoint", "callback", "print"]


def callback(callback: Callable[..., None], *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> None:
    """Call ``callback(*args, **kwargs)`` with the values of ``args`` (pytrees of arrays and
    tracers) when they are computed: at once outside transforms and under ``grad`` (primal
    values), per batch member under ``vmap``, on every run of a ``jit``-compiled function.
    Calls happen in program order (``ordered`` is accepted for JAX's signature);
    ``partitioned`` is accepted and ignored.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> seen = []
    >>> def f(x):
    ...     ft.debug.callback(lambda v: seen.append(float(v)), fnp.sum(x))
    ...     return x * 2
    ...
    >>> _ = ft.vmap(f)(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> seen
    [3.0, 7.0]
    """
    del ordered, partitioned
    _call_back("debug.callback", callback, args, kwargs)


def _call_back(name: str, callback: Callable[..., None], args: tuple, kwargs: dict) -> None:
    if not callable(callback):
        raise TypeError(f"{name}: expected a function, got {callback!r}")
    leaves, tree = tree_flatten((args, kwargs))
    traced, static, flags = split_values(leaves)

    def run(*values):
        call_args, call_kwargs = tree_unflatten(tree, values)
        callback(*call_args, **call_kwargs)

    debug_callback(run, traced, static, flags, name)


def print(fmt: str, *args: Any, ordered: bool = False, partitioned: bool = False,  # noqa: A001
          skip_format_check: bool = False, **kwargs: Any) -> None:
    """Print ``fmt.format(*args, **kwargs)`` with the values of ``args`` when they are
    computed (see ``callback``): under ``jit`` on every run, under ``vmap`` once per batch
    member, under ``grad`` the primal values.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> def f(x):
    ...     ft.debug.print("x={x} y={}", x * 2, x=x)
    ...     return fnp.sum(x)
    ...
    >>> _ = ft.vmap(f)(np.arange(2.0))
    x=0.0 y=0.0
    x=1.0 y=2.0
    >>> _ = ft.grad(f)(np.arange(2.0))
    x=[0. 1.] y=[0. 2.]
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: fmt must be a format string, got {fmt!r}")
    if not skip_format_check:
        try:
            list(string.Formatter().parse(fmt))
        except ValueError as error:
            raise ValueError(f"debug.print: invalid format string {fmt!r}: {error}") from None
    del ordered, partitioned
    _call_back("debug.print", lambda *a, **k: builtins.print(fmt.format(*a, **k)), args,
               kwargs)


class _Frame(NamedTuple):
    """A Python frame of the traced program, as the debugger shows it: its locals hold
    values, not tracers."""
    filename: str
    lineno: int
    function: str
    globals: dict
    locals: dict


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_frames(filter_frames: bool, num_frames: int | None) -> list:
    """The caller's frames, innermost first: without functrans's own (``filter_frames``),
    at most ``num_frames``."""
    frames = []
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        inside = os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE)
        if not (filter_frames and inside):
            frames.append(frame)
        frame = frame.f_back
    return frames if num_frames is None else frames[:num_frames]


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any) -> None:
    """Stop where the values exist and open a debugger on them: at once outside transforms,
    per batch member under ``vmap``, on every run of a ``jit``-compiled function (see
    ``callback``).  The debugger shows the Python frames that called ``breakpoint`` (not
    functrans's own, unless ``filter_frames=False``; the innermost ``num_frames``), their
    locals with values where the program has tracers.  Commands: an expression prints its
    value (``p``, ``pp`` pretty-print), ``u``/``d`` move between frames, ``l`` lists the
    source, ``w`` the frames, ``c`` continues, ``q`` exits the program.  ``stdin`` and
    ``stdout`` (keyword arguments) replace the terminal; ``backend`` may be None or
    ``"cli"``, the only debugger functrans has; ``ordered`` is accepted for JAX's signature.

    >>> import io, numpy as np, functrans as ft, functrans.numpy as fnp
    >>> @ft.jit
    ... def f(x):
    ...     y = fnp.sin(x)
    ...     ft.debug.breakpoint(stdin=io.StringIO("p y.round(3)\\nc\\n"))
    ...     return y * 2
    ...
    >>> _ = f(np.array([0.0, 1.0]))
    Entering the debugger (c continues, q quits)
    (fdb) p y.round(3)
    array([0.   , 0.841])
    (fdb) c
    """
    del ordered
    if backend not in (None, "cli"):
        raise ValueError(f"debug.breakpoint: backend must be None or 'cli' (the debugger "
                         f"functrans has), got {backend!r}")
    if token is not None:
        raise ValueError("debug.breakpoint: token is not supported (JAX deprecated it); "
                         "breakpoints run in program order")
    unknown = set(kwargs) - {"stdin", "stdout"}
    if unknown:
        raise TypeError(f"debug.breakpoint: unexpected keyword arguments {sorted(unknown)} "
                        "(the debugger takes stdin and stdout)")
    if num_frames is not None and (not isinstance(num_frames, int) or num_frames < 1):
        raise ValueError(f"debug.breakpoint: num_frames must be a positive int or None, "
                         f"got {num_frames!r}")
    frames = _user_frames(filter_frames, num_frames)
    # Locals that hold tracers go through the callback; the others are shown as they are.
    names, values, kept = [], [], []
    for i, frame in enumerate(frames):
        static = {}
        for name, value in frame.f_locals.items():
            leaves, _ = tree_flatten(value)
            if any(split_values(leaves)[2]):
                names.append((i, name))
                values.append(value)
            else:
                static[name] = value
        kept.append(static)
    descriptions = [(f.f_code.co_filename, f.f_lineno, f.f_code.co_name, f.f_globals)
                    for f in frames]
    del frames  # no reference cycles through the frames

    def open_debugger(*computed):
        shown = [_Frame(*d, dict(k)) for d, k in zip(descriptions, kept)]
        for (i, name), value in zip(names, computed):
            shown[i].locals[name] = value
        _Debugger(shown, **kwargs).cmdloop()

    _call_back("debug.breakpoint", open_debugger, tuple(values), {})


class _Debugger(cmd.Cmd):
    """A small command-line debugger over captured frames (``debug.breakpoint``)."""

    prompt = "(fdb) "

    def __init__(self, frames: list, stdin: IO[str] | None = None,
                 stdout: IO[str] | None = None):
        super().__init__(stdin=stdin, stdout=stdout)
        if stdin is not None:
            self.use_rawinput = False
        self.frames, self.index = frames, 0
        self.intro = "Entering the debugger (c continues, q quits)"

    def precmd(self, line: str) -> str:
        if not self.use_rawinput:  # commands from a file: echoed, so the transcript reads
            self._say(line.rstrip("\n") if line != "EOF" else "")
        return line

    @property
    def frame(self) -> _Frame:
        return self.frames[self.index]

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")

    def _evaluate(self, expression: str):
        return eval(expression, self.frame.globals, dict(self.frame.locals))  # noqa: S307

    def _show(self, expression: str, formatter: Callable[[Any], str]) -> None:
        try:
            self._say(formatter(self._evaluate(expression)))
        except Exception:  # the user's typo must not end the session
            self._say("".join(traceback.format_exception_only(*sys.exc_info()[:2])).strip())

    def default(self, line: str) -> None:
        self._show(line, repr)

    def emptyline(self) -> bool:  # not the previous command again, as cmd.Cmd would
        return False

    def do_p(self, arg: str) -> None:
        """p expression: print the value of the expression in the current frame."""
        self._show(arg, repr)

    def do_pp(self, arg: str) -> None:
        """pp expression: pretty-print the value of the expression."""
        self._show(arg, pprint.pformat)

    def do_up(self, arg: str) -> None:
        """u(p): move to the caller's frame."""
        if self.index + 1 >= len(self.frames):
            self._say("*** at the outermost frame")
        else:
            self.index += 1
            self._where_am_i()

    def do_down(self, arg: str) -> None:
        """d(own): move to the frame it called."""
        if self.index == 0:
            self._say("*** at the innermost frame")
        else:
            self.index -= 1
            self._where_am_i()

    def _where_am_i(self) -> None:
        f = self.frame
        self._say(f"> {f.filename}({f.lineno}){f.function}()")

    def do_list(self, arg: str) -> None:
        """l(ist): the source around the current line."""
        f = self.frame
        for n in range(max(1, f.lineno - 5), f.lineno + 6):
            line = linecache.getline(f.filename, n, f.globals)
            if not line:
                break
            self._say(f"{n:4d} {'->' if n == f.lineno else '  '} {line.rstrip()}")

    def do_where(self, arg: str) -> None:
        """w(here): the frames, outermost first; > marks the current one."""
        for i in reversed(range(len(self.frames))):
            f = self.frames[i]
            self._say(f"{'>' if i == self.index else ' '} {f.filename}({f.lineno})"
                      f"{f.function}()")

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue)): leave the debugger and go on with the program."""
        return True

    def do_quit(self, arg: str) -> None:
        """q(uit): end the program (SystemExit)."""
        raise SystemExit(0)

    def do_EOF(self, arg: str) -> bool:  # noqa: N802 (cmd's name): end of input continues
        return True

    do_u, do_d, do_l, do_w, do_c, do_cont, do_q, do_exit = (
        do_up, do_down, do_list, do_where, do_continue, do_continue, do_quit, do_quit)
    do_bt = do_where


def __dir__() -> list[str]:
    return sorted(__all__)
