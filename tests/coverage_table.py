"""Generate docs/coverage.md: every public name of JAX's ``jax.numpy`` (with its ``linalg``
and ``fft``), ``jax.nn``, ``jax.scipy.special`` and ``jax.tree``, and its status in functrans.

Where the data comes from:

- JAX's names: tests/jax_names.json (written by tests/jax_names.py with JAX installed; the
  suite never needs JAX).
- Whether functrans has a name: the functrans namespace itself (``functrans.numpy``, ...).
- Which checks cover a function: the sweep registry.  Every case of the shared sweep tables
  (tests/test_numpy.py ``CASES`` with every tests/cases_*.py ``NUMPY_CASES``,
  tests/test_primitives.py ``CASES`` with every ``PRIMITIVE_CASES``,
  tests/test_cumulative.py ``DERIVATIVE_CASES``, and the ``CREATION_CASES`` and
  ``TREE_CASES`` of tests/cases_*.py that tests/test_creation.py and
  tests/test_tree_cases.py run) is run once under a profiler hook that
  records which public functrans functions it calls directly (the outermost public call:
  ``std`` calling ``mean`` inside credits ``std`` only); the case's table and fields then
  say which checks the suite runs on it.  The ``jit`` column runs the case under ``jit``
  here, as tests/test_jit.py does (a case needing concrete values is skipped there).
- Why a name is absent on purpose: tests/coverage_exclusions.py.

Run ``python tests/coverage_table.py --write`` from the repository root (with the
repository on ``PYTHONPATH``) to regenerate the page; tests/test_coverage_page.py fails while
the page is stale.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pathlib
import sys
import warnings
from dataclasses import dataclass, field

_TESTS = str(pathlib.Path(__file__).resolve().parent)
if _TESTS not in sys.path:  # run as a script: import sweep and test_* by name, as pytest does
    sys.path.insert(0, _TESTS)

import numpy as np  # noqa: E402

import functrans as ft  # noqa: E402
from functrans.jaxpr_transforms import clear_caches  # noqa: E402
from coverage_exclusions import reason  # noqa: E402
from sweep import F32, case_rng  # noqa: E402

__all__ = ["NAMESPACES", "PAGE", "Checks", "Row", "jax_names", "functrans_module",
           "is_function", "is_reexported", "public_callables", "record_calls", "case_checks",
           "CREATION_NA", "TREE_NA", "creation_checks", "tree_checks", "sweep_coverage", "rows",
           "render", "generate", "main"]

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "coverage.md"
JAX_NAMES = pathlib.Path(__file__).with_name("jax_names.json")

#: JAX namespace -> the functrans module that answers to it.
NAMESPACES = {
    "jax.numpy": "functrans.numpy",
    "jax.numpy.linalg": "functrans.numpy.linalg",
    "jax.numpy.fft": "functrans.numpy.fft",
    "jax.nn": "functrans.nn",
    "jax.scipy.special": "functrans.scipy.special",
    "jax.tree": "functrans.tree",
}


def jax_names() -> dict:
    """tests/jax_names.json: ``{"jax_version": ..., "namespaces": {ns: {name: kind}}}``."""
    return json.loads(JAX_NAMES.read_text())


def functrans_module(namespace: str):
    return importlib.import_module(NAMESPACES[namespace])


# ------------------------------------------------------------------------------------------
# Which public functions a case calls
# ------------------------------------------------------------------------------------------


def is_function(value) -> bool:
    return callable(value) and not inspect.ismodule(value) and not isinstance(value, type)


def is_reexported(value) -> bool:
    """A function that functrans passes through from NumPy as it is (``issubdtype``): it is
    NumPy's code, run on dtypes and Python objects, never on traced values."""
    return not (getattr(inspect.unwrap(value), "__module__", None) or "").startswith(
        "functrans")


#: Functions outside JAX's compared namespaces that are credited nothing but hide what they
#: call: the solvers run the functions they are given (and their own iterations) without
#: differentiating them, so a case's derivative checks say nothing about those.
SOLVERS = {"functrans.lax": ["custom_linear_solve", "custom_root"],
           "functrans.scipy.sparse.linalg": ["cg", "bicgstab", "gmres"],
           "functrans.scipy.optimize": ["minimize"],
           "functrans.experimental.ode": ["odeint"]}


def public_callables() -> dict:
    """The code object of every public functrans function (unwrapped through
    ``__wrapped__``, so ``custom_jvp`` functions count) mapped to the ``(namespace, name)``
    pairs it answers to.  Functions passed through from NumPy are left out: functrans's
    own code calls them everywhere."""
    codes: dict = {}
    for module_name, names in SOLVERS.items():
        module = importlib.import_module(module_name)
        for name in names:
            codes[inspect.unwrap(getattr(module, name)).__code__] = set()
    for namespace in NAMESPACES:
        module = functrans_module(namespace)
        for name in module.__all__:
            value = getattr(module, name)
            if is_function(value) and not is_reexported(value):
                code = inspect.unwrap(value).__code__
                codes.setdefault(code, set()).add((namespace, name))
    return codes


