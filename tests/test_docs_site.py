"""The documentation site (docs/, built with Sphinx and MyST).

The structural checks run everywhere: every page is reachable from the root toctree and
every public module has a reference page.  The build itself, ``sphinx-build -W`` (warnings
are errors), runs only where the ``docs`` extra is installed (sphinx, myst-parser, furo),
and then also checks that each reference page documents every public name of its module.
"""
from __future__ import annotations

import html.parser
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import types
import urllib.parse
from pathlib import Path

import pytest

def _module(name: str) -> types.ModuleType:
    """A module by its public dotted name (``functrans.lax.linalg`` is an attribute of
    ``functrans.lax``, not an importable path, as autodoc also resolves it)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        parent, _, attr = name.rpartition(".")
        return getattr(importlib.import_module(parent), attr)


ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# reference page (docs/api/<page>.md) -> the module it documents
API_PAGES = {
    "functrans": "functrans",
    "numpy": "functrans.numpy",
    "numpy.linalg": "functrans.numpy.linalg",
    "numpy.fft": "functrans.numpy.fft",
    "lax": "functrans.lax",
    "lax.linalg": "functrans.lax.linalg",
    "nn": "functrans.nn",
    "nn.initializers": "functrans.nn_initializers",
    "tree": "functrans.tree",
    "tree_util": "functrans.tree_util",
    "scipy.special": "functrans.scipy.special",
    "scipy.linalg": "functrans.scipy.linalg",
    "scipy.stats": "functrans.scipy.stats",
    "scipy.signal": "functrans.scipy.signal",
    "scipy.sparse.linalg": "functrans.scipy.sparse.linalg",
    "scipy.optimize": "functrans.scipy.optimize",
    "scipy.fft": "functrans.scipy.fft",
    "scipy.ndimage": "functrans.scipy.ndimage",
    "scipy.interpolate": "functrans.scipy.interpolate",
    "scipy.integrate": "functrans.scipy.integrate",
    "scipy.cluster.vq": "functrans.scipy.cluster.vq",
    "scipy.spatial.transform": "functrans.scipy.spatial.transform",
    "image": "functrans.image",
    "ops": "functrans.ops",
    "random": "functrans.random",
    "config": "functrans.config",
    "testing": "functrans.testing",
    "gradcheck": "functrans.gradcheck",
    "debug": "functrans.debug",
    "dtypes": "functrans.dtypes",
    "typing": "functrans.typing",
    "flatten_util": "functrans.flatten_util",
    "experimental.ode": "functrans.experimental.ode",
    "test_util": "functrans.test_util",
    "example_libraries.optimizers": "functrans.example_libraries.optimizers",
    "example_libraries.stax": "functrans.example_libraries.stax",
}

#: reference pages whose module re-exports objects documented on another page (JAX's stax
#: re-exports jax.nn's functions): they link those entries, as alias pages do, instead of
#: documenting the objects a second time
REEXPORTS = {"test_util": {"check_grads": "functrans.testing"}, "example_libraries.stax": {
    name: "functrans.nn" for name in ("relu", "log_softmax", "logsoftmax", "softmax",
                                      "softplus", "sigmoid", "elu", "leaky_relu", "selu",
                                      "gelu", "standardize")} | {
    name: "functrans.nn_initializers" for name in ("glorot_normal", "glorot", "normal",
                                                   "randn", "ones", "zeros")}}

_TOCTREE = re.compile(r"```\{toctree\}\n(.*?)```", re.S)


def _toctree_entries(page: Path) -> list[str]:
    """The documents a page's toctrees list, as paths relative to docs/ without suffix."""
    entries = []
    for block in _TOCTREE.findall(page.read_text(encoding="utf-8")):
        for line in block.splitlines():
            line = line.strip()
            titled = re.fullmatch(r".*<(.+)>", line)  # "Title <document>"
            line = titled.group(1) if titled else line
            if line and not line.startswith(":"):
                entries.append(str((page.parent / line).relative_to(DOCS)))
    return entries


def _reachable() -> set[str]:
    seen, todo = set(), ["index"]
    while todo:
        doc = todo.pop()
        if doc in seen:
            continue
        seen.add(doc)
        todo.extend(_toctree_entries(DOCS / f"{doc}.md"))
    return seen


