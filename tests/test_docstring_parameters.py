"""Every public function describes every parameter in a NumPy-style Parameters section.

The sections come from the functions' own docstrings and, for the parameters a docstring
does not describe, from the glossary in ``functrans/_parameter_glossary.py`` (see
``functrans/docstrings.py``).  A new parameter without a text fails here: describe it in
the function's docstring (a ``Parameters`` section), or add it to the glossary's SPECIFIC
(one function), FAMILY (one module) or GLOSSARY (everywhere) table.
"""
from __future__ import annotations

import pydoc
import re

import pytest

import functrans
import functrans.scipy  # noqa: F401  (completes functrans.scipy's docstrings)
from functrans import docstrings

#: public function or class -> {parameter: why it has no description}.  It may only
#: shrink: an entry that is no longer needed fails the test below.
EXCEPTIONS: dict[str, dict[str, str]] = {}


def _functions():
    return docstrings.public_functions(
        docstrings.public_namespaces(docstrings.CORE_NAMESPACES)
        + docstrings.public_namespaces(docstrings.SCIPY_NAMESPACES)
        + docstrings.public_namespaces(docstrings.EXAMPLE_LIBRARIES_NAMESPACES))


def _undescribed(name: str, obj) -> list[str]:
    have = set(docstrings.documented_parameters(obj.__doc__))
    return [p for p in docstrings.signature_parameters(obj)
            if p not in have and p.lstrip("*") not in have]


def test_every_parameter_is_described():
    # functions and the classes users construct (their constructors' parameters)
    missing = {}
    for name, obj in _functions():
        undescribed = [p for p in _undescribed(name, obj) if p not in EXCEPTIONS.get(name, {})]
        if undescribed:
            missing[name] = undescribed
    assert not missing, (
        f"{len(missing)} public functions have parameters without a description: "
        f"{missing}. Describe them in the docstring's Parameters section or in "
        "functrans/_parameter_glossary.py (SPECIFIC, FAMILY or GLOSSARY).")


def test_the_exception_list_only_shrinks():
    functions = dict(_functions())
    stale = [f"{name}.{param}" for name, params in EXCEPTIONS.items() for param in params
             if name not in functions or param not in _undescribed(name, functions[name])]
    assert not stale, f"described now (or gone): remove them from EXCEPTIONS: {stale}"
    assert all(reason.strip() for params in EXCEPTIONS.values() for reason in params.values())


def test_sections_describe_only_real_parameters():
    # a Parameters section read from the wrong place (say, examples parsed as parameter
    # names) or describing a renamed parameter shows up here
    wrong = {}
    for name, obj in _functions():
        params = docstrings.signature_parameters(obj)
        if any(p.startswith("**") for p in params):
            continue  # keyword arguments may be described by name
        accepted = set(params) | {p.lstrip("*") for p in params}
        extra = [d for d in docstrings.documented_parameters(obj.__doc__) if d not in accepted]
        if extra:
            wrong[name] = extra
    assert not wrong, f"Parameters sections name parameters the functions do not have: {wrong}"


_SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}$", re.M)


def test_examples_after_a_section_have_their_own_heading():
    # Sphinx's napoleon reads everything up to the next heading as part of a section: ">>>"
    # lines right after a Parameters section would be rendered as parameters
    bad = []
    for name, obj in _functions():
        doc = docstrings._dedent(obj.__doc__ or "")
        headings = list(_SECTION.finditer(doc))
        for heading, following in zip(headings, headings[1:] + [None]):
            if heading.group(1) in ("Examples", "Example"):
                continue
            body = doc[heading.end():following.start() if following else len(doc)]
            if re.search(r"^>>>", body, re.M):
                bad.append(f"{name} ({heading.group(1)})")
    assert not bad, f"examples inside a section (add an Examples heading): {bad}"


def test_help_shows_the_parameters():
    text = pydoc.render_doc(functrans.grad, renderer=pydoc.plaintext)
    assert "Parameters" in text and "has_aux : bool, optional" in text
    text = pydoc.render_doc(functrans.numpy.sum, renderer=pydoc.plaintext)
    assert "keepdims : bool, optional" in text and "Examples" in text


def test_a_family_can_block_the_common_meaning():
    # "a" is the input array in functrans.numpy but a shape parameter in scipy.special
    assert docstrings.describe("functrans.numpy.sum", "a") == docstrings.GLOSSARY["a"]
    assert docstrings.describe("functrans.scipy.special.gammainc", "a") != \
        docstrings.GLOSSARY["a"]
    assert docstrings.describe("functrans.scipy.special.not_a_function", "a") is None


def test_completion_keeps_hand_written_entries_and_is_idempotent():
    def f(x, axis=None, weird=1):
        """Something.

        Parameters
        ----------
        x : array_like
            My own words.

        Examples
        --------
        >>> 1
        1
        """

    done = docstrings.completed_docstring(f, "functrans.numpy.f")
    assert "My own words." in done and "axis : int or None, optional" in done
    assert "weird" not in done  # no text anywhere: left for the test above to report
    assert done.index("axis :") < done.index("Examples")
    f.__doc__ = done
    assert docstrings.completed_docstring(f, "functrans.numpy.f") is None


def test_examples_get_a_heading_when_a_section_is_added():
    def g(x):
        """Something.

        >>> 1
        1
        """

    done = docstrings.completed_docstring(g, "functrans.numpy.g")
    assert re.search(r"Parameters\n-+\nx : array_like\n.*\n\nExamples\n-+\n>>> 1", done, re.S)


@pytest.mark.parametrize("name", ["functrans.custom_vjp.defvjp", "functrans.custom_jvp.defjvp",
                                  "functrans.custom_jvp.defjvps"])
def test_custom_rule_methods_are_documented(name):
    obj = functrans
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    assert not _undescribed(name, obj) and ">>>" in obj.__doc__


def test_result_fields_are_documented():
    doc = functrans.GradcheckResult.__doc__
    for field in ("checks", "failures", "ok", "max_ratio", "skipped", "errors", "seed"):
        assert re.search(rf"^\s*{field} : ", doc, re.M), field
    doc = functrans.Check.__doc__
    for field in ("kind", "mode", "passed", "max_ratio", "numeric, analytic", "message"):
        assert re.search(rf"^\s*{field} : ", doc, re.M), field


def test_every_specific_text_belongs_to_a_real_parameter():
    # a renamed function or parameter leaves its text behind, unused: say so (every public
    # name counts, aliases such as remat = checkpoint included)
    functions = {f"{public}.{name}": getattr(module, name)
                 for public, module in docstrings.public_namespaces(
                     {**docstrings.CORE_NAMESPACES, **docstrings.SCIPY_NAMESPACES})
                 for name in getattr(module, "__all__", ())}
    stale = [f"{name}.{param}" for name, params in docstrings.SPECIFIC.items()
             for param in params
             if name not in functions
             or param not in docstrings.signature_parameters(functions[name])
             and "*" + param not in docstrings.signature_parameters(functions[name])
             and "**" + param not in docstrings.signature_parameters(functions[name])]
    assert not stale, f"SPECIFIC texts of parameters that do not exist: {stale}"