class record_calls:
    """A context manager recording, in ``.names``, the ``(namespace, name)`` of each public
    function called while no other public function is running (the calls a case makes
    itself, not those public functions make inside)."""

    def __init__(self, codes: dict):
        self.codes = codes
        self.names: set = set()
        self._open: list = []  # frames of public functions now running

    def _hook(self, frame, event, arg):
        if event == "call":
            names = self.codes.get(frame.f_code)
            if names is not None:
                if not self._open:
                    self.names |= names
                self._open.append(frame)
        elif event == "return":
            if self._open and self._open[-1] is frame:
                self._open.pop()

    def __enter__(self):
        self._previous = sys.getprofile()
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._previous)
        return False


# ------------------------------------------------------------------------------------------
# Which checks the sweep runs on each case
# ------------------------------------------------------------------------------------------


@dataclass
class Checks:
    """The checks of the sweep that cover one function, gathered over its cases: ``values``
    against a NumPy/SciPy reference; the highest derivative order checked numerically in
    forward (``fwd``) and reverse (``rev``) mode (0: none); vmap against a loop; float32;
    complex inputs; the CuPy stand-in (zero host copies); jit against eager.  ``na``:
    the checks that do not apply to the function's kind of case (derivatives and vmap of
    a function with no differentiable input, ...), where every one of its cases says so
    (None: no case yet)."""
    values: bool = False
    fwd: int = 0
    rev: int = 0
    vmap: bool = False
    float32: bool = False
    complex: bool = False
    standin: bool = False
    jit: bool = False
    cases: list = field(default_factory=list)
    na: frozenset | None = None

    def merge(self, other: Checks) -> None:
        for name in ("values", "vmap", "float32", "complex", "standin", "jit"):
            setattr(self, name, getattr(self, name) or getattr(other, name))
        self.fwd, self.rev = max(self.fwd, other.fwd), max(self.rev, other.rev)
        self.cases += other.cases
        other_na = other.na if other.na is not None else frozenset()
        self.na = other_na if self.na is None else self.na & other_na


def _sweep_tables() -> list[tuple[str, list]]:
    """The sweep's tables as test_standin.py names them, with their cases, then the
    creation and tree cases."""
    import test_creation
    import test_cumulative
    import test_numpy
    import test_primitives
    import test_tree_cases
    return [("numpy", test_numpy.CASES), ("lax", test_primitives.CASES),
            ("cumulative", test_cumulative.DERIVATIVE_CASES),
            ("creation", test_creation.CASES), ("tree", test_tree_cases.CASES)]


#: Checks that mean nothing for a function with no differentiable or batchable input.
CREATION_NA = frozenset({"fwd", "rev", "vmap"})
#: jax.tree's functions restructure pytrees whatever their leaves: dtypes do not apply.
TREE_NA = frozenset({"float32", "complex"})


def _output_kinds(out) -> set:
    """The dtype kinds (and float32-ness) of an answer's array leaves."""
    kinds = set()
    for leaf in (out if isinstance(out, (list, tuple)) else [out]):
        if isinstance(leaf, (list, tuple)):
            kinds |= _output_kinds(leaf)
        elif isinstance(leaf, np.ndarray):
            kinds.add("float32" if leaf.dtype == np.float32 else leaf.dtype.kind)
    return kinds


def creation_checks(case, out, takes_like: bool) -> Checks:
    """What tests/test_creation.py checks on a creation case whose answer is ``out``; the
    stand-in column applies only to functions taking ``like=``."""
    kinds = _output_kinds(out)
    return Checks(values=True, float32="float32" in kinds, complex="c" in kinds,
                  standin=case.like, jit=case.jit, cases=[f"creation-{case.name}"],
                  na=CREATION_NA | (frozenset() if takes_like else {"standin"}))


def tree_checks(case) -> Checks:
    """What tests/test_tree_cases.py checks on a tree case."""
    return Checks(values=True, fwd=2, rev=2, vmap=True, standin=True, jit=True,
                  cases=[f"tree-{case.name}"], na=TREE_NA)


def _takes_like(namespace: str, name: str) -> bool:
    value = getattr(functrans_module(namespace), name)
    return "like" in inspect.signature(value).parameters


def _runs_under_jit(case, args) -> bool:
    try:
        ft.jit(case)(*args)
    except ft.ConcretizationTypeError:
        return False
    return True


