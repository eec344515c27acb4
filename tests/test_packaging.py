"""The package's metadata and typing: the version is defined once, the LICENSE file is the
license pyproject.toml declares, the extras CI and users rely on exist, ``py.typed`` ships,
and (when mypy is installed: ``pip install "functrans[typing]"``) ``mypy functrans`` is
clean and the public API has the types tests/typing_check.py spells out."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import functrans

ROOT = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomli is what tomllib was before it joined the standard library
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml on 3.10 needs tomli")


@pytest.fixture(scope="module")
def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


# -- the version ---------------------------------------------------------------------------


def test_version_is_defined_once_in_the_module(pyproject):
    project = pyproject["project"]
    assert "version" not in project, "pyproject.toml must not repeat the version"
    assert "version" in project["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "functrans.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", functrans.__version__)
    # Only functrans/__init__.py assigns it.
    assigning = [p.relative_to(ROOT).as_posix() for p in (ROOT / "functrans").rglob("*.py")
                 if re.search(r"^__version__\s*=", p.read_text(encoding="utf-8"), re.M)]
    assert assigning == ["functrans/__init__.py"]


def test_installed_metadata_agrees_with_the_module():
    try:
        installed = importlib.metadata.version("functrans")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("functrans is not installed (run from a checkout with PYTHONPATH)")
    location = importlib.util.find_spec("functrans").origin
    if not Path(location).resolve().is_relative_to(ROOT):
        pytest.skip("the installed functrans is another checkout")
    assert installed == functrans.__version__


# -- license, changelog, files -------------------------------------------------------------


def test_license_file_is_the_declared_license(pyproject):
    project = pyproject["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert re.search(r"Apache License\s+Version 2\.0, January 2004", text)
    # The whole text, not an excerpt: the definitions through the end of the terms.
    for part in ("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
                 "1. Definitions.", "4. Redistribution.", "9. Accepting Warranty or "
                 "Additional Liability.", "END OF TERMS AND CONDITIONS"):
        assert part in text, part
    # A License classifier next to a license expression is refused by setuptools >= 77.
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]


def test_changelog_has_an_unreleased_section():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog")
    assert "## [Unreleased]" in text
    assert "keepachangelog.com" in text


def test_py_typed_ships_with_the_package(pyproject):
    assert (ROOT / "functrans" / "py.typed").is_file()
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["functrans"]
    assert "Typing :: Typed" in pyproject["project"]["classifiers"]


def test_gitignore_covers_tool_caches():
    lines = set((ROOT / ".gitignore").read_text(encoding="utf-8").split())
    for entry in ("__pycache__/", ".pytest_cache/", ".hypothesis/", ".mypy_cache/",
                  ".ruff_cache/", "dist/", "build/", "*.egg-info/", "docs/_build/"):
        assert entry in lines, entry


# -- metadata and extras -------------------------------------------------------------------


def test_project_metadata(pyproject):
    project = pyproject["project"]
    assert project["authors"] == [{"name": "The functrans developers"}]
    assert set(project["urls"]) >= {"Homepage", "Source", "Issues", "Changelog"}
    assert all(u.startswith("https://") for u in project["urls"].values())
    versions = [c.rsplit(" :: ", 1)[1] for c in project["classifiers"]
                if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    floor = project["requires-python"].removeprefix(">=")
    assert versions and versions[0] == floor


def test_extras(pyproject):
    extras = pyproject["project"]["optional-dependencies"]
    assert set(extras) >= {"test", "docs", "bench", "scipy", "cuda", "typing"}
    # .ci/run pins each floor of the dependencies and the test extra: plain ">=" only.
    for spec in pyproject["project"]["dependencies"] + extras["test"]:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+>=[0-9][0-9.]*", spec), spec
    # Plain `cupy` is source-only; the CUDA extra names a prebuilt wheel.
    assert [s for s in extras["cuda"] if s.startswith("cupy-cuda12x")]
    assert not [s for s in extras["cuda"] if re.match(r"cupy\b(?!-)", s)]
    # the kernels' compile check: prebuilt wheels only, none on macOS (no CUDA there)
    assert all(s.startswith(("cupy-cuda13x", "nvidia-cuda-nvrtc"))
               and "platform_system != 'Darwin'" in s for s in extras["nvrtc"])
    names = {re.split(r"[<>=!~\[ ]", s, maxsplit=1)[0] for s in extras["docs"]}
    assert {"sphinx", "myst-parser", "sphinx-copybutton"} <= names
    assert [s for s in extras["bench"] if s.startswith("torch==")]  # no CUDA download
    assert [s for s in extras["typing"] if s.startswith("mypy")]


# -- typing (needs mypy) -------------------------------------------------------------------


def _mypy(*args: str) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy", reason='mypy is not installed: pip install "functrans[typing]"')
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=600)


def test_mypy_functrans_is_clean():
    run = _mypy("functrans")
    assert run.returncode == 0, run.stdout + run.stderr


def test_public_api_types():
    """Every ``reveal_type`` of tests/typing_check.py reveals the type its comment says,
    and each ``type: ignore`` there silences a real error (a transform that dropped the
    wrapped function's parameters would leave it unused)."""
    path = ROOT / "tests" / "typing_check.py"
    run = _mypy("--warn-unused-ignores", str(path.relative_to(ROOT)))
    assert run.returncode == 0, run.stdout + run.stderr
    revealed = {int(m.group(1)): m.group(2).replace("builtins.", "")
                for m in re.finditer(r"typing_check\.py:(\d+): note: Revealed type is "
                                     r'"(.*)"', run.stdout)}
    expected = {i: m.group(1).strip()
                for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if (m := re.search(r"reveal_type\(.*# revealed: (.*)$", line))}
    assert len(expected) >= 15
    assert revealed == expected