def test_every_page_is_in_the_site():
    pages = {str(p.relative_to(DOCS).with_suffix("")) for p in DOCS.rglob("*.md")
             if "_build" not in p.parts}
    reachable = _reachable()
    assert reachable <= pages, f"toctrees name missing pages: {sorted(reachable - pages)}"
    assert pages <= reachable, ("pages no toctree reaches (add them to docs/index.md): "
                                f"{sorted(pages - reachable)}")


def test_every_public_module_has_a_reference_page():
    for page, module in API_PAGES.items():
        text = (DOCS / "api" / f"{page}.md").read_text(encoding="utf-8")
        assert f"automodule:: {module}" in text, (page, module)
    stats = _module("functrans.scipy.stats")
    text = (DOCS / "api" / "scipy.stats.md").read_text(encoding="utf-8")
    for name in stats.__all__:  # a section per distribution, the summaries as functions
        obj = getattr(stats, name)
        directive = ("automodule" if isinstance(obj, types.ModuleType)
                     else "autoclass" if isinstance(obj, type) else "autofunction")
        assert f"{directive}:: functrans.scipy.stats.{name}\n" in text, name


def _documented_names(module) -> list[tuple[str, str]]:
    """(page module, name) for every public name the site should document: functrans's
    own objects (NumPy's re-exported dtypes and scalar types keep NumPy's docs), not
    submodules (they have pages of their own)."""
    out = []
    public_name = {"functrans.lax_linalg": "functrans.lax.linalg"}.get(module.__name__,
                                                                         module.__name__)
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):
            if module.__name__ == "functrans.scipy.stats":
                out += [(obj.__name__, n) for n in obj.__all__]
            continue
        owner = getattr(obj, "__module__", None)
        if isinstance(owner, str) and owner.startswith("functrans"):
            out.append((public_name, name))
    return out


def test_numpy_objects_reexported_unchanged_are_left_to_numpy():
    names = {n for _, n in _documented_names(_module("functrans.numpy"))}
    assert {"sin", "einsum", "mgrid"} <= names
    assert not names & {"float32", "dtype", "ndarray", "int8"}
    assert {"finfo", "iinfo"} <= names  # ours: they take arrays and give Python numbers


#: JAX's import paths that re-export names documented elsewhere: their pages link the
#: canonical entries instead of documenting the objects twice.
ALIAS_PAGES = {"ad_checkpoint": "functrans.ad_checkpoint",
               "custom_derivatives": "functrans.custom_derivatives"}


def test_reexports_are_linked_not_documented_again():
    for page, names in REEXPORTS.items():
        module = _module(API_PAGES[page])
        text = (DOCS / "api" / f"{page}.md").read_text(encoding="utf-8")
        assert "imported-members" not in text, page
        excluded = re.search(r":exclude-members:((?:.|\n)*?)\n\s*(?:```|:)", text)
        assert excluded, f"docs/api/{page}.md must exclude the re-exported members"
        excluded_names = {n.strip() for n in excluded.group(1).replace("\n", " ").split(",")}
        for name, owner in names.items():
            assert name in excluded_names, (page, name)
            assert name in module.__all__, (page, name)
            assert getattr(module, name).__module__ == owner, (page, name)
            assert f"`{module.__name__}.{name}` is {{py:" in text, (page, name)
        # every other functrans object the module exports is its own (so documented here)
        owners = {n: getattr(getattr(module, n), "__module__", None) for n in module.__all__
                  if n not in names}
        assert not [n for n, owner in owners.items() if isinstance(owner, str)
                    and owner.startswith("functrans") and owner != module.__name__], page


def test_alias_pages_list_every_name():
    for page, module_name in ALIAS_PAGES.items():
        text = (DOCS / "api" / f"{page}.md").read_text(encoding="utf-8")
        module = _module(module_name)
        missing = [n for n in module.__all__ if f"`{module_name}.{n}` is {{py:" not in text]
        assert not missing, f"docs/api/{page}.md does not link {missing}"
        # an alias page documents nothing itself: a second description of an object makes
        # the source pages' "[docs]" links point at the alias's anchors, which do not exist
        assert "automodule" not in text and "autofunction" not in text, page


