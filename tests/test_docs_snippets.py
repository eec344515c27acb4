"""The guides' code blocks run as a reader would paste them.

Each page of docs/ is one reader's session, in a fresh namespace:

* a ```python block without prompts is pasted into a file and run: the page's blocks run in
  order, each one seeing what the ones before it defined (so every page imports what it
  uses);
* a ```python block of doctest examples (``>>>`` prompts) is pasted into a plain ``python``
  REPL as the site's copy button copies it: the prompt lines without their prompts and no
  output lines; a bare ``...`` becomes the empty line that ends a ``def``.  The REPL is
  ``code.InteractiveConsole``, which reads line by line exactly as ``python -i`` does, so a
  ``def`` block without its closing ``...`` fails here with the SyntaxError a reader would
  see.  An example whose expected output is a traceback may raise; no other may.

(The doctest run of the same pages, ``--doctest-glob='*.md'``, compares the outputs.)

A block that is not meant to run says why on the line before its fence, as a MyST comment
(invisible on the site)::

    % not-run: needs a GPU

Only ```python blocks run; ```bash and other languages are shown, not run.
"""
from __future__ import annotations

import code
import contextlib
import doctest
import inspect
import io
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
NOT_RUN = re.compile(r"^% not-run:(.*)$")
#: packages a page may use that the test environment need not have (the page is skipped,
#: saying which one is missing)
OPTIONAL = {"matplotlib", "tqdm", "graphviz", "cupy", "torch", "jax", "jaxlib", "numba",
            "autograd", "chainer", "mxnet", "array_api_strict", "ml_dtypes"}


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the first line inside the fence
    text: str
    skip_reason: str | None

    @property
    def is_doctest(self) -> bool:
        return any(line.startswith(">>>") for line in self.text.splitlines())

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def _name(path: Path) -> str:
    """A page's path from the repository's root, as error messages give it."""
    try:
        return path.resolve().relative_to(DOCS.parent).as_posix()
    except ValueError:
        return path.name


