"""Sphinx configuration for the functrans documentation site.

Build: ``pip install -e ".[docs]" && sphinx-build -W -b html docs docs/_build/html``.
"""
import pathlib
import re
import sys

# The checkout's functrans, installed or not.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import functrans  # noqa: E402

project = "functrans"
author = "the functrans authors"
release = version = functrans.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
html_theme = "furo"
html_title = f"functrans {release}"

# --- docstrings ------------------------------------------------------------------------
# Parameters sections are NumPy style (``Parameters`` underlined with dashes); Google-style
# parsing is off so that prose lines such as "Note:" stay prose.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# Attributes sections (the gradcheck result's fields) as field lists: the properties among
# them are also documented as members, and two descriptions of one name would collide.
napoleon_use_ivar = True

# --- copy buttons ----------------------------------------------------------------------
# The button copies what a user pastes into a terminal or a REPL: the prompts (``>>> ``,
# ``... ``, ``$ ``) and the output lines of doctest blocks are left out, a bare ``...`` (the
# line that closes a ``def`` block) becomes the blank line the REPL needs; blocks without
# prompts are copied whole.
copybutton_prompt_text = r">>> |\.\.\. |\.\.\.$|\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
copybutton_remove_prompts = True
copybutton_copy_empty_lines = True


# --- autodoc ---------------------------------------------------------------------------
# The reference pages use ``automodule`` with ``:members:`` and ``:imported-members:``, so
# each module's ``__all__`` decides what is shown.  NumPy's own objects that
# functrans.numpy re-exports unchanged (dtype, ndarray, finfo, the scalar types, ...) keep
# NumPy's documentation, which is NumPy's to render.
autodoc_default_options = {"member-order": "alphabetical", "undoc-members": True}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True


def _skip_foreign(app, what, name, obj, skip, options):
    module = getattr(obj, "__module__", None) or ""
    if what == "module" and isinstance(module, str) and module and not (
            module == "functrans" or module.startswith("functrans.")):
        return True
    return None


# ``y``s: reStructuredText needs an escaped space between a literal and the letters after it.
_LITERAL_THEN_LETTER = re.compile(r"(?<![`\w])``(\S[^`]*?)(?<=\S)``(?=[A-Za-z])")


def _fix_literals(app, what, name, obj, options, lines):
    lines[:] = [_LITERAL_THEN_LETTER.sub(r"``\1``\\ ", line) for line in lines]


# --- reference -> guide links ----------------------------------------------------------
# Each reference entry of a transform (and of the other names the guides explain) ends with
# links to the guide sections about it; the labels are the ``(label)=`` targets in the
# guides, so a renamed section fails the build (-W) instead of leaving a dead link.
GUIDE_SECTIONS = {
    "functrans.grad": ["guide-grad", "api-grad"],
    "functrans.value_and_grad": ["guide-grad", "api-value-and-grad"],
    "functrans.jvp": ["guide-jvp", "api-jvp"],
    "functrans.vjp": ["guide-vjp", "api-vjp"],
    "functrans.linearize": ["guide-linearize", "api-linearize"],
    "functrans.vmap": ["guide-vmap", "api-vmap", "api-collectives"],
    "functrans.jacfwd": ["guide-jacobians", "api-jacobians"],
    "functrans.jacrev": ["guide-jacobians", "api-jacobians"],
    "functrans.jacobian": ["guide-jacobians", "api-jacobians"],
    "functrans.hessian": ["guide-jacobians", "api-hessian"],
    "functrans.linear_transpose": ["api-linear-transpose"],
    "functrans.jit": ["guide-jit"],
    "functrans.make_jaxpr": ["guide-make-jaxpr", "api-make-jaxpr"],
    "functrans.eval_shape": ["guide-make-jaxpr", "api-eval-shape"],
    "functrans.eval_jaxpr": ["api-eval-jaxpr"],
    "functrans.check_jaxpr": ["api-eval-jaxpr"],
    "functrans.checkpoint": ["guide-checkpoint", "checkpoint"],
    "functrans.remat": ["guide-checkpoint", "checkpoint"],
    "functrans.checkpoint_name": ["checkpoint"],
    "functrans.checkpoint_policies": ["checkpoint"],
    "functrans.custom_jvp": ["guide-custom-rules", "custom-jvp"],
    "functrans.custom_jvp.defjvp": ["custom-jvp"],
    "functrans.custom_jvp.defjvps": ["custom-jvp"],
    "functrans.custom_vjp": ["guide-custom-rules", "custom-vjp"],
    "functrans.custom_vjp.defvjp": ["custom-vjp"],
    "functrans.tag": ["intermediates"],
    "functrans.intermediate_grads": ["intermediates"],
    "functrans.gradcheck.gradcheck": ["guide-gradcheck", "gradcheck-quick-start",
                                      "gradcheck-options"],
    "functrans.gradcheck.GradcheckResult": ["gradcheck-report"],
    "functrans.gradcheck.Check": ["gradcheck-report"],
    "functrans.testing.check_grads": ["gradcheck-testing"],
    "functrans.lax.cond": ["api-control-flow"],
    "functrans.lax.switch": ["api-control-flow"],
    "functrans.lax.scan": ["api-control-flow"],
    "functrans.lax.while_loop": ["api-control-flow"],
    "functrans.lax.fori_loop": ["api-control-flow"],
    "functrans.lax.psum": ["api-collectives"],
    "functrans.lax.pmean": ["api-collectives"],
}


def _link_guides(app, what, name, obj, options, lines):
    labels = GUIDE_SECTIONS.get(name)
    if labels:
        lines += ["", "**Guide:** " + ", ".join(f":ref:`{label}`" for label in labels) + "."]


# --- links out of docs/ ----------------------------------------------------------------
# The pages link to files elsewhere in the repository (``../README.md``), which GitHub
# renders; on the site such a link becomes a download of that file (MyST's ``path:``).
_LINK_OUT_OF_DOCS = re.compile(r"\]\((\.\./[^)#\s]+)\)")


def _link_out_of_docs(app, docname, source):
    srcdir = pathlib.Path(app.srcdir).resolve()
    here = (srcdir / docname).parent

    def rewrite(match):
        target = (here / match.group(1)).resolve()
        inside = target == srcdir or srcdir in target.parents
        return match.group(0) if inside else f"](path:{match.group(1)})"

    source[0] = _LINK_OUT_OF_DOCS.sub(rewrite, source[0])


def setup(app):
    app.connect("source-read", _link_out_of_docs)
    app.connect("autodoc-skip-member", _skip_foreign)
    app.connect("autodoc-process-docstring", _fix_literals)
    app.connect("autodoc-process-docstring", _link_guides)
