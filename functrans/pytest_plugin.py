"""functrans's pytest plugin, registered through the ``pytest11`` entry point (active in
every pytest session once functrans is installed; ``-p no:functrans`` turns it off).

* ``--functrans-seed N`` (default: the ``FUNCTRANS_TEST_SEED`` environment variable, else
  0; ``random`` draws one) is the session seed.  It is printed in the header and written
  to ``FUNCTRANS_TEST_SEED`` for the session, so every check with ``seed=None`` and every
  :func:`functrans.testing.seed_for` reads the same number.
* The ``rng`` fixture: a ``numpy.random.Generator`` seeded from the session seed and the
  test's node id, so a test draws the same numbers alone or among others.
* A failing test that drew from the session seed (the ``rng`` fixture, a gradient check
  with ``seed=None``) gets a ``functrans seed`` report section with the command that reruns
  that test, ``pytest <test> --functrans-seed N``; a failing check inside it prints the same
  command.

A test file needs no import:

.. code-block:: python

    def test_sin_derivative(rng):
        x = rng.standard_normal(3)
        functrans.testing.check_grads(functrans.numpy.sin, (x,), order=2)
"""
from __future__ import annotations

import os
import shlex

import numpy as np
import pytest

from functrans.gradcheck.options import (SEED_ENV_VAR, parse_seed, seed_was_used,
                                         set_current_test)
from functrans.testing import make_rng

__all__ = ["rng", "pytest_addoption", "pytest_configure", "pytest_unconfigure",
           "pytest_report_header", "pytest_runtest_protocol", "pytest_runtest_makereport"]

_SEED = pytest.StashKey[int]()
_ENV_BEFORE = pytest.StashKey["str | None"]()
_COMMAND = pytest.StashKey[str]()


def pytest_addoption(parser) -> None:
    group = parser.getgroup("functrans")
    group.addoption("--functrans-seed", dest="functrans_seed", default=None, metavar="N",
                    help=f"session seed for the rng fixture and functrans's gradient checks: "
                         f"a non-negative integer or 'random' (default: ${SEED_ENV_VAR}, "
                         f"else 0)")


def pytest_configure(config) -> None:
    option = config.getoption("functrans_seed")
    if option is not None:
        seed = parse_seed(option, "--functrans-seed")
        if seed is None:
            raise pytest.UsageError("--functrans-seed: expected a non-negative integer or "
                                    "'random', got an empty value")
    else:
        seed = parse_seed(os.environ.get(SEED_ENV_VAR, ""), SEED_ENV_VAR)
    config.stash[_SEED] = 0 if seed is None else seed
    config.stash[_ENV_BEFORE] = os.environ.get(SEED_ENV_VAR)
    # One seed for the session: a 'random' draw is made once, and checks that read the
    # environment variable read the number the header prints.
    if seed is not None:
        os.environ[SEED_ENV_VAR] = str(seed)


def pytest_unconfigure(config) -> None:
    if _ENV_BEFORE not in config.stash:
        return
    before = config.stash[_ENV_BEFORE]
    if before is None:
        os.environ.pop(SEED_ENV_VAR, None)
    else:
        os.environ[SEED_ENV_VAR] = before


def pytest_report_header(config) -> str:
    seed = config.stash[_SEED]
    return f"functrans seed: {seed} (rerun with --functrans-seed {seed})"


def _rerun_command(item) -> str:
    nodeid = item.config.cwd_relative_nodeid(item.nodeid)
    return f"pytest {shlex.quote(nodeid)} --functrans-seed {item.config.stash[_SEED]}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    # Doctests are left out: their expected output cannot name the command that runs them.
    command = _rerun_command(item) if isinstance(item, pytest.Function) else None
    if command:
        item.stash[_COMMAND] = command
    set_current_test(command)
    try:
        yield
    finally:
        set_current_test(None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and _COMMAND in item.stash and seed_was_used():
        report.sections.append(("functrans seed", f"reproduce this test with: "
                                                  f"{item.stash[_COMMAND]}"))


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A ``numpy.random.Generator`` seeded from the session seed and the test's node id.

    The numbers depend on nothing else, so ``pytest <test> --functrans-seed N`` draws them
    again (see :func:`functrans.testing.seed_for`).
    """
    # The session seed is read back from the environment variable the plugin set, so a
    # failure report knows the test drew from it.
    return make_rng(request.node.nodeid)[0]