def blocks(path: Path) -> list[Block]:
    """The ```python blocks of a page, with their opt-out reasons."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            language = lines[i][3:].strip()
            start = i + 1
            i += 1
            while not lines[i].startswith("```"):
                i += 1
            if language == "python":
                marker = NOT_RUN.match(lines[start - 2]) if start >= 2 else None
                if marker and not marker.group(1).strip():
                    raise AssertionError(f"{_name(path)}:{start - 1}: not-run needs a reason")
                out.append(Block(_name(path), start + 1, "\n".join(lines[start:i]),
                                 marker.group(1).strip() if marker else None))
        i += 1
    return out


def pasted_lines(text: str) -> list[tuple[str, bool]]:
    """What the copy button puts on the clipboard, line by line, each with whether the
    example it belongs to expects a traceback."""
    examples = doctest.DocTestParser().get_examples(text)
    raising = {example.lineno for example in examples if example.exc_msg is not None}
    out, expect_raise = [], False
    for number, line in enumerate(text.split("\n")):
        if line.startswith(">>> "):
            expect_raise = number in raising
            out.append((line[4:], expect_raise))
        elif line.startswith("... "):
            out.append((line[4:], expect_raise))
        elif line.rstrip() == "...":
            out.append(("", expect_raise))
    return out


class _Console(code.InteractiveConsole):
    """A REPL that records what it would print on stderr (tracebacks, syntax errors)."""

    def __init__(self):
        super().__init__(locals={"__name__": "__console__"})
        self.errors = io.StringIO()

    def write(self, data):
        self.errors.write(data)

    def push(self, line):
        # `code` writes a traceback through write() only while sys.excepthook is Python's
        # own (on 3.10 the exceptiongroup backport, which pytest imports, replaces it)
        hook, sys.excepthook = sys.excepthook, sys.__excepthook__
        try:
            return super().push(line)
        finally:
            sys.excepthook = hook


def _missing_optional(error: BaseException) -> str | None:
    if isinstance(error, ModuleNotFoundError) and error.name:
        top = error.name.split(".")[0]
        if top in OPTIONAL:
            return top
    return None


def paste_into_repl(console: _Console, block: Block) -> None:
    for line, expect_raise in pasted_lines(block.text) + [("", False)]:
        console.errors.seek(0)
        console.errors.truncate()
        with contextlib.redirect_stdout(io.StringIO()):
            console.push(line)
        printed = console.errors.getvalue()
        if printed and not expect_raise:
            missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", printed)
            if missing and missing.group(1).split(".")[0] in OPTIONAL:
                pytest.skip(f"{block.where} needs {missing.group(1)}")
            raise AssertionError(f"{block.where}: pasting the block into python fails at "
                                 f"{line!r}:\n{printed}")


#: the pytest fixtures a page's test functions may ask for (the plugin's ``rng``)
FIXTURES = {"rng": lambda: np.random.default_rng(0)}


def run_as_script(namespace: dict, block: Block) -> None:
    """Runs the block; a test function it defines (``def test_...``) is then called as
    pytest would, with the fixtures of FIXTURES, since a snippet meant for a test file is
    pasted into one."""
    before = dict(namespace)
    try:
        exec(compile(block.text, block.where, "exec"), namespace)
        for name, obj in list(namespace.items()):
            if name.startswith("test_") and callable(obj) and before.get(name) is not obj:
                params = inspect.signature(obj).parameters
                if set(params) <= set(FIXTURES):
                    obj(**{p: FIXTURES[p]() for p in params})
    except Exception as error:  # noqa: BLE001 (reported with the block's place)
        missing = _missing_optional(error)
        if missing:
            pytest.skip(f"{block.where} needs {missing}")
        raise AssertionError(f"{block.where}: the block fails when run: "
                             f"{type(error).__name__}: {error}") from error


PAGES = sorted(p.name for p in DOCS.glob("*.md"))
#: the guides, and the README (the first code a newcomer pastes)
SOURCES = [f"docs/{page}" for page in PAGES] + ["README.md"]


@pytest.mark.parametrize("source", SOURCES)
def test_code_blocks_run_as_pasted(source):
    namespace: dict = {"__name__": "__main__"}
    console = _Console()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")  # a reader's REPL shows warnings; they do not fail
        for block in blocks(DOCS.parent / source):
            if block.skip_reason:
                continue
            if block.is_doctest:
                paste_into_repl(console, block)
            else:
                run_as_script(namespace, block)


def test_no_doctest_outside_a_fence():
    # MyST reads a bare ">>>" paragraph as three nested block quotes
    bare = []
    for page in PAGES:
        inside = False
        for number, line in enumerate((DOCS / page).read_text(encoding="utf-8").split("\n")):
            if line.startswith("```"):
                inside = not inside if (line.strip() == "```" or not inside) else inside
            elif not inside and line.startswith(">>>"):
                bare.append(f"docs/{page}:{number + 1}")
    assert not bare, f"doctest lines outside a ```python fence: {bare}"


def test_a_def_without_its_closing_line_fails_to_paste():
    block = Block("x.md", 1, ">>> def f(x):\n...     return x\n>>> f(1)\n1\n", None)
    with pytest.raises(AssertionError, match="SyntaxError"):
        paste_into_repl(_Console(), block)
    paste_into_repl(_Console(), Block("x.md", 1, ">>> def f(x):\n...     return x\n...\n"
                                      ">>> f(1)\n1\n", None))


def test_an_expected_traceback_is_allowed_and_others_are_not():
    raising = ">>> 1 / 0\nTraceback (most recent call last):\n    ...\nZeroDivisionError: x\n"
    paste_into_repl(_Console(), Block("x.md", 1, raising + ">>> 2\n2\n", None))
    with pytest.raises(AssertionError, match="ZeroDivisionError"):
        paste_into_repl(_Console(), Block("x.md", 1, ">>> 1 / 0\ninf\n", None))


def test_a_traceback_is_reported_whatever_the_excepthook(monkeypatch):
    # a library may replace sys.excepthook (on 3.10 the exceptiongroup backport that pytest
    # imports does), and the REPL then hands it the traceback instead of writing it
    monkeypatch.setattr(sys, "excepthook", lambda *exc_info: None)
    with pytest.raises(AssertionError, match="ZeroDivisionError"):
        paste_into_repl(_Console(), Block("x.md", 1, ">>> 1 / 0\ninf\n", None))
    assert sys.excepthook is not sys.__excepthook__  # put back


def test_a_script_block_needs_its_imports():
    with pytest.raises(AssertionError, match="NameError"):
        run_as_script({}, Block("x.md", 1, "np.zeros(2)\n", None))
    # also inside a test function meant for a test file: it is called with its fixtures
    with pytest.raises(AssertionError, match="NameError.*check_grads"):
        run_as_script({}, Block("x.md", 1, "def test_a(rng):\n    check_grads(rng)\n", None))


_COMPOUND = re.compile(r"(def|class|for|while|if|with|try|async|@)\b")


def unpasteable_examples(text: str) -> list[int]:
    """0-based lines of doctest examples that a plain REPL cannot take pasted: a compound
    statement (``def``, ``for``, a decorator, ...) not closed by a bare ``...`` line, or one
    with a bare ``...`` inside it (the REPL ends the block at the first empty line)."""
    lines = text.split("\n")
    bad = []
    for number, line in enumerate(lines):
        prompt = re.match(r"^(\s*)>>> (.*)$", line)
        if not (prompt and _COMPOUND.match(prompt.group(2))):
            continue
        continuation = re.compile(rf"^{re.escape(prompt.group(1))}\.\.\.( |$)")
        body = []
        for following in lines[number + 1:]:
            if not continuation.match(following):
                break
            body.append(following.strip())
        if not body or body[-1] != "..." or "..." in body[:-1]:
            bad.append(number)
    return bad


def test_docstring_examples_paste_into_a_plain_repl():
    # the docstrings' examples run as doctests; this checks the one thing doctest does not
    # need and a pasted REPL session does: the empty line that closes each block
    package = DOCS.parent / "functrans"
    bad = [f"{path.relative_to(package.parent)}:{number + 1}"
           for path in sorted(package.rglob("*.py"))
           for number in unpasteable_examples(path.read_text(encoding="utf-8"))]
    assert not bad, f"doctest blocks without their closing '...' line: {bad}"


def test_the_docstring_check_finds_an_unclosed_block():
    assert unpasteable_examples("    >>> def f():\n    ...     pass\n    >>> f()") == [0]
    assert unpasteable_examples("    >>> def f():\n    ...     x = 1\n    ...\n"
                                "    ...     return x\n    ...\n") == [0]
    assert unpasteable_examples("    >>> def f():\n    ...     pass\n    ...\n") == []