def case_checks(table: str, case, args, standin_known_failures: set) -> Checks:
    """What the suite checks on one case (see each table's test module)."""
    diff_args = any(a.differentiable for a in case.args)
    batch_args = any(a.batchable for a in case.args)
    if table == "numpy":   # test_numpy: every differentiable case, to its order (at least 1)
        order = max(case.order, 1) if case.differentiable and diff_args else 0
    else:                  # test_primitives / test_cumulative skip order-0 cases
        order = case.order if case.differentiable and diff_args else 0
    sweep_id = f"{table}-{case.name}"
    return Checks(
        values=table == "numpy",
        fwd=order, rev=order,
        vmap=batch_args and table != "cumulative",
        float32=F32 in case.dtypes and table != "cumulative",
        complex=table == "numpy" and any(np.dtype(d).kind == "c" for d in case.dtypes),
        standin=f"{sweep_id}-eval" not in standin_known_failures,
        jit=_runs_under_jit(case, args),
        cases=[sweep_id], na=frozenset())


def sweep_coverage() -> dict:
    """``{(namespace, name): Checks}`` for every public function some sweep case calls."""
    import test_standin
    known = set(test_standin.SWEEP_HOST_SITES)
    codes = public_callables()
    coverage: dict = {}
    clear_caches()  # a jit traced before would not run its body again
    for table, cases in _sweep_tables():
        for case in cases:
            if table == "tree":
                args = [case.make(case_rng(case))]
            else:
                args = case.draw(case_rng(case), case.dtypes[0])
            # Cases drawing nan or inf, or dividing by drawn zeros, warn: not our business.
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)
                with record_calls(codes) as recorder:
                    out = case(*args)
                if not recorder.names:
                    continue
                if table == "tree":
                    checks = tree_checks(case)
                elif table != "creation":
                    checks = case_checks(table, case, args, known)
            for key in recorder.names:
                if table == "creation":
                    checks = creation_checks(case, out, _takes_like(*key))
                coverage.setdefault(key, Checks()).merge(checks)
    return coverage


# ------------------------------------------------------------------------------------------
# The page
# ------------------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    kind: str            # JAX's kind (function, type, constant, module, object) or
                         # "NumPy's own" for a function passed through from NumPy
    status: str          # present, excluded, missing
    reason: str | None = None
    checks: Checks | None = None


def rows(names: dict, coverage: dict) -> dict[str, list[Row]]:
    """Each namespace's rows, in name order."""
    out = {}
    for namespace in NAMESPACES:
        module = functrans_module(namespace)
        table = []
        for name, kind in sorted(names["namespaces"][namespace].items()):
            if name in getattr(module, "__all__", ()):
                value = getattr(module, name)
                if is_function(value) and is_reexported(value):
                    kind = "NumPy's own"
                table.append(Row(name, kind, "present",
                                 checks=coverage.get((namespace, name))))
            elif reason(namespace, name) is not None:
                table.append(Row(name, kind, "excluded", reason(namespace, name)))
            else:
                table.append(Row(name, kind, "missing"))
        out[namespace] = table
    return out


HEADER = """\
# Coverage of JAX's API

<!-- Generated by `python tests/coverage_table.py --write`; do not edit by hand.
     tests/test_coverage_page.py fails when this page is stale. -->

This page lists every public name of JAX's `jax.numpy` (and its `linalg` and `fft`),
`jax.nn`, `jax.scipy.special` and `jax.tree` (JAX {version}, stored in
`tests/jax_names.json`) with its status in the matching functrans module
(`functrans.numpy`, `functrans.numpy.linalg`, `functrans.numpy.fft`, `functrans.nn`,
`functrans.scipy.special`, `functrans.tree`):

- **present**: functrans has the name;
- **excluded**: functrans leaves it out on purpose, for the reason given
  (tests/coverage_exclusions.py);
- **missing**: neither: still to be written.

For a present function the columns say which checks of the test suite's sweep cover it.
They are read from the sweep itself, not written by hand: each sweep case (the `CASES` of
tests/test_numpy.py and tests/test_primitives.py, the `NUMPY_CASES` and `PRIMITIVE_CASES` of
every tests/cases_*.py, and tests/test_cumulative.py) is run once while a profiler hook
records the public functions it calls (those called while no other public function is
running: `std` computing a mean inside credits `std` only), and the case's table and fields
give the checks:

| column | meaning |
|---|---|
| values | equal to a reference (NumPy/SciPy, or NumPy code in the test), concrete and traced |
| fwd, rev | `jvp` and `vjp` against central differences, to the order shown (1 or 2) |
| vmap | `vmap` compared with a Python loop over the batch |
| f32 | run in float32 (dtypes kept, gradients stay float32) |
| complex | run on complex inputs (values, dtypes, vmap) |
| stand-in | evaluated, differentiated and batched on the CuPy stand-in, with no host copies |
| jit | `jit` compared with eager evaluation (derivatives and vmap through it too) |
| cases | how many sweep cases call the function |

Functions with nothing to differentiate or batch (creation from shapes and Python values,
windows, index helpers, dtype queries) are swept by the `CREATION_CASES` of
tests/cases_*.py (tests/test_creation.py: values and dtypes against NumPy, `jit`, and
`like=` a CuPy stand-in array where the function takes `like=`); `jax.tree`'s functions
by the `TREE_CASES` (tests/test_tree_cases.py: used on traced pytrees against the same
computation written out by hand, with derivatives, `vmap`, `jit` and the stand-in).

`✓` marks a check that runs on at least one of the function's cases, `·` one that runs on
none, `–` one that does not apply to any of its cases (derivatives and vmap of a function
with no differentiable input; the stand-in for one without `like=`; dtypes for
`jax.tree`'s functions, which never look at their leaves); a present function with no
sweep case shows `·` everywhere (it may still have targeted tests of its own). Types,
constants,
submodules, index helpers (`r_`, `mgrid`, ...) and the few functions functrans passes
through from NumPy unchanged ("NumPy's own": `issubdtype`, ...) have no checks of their own
(`–`).
"""


