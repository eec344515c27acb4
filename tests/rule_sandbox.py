"""Test-only primitives whose rules are in the rule tables only while one test module runs.

tests/test_primitives.py requires every registered primitive to have a sweep case, so the
deliberately wrong primitives of the gradcheck tests must not stay registered::

    sandbox = Sandbox()
    bad_p = sandbox.primitive("bad_sin")

    @sandbox.rules
    def _():
        impl_rules[bad_p] = np.sin
        ...

    install_rules = sandbox.fixture()   # a module-scoped autouse fixture
"""
from __future__ import annotations

from typing import Callable

import pytest

from functrans.core import Primitive, abstract_eval_rules, impl_rules
from functrans.interpreters import ad, batching, transpose

TABLES = (impl_rules, abstract_eval_rules, ad.jvp_rules, transpose.transpose_rules,
          batching.batching_rules)


class Sandbox:
    def __init__(self):
        self.primitives: list[Primitive] = []
        self.registrations: list[Callable] = []

    def primitive(self, name: str, multiple_results: bool = False) -> Primitive:
        prim = Primitive(name, multiple_results)
        self.primitives.append(prim)
        return prim

    def rules(self, register: Callable) -> Callable:
        """Record a function that registers rules; it runs when the module's tests start."""
        self.registrations.append(register)
        return register

    def install(self) -> None:
        for register in self.registrations:
            register()

    def remove(self) -> None:
        for prim in self.primitives:
            for table in TABLES:
                table.pop(prim, None)

    def fixture(self):
        @pytest.fixture(scope="module", autouse=True)
        def install_rules():
            self.install()
            yield
            self.remove()
        return install_rules