_HAS_SPHINX = all(importlib.util.find_spec(m) is not None
                  for m in ("sphinx", "myst_parser", "sphinx_copybutton"))


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    if not _HAS_SPHINX:
        pytest.skip('the docs extra is not installed (pip install -e ".[docs]")')
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stdout}\n{proc.stderr}"
    return out / "html"


def test_sphinx_build_has_no_warnings(built_site):
    assert (built_site / "index.html").is_file()
    assert (built_site / "api" / "index.html").is_file()


def test_reference_pages_document_every_public_name(built_site):
    for page, module_name in API_PAGES.items():
        html = (built_site / "api" / f"{page}.html").read_text(encoding="utf-8")
        pairs = [(m, n) for m, n in _documented_names(_module(module_name))
                 if n not in REEXPORTS.get(page, {})]
        missing = [f"{m}.{n}" for m, n in pairs if f'id="{m}.{n}"' not in html]
        # the top-level namespace re-exports names documented on their own module's page
        if page == "functrans":
            elsewhere = set(_module("functrans.gradcheck").__all__) | set(
                _module("functrans.config").__all__)
            missing = [n for n in missing if n.rsplit(".", 1)[1] not in elsewhere]
        assert not missing, f"docs/api/{page}.md does not document {missing}"


def test_links_out_of_docs_become_downloads(built_site):
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert re.search(r'href="_downloads/[0-9a-f]+/README.md"', index)


class _Links(html.parser.HTMLParser):
    """The ids (anchors) a page defines and the links it makes."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(attributes["id"])
        if tag == "a" and attributes.get("name"):
            self.ids.add(attributes["name"])
        for key in ("href", "src"):
            if attributes.get(key):
                self.links.append(attributes[key])


def broken_internal_links(site: Path) -> list[str]:
    """Every relative link of the built site whose file, or whose anchor in an HTML page,
    does not exist, as "page: link"."""
    site = site.resolve()
    pages = {}
    for path in site.rglob("*.html"):
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8"))
        pages[path] = parser
    broken = []
    for path, parser in list(pages.items()):
        for link in parser.links:
            parts = urllib.parse.urlsplit(link)
            if parts.scheme or parts.netloc:
                continue  # external: not checked (CI has no network)
            target = (path.parent / urllib.parse.unquote(parts.path)).resolve() \
                if parts.path else path
            where = f"{path.relative_to(site)}: {link}"
            if not target.exists():
                broken.append(where)
            elif parts.fragment and target.suffix == ".html":
                if target not in pages:  # a page outside the walk (a symlinked folder)
                    pages[target] = _Links()
                    pages[target].feed(target.read_text(encoding="utf-8"))
                if urllib.parse.unquote(parts.fragment) not in pages[target].ids:
                    broken.append(where)
    return sorted(broken)


def test_internal_links_resolve(built_site):
    broken = broken_internal_links(built_site)
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(broken[:50])


def test_the_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "a.html").write_text('<p id="here"><a href="a.html#here">ok</a>'
                                     '<a href="#gone">no anchor</a><a href="b.html">no file</a>'
                                     '<a href="https://example.org/x">external</a></p>')
    assert broken_internal_links(tmp_path) == ["a.html: #gone", "a.html: b.html"]


def test_reference_entries_link_their_guides(built_site):
    html_text = (built_site / "api" / "functrans.html").read_text(encoding="utf-8")
    entry = html_text[html_text.index('id="functrans.grad"'):]
    entry = entry[:entry.index('id="functrans.value_and_grad"')]
    assert '../transforms.html#guide-grad' in entry and '../api.html#api-grad' in entry


def test_copy_buttons_strip_prompts(built_site):
    page = (built_site / "quickstart.html").read_text(encoding="utf-8")
    assert "copybutton" in page
    options = (built_site / "_static" / "copybutton.js").read_text(encoding="utf-8")
    assert r">>> |\\.\\.\\. |\\.\\.\\.$|\\$ " in options
