"""Public namespaces show only public names, and no module reaches into another's private
names."""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

#: modules whose ``dir()`` is exactly their ``__all__`` (PEP 562 ``__dir__``)
CURATED = ["functrans", "functrans.tree_util", "functrans.gradcheck", "functrans.testing",
           "functrans.lax", "functrans.config", "functrans.debug", "functrans.dtypes",
           "functrans.typing", "functrans.flatten_util", "functrans.custom_derivatives",
           "functrans.runtime", "functrans.lax_extra", "functrans.experimental",
           "functrans.experimental.ode", "functrans.example_libraries",
           "functrans.example_libraries.optimizers", "functrans.example_libraries.stax"]


def _module(name: str):
    # ``functrans.gradcheck`` the attribute is the function; the module is in sys.modules.
    return importlib.import_module(name)


@pytest.mark.parametrize("name", CURATED)
def test_every_name_in_all_exists(name):
    module = _module(name)
    assert len(set(module.__all__)) == len(module.__all__), "duplicates in __all__"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists names it does not define: {missing}"


@pytest.mark.parametrize("name", CURATED)
def test_dir_shows_exactly_all(name):
    module = _module(name)
    assert dir(module) == sorted(module.__all__)


def test_tree_util_hides_what_it_imports():
    hidden = {"annotations", "OrderedDict", "namedtuple", "Any", "Callable", "NamedTuple"}
    assert not hidden & set(dir(ft.tree_util))


def test_gradcheck_names_are_importable_from_functrans():
    from functrans.gradcheck import gradcheck
    assert gradcheck is ft.gradcheck
    result = ft.gradcheck(fnp.sin)(np.array([0.5]))
    assert isinstance(result, ft.GradcheckResult)
    assert all(isinstance(c, ft.Check) for c in result.checks)
    assert issubclass(ft.NondifferentiableError, ft.GradcheckError)
    assert {"Check", "GradcheckError", "GradcheckResult", "NondifferentiableError",
            "gradcheck"} <= set(ft.__all__)


def _private_imports(source: str) -> list[str]:
    """The ``from functrans... import _name`` statements in ``source``, and its uses of
    ``module._name`` for a functrans module it imported."""
    tree = ast.parse(source)
    found, aliases = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("functrans"):
            found += [f"line {node.lineno}: from {node.module} import {a.name}"
                      for a in node.names if a.name.startswith("_")]
            aliases |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            aliases |= {a.asname or a.name.split(".")[0] for a in node.names
                        if a.name.startswith("functrans")}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_the_checker_finds_private_imports():
    source = ("from functrans.api import _flatten_fun, vmap\nfrom functrans import api\n"
              "import numpy as np\napi._partial_over(f, ())\nnp._private\napi.__name__\n")
    assert _private_imports(source) == ["line 1: from functrans.api import _flatten_fun",
                                        "line 4: api._partial_over"]


GRADCHECK_MODULES = [f"functrans.gradcheck.{m.name}" for m in
                     pkgutil.iter_modules(importlib.import_module("functrans.gradcheck").__path__)]


@pytest.mark.parametrize("name", ["functrans.testing", "functrans.intermediates",
                                  "functrans.api", "functrans.api_util", "functrans.tree_util",
                                  "functrans.gradcheck", "functrans.example_libraries.optimizers",
                                  "functrans.example_libraries.stax"] + GRADCHECK_MODULES)
def test_no_private_names_imported(name):
    assert not _private_imports(inspect.getsource(_module(name)))


def _lax_functions():
    import functrans.lax as lax
    return [pytest.param(name, getattr(lax, name), id=name) for name in lax.__all__
            if inspect.isfunction(getattr(lax, name))]


@pytest.mark.parametrize("name,fn", _lax_functions())
def test_lax_functions_name_themselves_in_argument_errors(name, fn):
    assert fn.__name__ == name
    with pytest.raises(TypeError) as error:
        fn(not_an_argument_of_any_function=1)
    assert str(error.value).startswith(f"{name}() "), str(error.value)
