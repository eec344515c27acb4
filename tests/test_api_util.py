"""functrans.api_util: argnums, partial application and parameter names, shared by the
transforms and the checkers."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.api_util import argnums_tuple, partial_over, positional_names


def test_argnums_tuple_normalises_negative_positions():
    assert argnums_tuple(0, 2, "grad") == (0,)
    assert argnums_tuple((-1, 0), 3, "grad") == (2, 0)
    assert argnums_tuple((np.int64(1),), 2, "grad") == (1,)


@pytest.mark.parametrize("argnums", [2, (0, -3), (0.5,)])
def test_argnums_tuple_names_the_transform_when_out_of_range(argnums):
    with pytest.raises(ValueError, match="jacrev: argnums .* out of range .* 2 positional"):
        argnums_tuple(argnums, 2, "jacrev")


def test_partial_over_fixes_the_other_arguments():
    f = partial_over(lambda a, b, c: a * 100 + b * 10 + c, (1, 2, 3), (2, 0))
    assert f(7, 9) == 9 * 100 + 2 * 10 + 7


def test_positional_names_skips_keyword_only_and_var_arguments():
    def f(a, b=1, /, c=2, *rest, d, **kw):
        return a

    assert positional_names(f) == ["a", "b", "c"]
    names = positional_names(f)
    names.append("changed")  # callers get a copy of the cached list
    assert positional_names(f) == ["a", "b", "c"]
    assert positional_names(len) == ["obj"]


def test_gradcheck_rejects_out_of_range_argnums():
    with pytest.raises(ValueError, match="gradcheck of f: argnums 2 is out of range"):
        ft.gradcheck(lambda x, y: fnp.sum(x * y), argnums=2)(np.ones(2), np.ones(2))
    result = ft.gradcheck(lambda x, y: fnp.sum(x * y), argnums=-1)(np.ones(2), np.ones(2))
    assert {c.input for c in result.checks if c.kind == "jacobian"} == {"y"}
