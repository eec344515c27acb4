"""Every public function has a docstring with a runnable example, and that example runs in
the suite (``--doctest-modules`` collects it from the module that defines the function)."""
from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import functrans

#: the public namespaces whose callables (other than classes) are checked
NAMESPACES = ["functrans", "functrans.numpy", "functrans.numpy.linalg", "functrans.numpy.fft",
              "functrans.lax", "functrans.nn", "functrans.nn.initializers",
              "functrans.scipy.special",
              "functrans.scipy.stats", "functrans.scipy.linalg", "functrans.scipy.sparse.linalg",
              "functrans.scipy.optimize", "functrans.random",
              "functrans.tree", "functrans.tree_util", "functrans.testing", "functrans.ops",
              "functrans.scipy.fft", "functrans.scipy.signal", "functrans.scipy.ndimage",
              "functrans.scipy.interpolate", "functrans.scipy.integrate",
              "functrans.scipy.cluster.vq", "functrans.scipy.spatial.transform",
              "functrans.image",
              "functrans.debug", "functrans.dtypes", "functrans.flatten_util",
              "functrans.custom_derivatives", "functrans.runtime", "functrans.lax_extra",
              "functrans.experimental.ode", "functrans.example_libraries.optimizers",
              "functrans.example_libraries.stax"]

#: NumPy's own functions, re-exported as they are: their docstrings are NumPy's (examples
#: written against ``np``) and cannot be replaced without wrapping, which would change the
#: object users get.
EXEMPT = {"functrans.numpy.issubdtype": np.issubdtype,
          "functrans.dtypes.finfo": np.finfo, "functrans.dtypes.iinfo": np.iinfo}


def _public_callables(namespace: str):
    module = importlib.import_module(namespace)
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.ismodule(obj) or not callable(obj):
            continue
        if getattr(obj, "__module__", None) == "typing":
            continue  # a type alias (tree_util.KeyEntry = Any: a class from 3.11, not on 3.10)
        qualified = f"{namespace}.{name}"
        if qualified in EXEMPT:
            assert obj is EXEMPT[qualified], f"{qualified} is no longer NumPy's: document it"
            continue
        yield qualified, obj


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_public_function_has_a_docstring_with_an_example(namespace):
    no_docstring = [q for q, obj in _public_callables(namespace) if not (obj.__doc__ or "").strip()]
    no_example = [q for q, obj in _public_callables(namespace)
                  if (obj.__doc__ or "").strip() and ">>>" not in obj.__doc__]
    assert not no_docstring, f"public functions without a docstring: {no_docstring}"
    assert not no_example, f"docstrings without a >>> example: {no_example}"


def _collected_docstrings() -> set[str]:
    """The docstrings that the doctest finder (which ``--doctest-modules`` uses) finds in
    the modules of the functrans package."""
    found = set()
    modules = [functrans] + [importlib.import_module(info.name) for info in
                             pkgutil.walk_packages(functrans.__path__, "functrans.")
                             if not info.name.endswith("__main__")]
    finder = doctest.DocTestFinder(exclude_empty=True)
    for module in modules:
        found.update(test.docstring for test in finder.find(module, module.__name__)
                     if test.examples)
    return found


def test_every_example_is_collected_by_the_doctests():
    collected = _collected_docstrings()
    missed = [q for namespace in NAMESPACES for q, obj in _public_callables(namespace)
              if obj.__doc__ not in collected]
    assert not missed, (f"these docstrings' examples are not found by the doctest finder of "
                        f"any functrans module, so they never run: {missed}")


def test_the_check_fails_on_a_function_without_an_example(monkeypatch):
    # the test above must be able to fail: a public function whose example is missing
    monkeypatch.setattr(functrans.tree_util.tree_leaves, "__doc__", "The leaves.")
    with pytest.raises(AssertionError, match="tree_leaves"):
        test_every_public_function_has_a_docstring_with_an_example("functrans.tree_util")
