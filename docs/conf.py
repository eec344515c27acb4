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
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
html_theme = "furo"
html_title = f"functrans {release}"


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