def _mark(flag, applies: bool = True) -> str:
    return "✓" if flag else "·" if applies else "–"


def _order(n: int, applies: bool = True) -> str:
    return str(n) if n else "·" if applies else "–"


def _row_line(row: Row) -> str:
    name = f"`{row.name}`"
    if row.status == "missing":
        return f"| {name} | **missing** |" + " |" * 9
    if row.status == "excluded":
        return f"| {name} | excluded |" + " |" * 9
    if row.kind != "function":
        return f"| {name} | present ({row.kind}) |" + " – |" * 9
    c = row.checks or Checks()
    na = c.na or frozenset()
    cells = [_mark(c.values), _order(c.fwd, "fwd" not in na), _order(c.rev, "rev" not in na),
             _mark(c.vmap, "vmap" not in na), _mark(c.float32, "float32" not in na),
             _mark(c.complex, "complex" not in na),
             _mark(c.standin and c.cases, "standin" not in na), _mark(c.jit), str(len(c.cases))]
    return f"| {name} | present | " + " | ".join(cells) + " |"


def render(names: dict, coverage: dict) -> str:
    tables = rows(names, coverage)
    lines = [HEADER.format(version=names["jax_version"]), "## Summary", "",
             "| namespace | JAX names | present | excluded | missing | present functions "
             "without a sweep case |", "|---|---|---|---|---|---|"]
    for namespace, table in tables.items():
        count = {s: sum(r.status == s for r in table) for s in ("present", "excluded",
                                                                  "missing")}
        untested = sum(r.status == "present" and r.kind == "function" and not r.checks
                       for r in table)
        lines.append(f"| `{namespace}` | {len(table)} | {count['present']} | "
                     f"{count['excluded']} | {count['missing']} | {untested} |")
    lines += ["", "## Missing", ""]
    for namespace, table in tables.items():
        missing = [f"`{r.name}`" for r in table if r.status == "missing"]
        lines.append(f"- `{namespace}` ({len(missing)}): " + (", ".join(missing) or "none"))
    lines += ["", "## Present functions without a sweep case", "",
              "These may have targeted tests of their own, but no sweep, creation or tree",
              "case calls them:", ""]
    for namespace, table in tables.items():
        bare = [f"`{r.name}`" for r in table
                if r.status == "present" and r.kind == "function" and not r.checks]
        lines.append(f"- `{namespace}` ({len(bare)}): " + (", ".join(bare) or "none"))
    for namespace, table in tables.items():
        lines += ["", f"## `{namespace}`", "",
                  "| name | status | values | fwd | rev | vmap | f32 | complex | stand-in | "
                  "jit | cases |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        lines += [_row_line(r) for r in table]
        excluded = [r for r in table if r.status == "excluded"]
        if excluded:
            lines += ["", "Excluded:", ""]
            lines += [f"- `{r.name}`: {r.reason}" for r in excluded]
    return "\n".join(lines) + "\n"


def generate() -> str:
    """The page as it should be now."""
    return render(jax_names(), sweep_coverage())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {PAGE}")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the page on disk differs from the generated one")
    args = parser.parse_args(argv)
    page = generate()
    if args.write:
        PAGE.write_text(page)
        print(f"wrote {PAGE}", file=sys.stderr)
    elif args.check:
        if PAGE.read_text() != page:
            print(f"{PAGE} is stale: run python tests/coverage_table.py --write",
                  file=sys.stderr)
            return 1
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
