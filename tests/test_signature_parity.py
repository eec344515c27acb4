"""Every public function functrans shares with JAX accepts the calls JAX's accepts: the
same parameter names, the same ways of passing each (by position, by keyword) and the same
defaults, compared with JAX's signatures stored in tests/jax_signatures.json (see
tests/signature_parity.py for the rules).  A difference fails unless
tests/signature_exceptions.py lists it with a reason, and an entry there that no longer
applies fails too: the list only shrinks.

Regenerate the stored signatures with a Python that has JAX when JAX's API moves::

    /path/to/python-with-jax tests/jax_signatures.py

then run this test, list or fix what it reports, and regenerate the summary in
docs/jax_names.md with ``PYTHONPATH=$PWD python tests/signature_parity.py --write``.
The test itself does not need JAX.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.random as random
import signature_parity as sp
from functrans import lax
from signature_exceptions import EXCEPTIONS, PARTIAL


@pytest.fixture(scope="module")
def comparisons():
    return sp.compare_all()


def _p(name, kind=sp.POS_OR_KW, default=sp.Param, by_position=True):
    """A parameter for the rule tests (``default`` left out: none)."""
    return sp.Param(name, kind, default is not sp.Param,
                    None if default is sp.Param else default, by_position)


def test_every_difference_is_listed_with_a_reason(comparisons):
    new = [f"{c.key}: {d}" for c in comparisons for d in c.diffs
           if d not in EXCEPTIONS.get(c.key, {})]
    assert not new, (
        "signatures differ from JAX's (implement the parameter, or list it in "
        "tests/signature_exceptions.py with its reason; `python tests/signature_parity.py` "
        "shows both sides):\n  " + "\n  ".join(new))


def test_every_exception_still_applies(comparisons):
    """The table only shrinks: an entry whose difference is gone must be deleted."""
    found = {c.key: set(c.diffs) for c in comparisons}
    stale = [f"{key}: {d}" for key, diffs in EXCEPTIONS.items() for d in diffs
             if d not in found.get(key, ())]
    assert not stale, ("tests/signature_exceptions.py lists differences that no longer "
                       "exist; delete them:\n  " + "\n  ".join(stale))


def test_every_exception_has_a_reason():
    for key, diffs in EXCEPTIONS.items():
        for diff, why in diffs.items():
            assert diff.split(":")[0] in ("missing", "kind", "default", "extra"), (key, diff)
            assert why.strip() and not why.endswith("."), (key, diff, why)


def test_partial_parameters_are_still_refused():
    """Each listed value is still refused (implementing it means deleting the entry), by a
    parameter both signatures have."""
    signatures = sp.stored()["signatures"]
    for key, (why, call) in PARTIAL.items():
        function, param = key.split(":")
        namespace, _, name = function.rpartition(".")
        assert param in (p[0] for p in signatures[namespace][name]), key
        ours = getattr(sp.functrans_module(namespace), name)
        assert param in sp.inspect.signature(ours).parameters, key
        assert why.strip() and not why.endswith("."), key
        with pytest.raises(NotImplementedError):
            call()


def test_the_comparison_covers_every_namespace(comparisons):
    data = sp.stored()
    assert data["jax_version"]
    covered = {c.namespace for c in comparisons}
    for namespace in ("jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax",
                      "jax.lax.linalg", "jax.nn", "jax.nn.initializers", "jax.random",
                      "jax.scipy.special", "jax.scipy.linalg", "jax.scipy.stats.norm"):
        assert namespace in covered, namespace
    assert len(comparisons) > 700
    assert {"grad", "jit", "vmap", "custom_jvp"} <= {c.name for c in comparisons
                                                      if c.namespace == "jax"}


def test_normalised_parameters_are_jax_parameters():
    signatures = sp.stored()["signatures"]
    for (namespace, function, param), why in sp.NORMALISED.items():
        table = signatures[namespace]
        funs = table.values() if function == "*" else [table[function]]
        assert any(param in (p[0] for p in sig) for sig in funs), (namespace, function, param)
        assert why.strip() and not why.endswith("."), why
    for key in sp.OPAQUE:
        namespace, _, name = key.rpartition(".")
        assert name in signatures[namespace], key


def test_summary_in_docs_is_current(comparisons):
    block = sp.summary(comparisons, sp.stored()["jax_version"])
    page = sp.PAGE.read_text()
    assert sp.page_with_summary(page, block) == page, (
        "the signature summary in docs/jax_names.md is stale: run "
        "`PYTHONPATH=$PWD python tests/signature_parity.py --write`")


def test_stored_signatures_match_installed_jax():
    """Only where JAX is installed: the stored signatures are JAX's (else regenerate)."""
    jax = pytest.importorskip("jax")
    stored = sp.stored()
    if stored["jax_version"] != jax.__version__:
        pytest.skip(f"signatures stored from JAX {stored['jax_version']}, {jax.__version__} "
                    "here")
    import jax_signatures
    assert jax_signatures.collect() == stored


# -- the rules -----------------------------------------------------------------------------


def test_rules_report_what_a_call_can_hit():
    a, axis = _p("a"), _p("axis", default=None)
    # the same: nothing; a functrans extension with a default: nothing
    assert sp.differences([a, axis], [a, axis]) == []
    assert sp.differences([a, axis], [a, axis, _p("like", sp.KW_ONLY, None)]) == []
    # missing, and a required extra
    assert sp.differences([a, axis], [a]) == ["missing:axis"]
    assert sp.differences([a], [a, _p("b")]) == ["extra:b"]
    # a positional parameter at another position, or keyword-only, or positional-only
    keep = _p("keepdims", default=False)
    assert sp.differences([a, axis, keep], [a, keep, axis]) == ["kind:axis", "kind:keepdims"]
    assert sp.differences([a, axis], [a, _p("axis", sp.KW_ONLY, None)]) == ["kind:axis"]
    assert sp.differences([a], [_p("a", sp.POS_ONLY)]) == ["kind:a"]
    # JAX's positional-only parameters are matched by position, whatever the name
    assert sp.differences([_p("x1", sp.POS_ONLY), _p("x2", sp.POS_ONLY)],
                          [_p("x"), _p("y")]) == []
    # JAX's keyword-only parameter that functrans also takes by position: nothing
    assert sp.differences([a, _p("axis", sp.KW_ONLY, None)], [a, axis]) == []
    # defaults: required where JAX's is optional, or another value; sentinels are opaque
    assert sp.differences([a, axis], [a, _p("axis")]) == ["default:axis"]
    assert sp.differences([a, axis], [a, _p("axis", default=0)]) == ["default:axis"]
    assert sp.differences([a, _p("axis", default="<object>")], [a, _p("axis", default=0)]
                          ) == []
    # after a left-out positional parameter (out=), only the name is compared
    late = _p("keepdims", default=False, by_position=False)
    assert sp.differences([a, axis, late], [a, axis, _p("x", default=1), keep]) == []
    # *args and **kwargs
    assert sp.differences([_p("args", sp.VAR_POS)], [a]) == ["missing:*args", "extra:a"]
    assert sp.differences([a, _p("kw", sp.VAR_KW)], [a]) == ["missing:**kw"]
    assert sp.differences([a, _p("mode", sp.KW_ONLY, 1)], [a, _p("kw", sp.VAR_KW)]) == []


def test_left_out_parameters_and_ufuncs():
    """``out=None`` and a ufunc's ``where=None`` are left out; the parameters after a
    left-out positional one are compared by name only."""
    entry = [["a", sp.POS_OR_KW], ["axis", sp.POS_OR_KW, None], ["out", sp.POS_OR_KW, None],
             ["keepdims", sp.POS_OR_KW, None]]
    params = sp.jax_params("jax.numpy", "argmax", entry)
    assert [p.name for p in params] == ["a", "axis", "keepdims"]
    assert [p.by_position for p in params] == [True, True, False]
    ufunc = [["x1", sp.POS_ONLY], ["x2", sp.POS_ONLY], ["out", sp.KW_ONLY, None],
             ["where", sp.KW_ONLY, None]]
    assert [p.name for p in sp.jax_params("jax.numpy", "add", ufunc)] == ["x1", "x2"]
    assert sp.functrans_module("jax.lax.linalg") is lax.linalg
    assert sp.functrans_module("jax.scipy.stats.norm").__name__ == "functrans.scipy.stats.norm"


# -- arguments whose effect is not a sweep case of their own --------------------------------


def test_promote_integers_keeps_small_integer_dtypes():
    x = np.array([[100, 27], [3, 4]], np.int8)
    assert fnp.sum(x).dtype == np.int64 and fnp.prod(x).dtype == np.int64
    assert fnp.sum(x, promote_integers=False).dtype == np.int8
    assert fnp.prod(x, axis=0, promote_integers=False).dtype == np.int8
    assert fnp.sum(np.array([True, True]), promote_integers=False) == 2
    assert fnp.sum(x, axis=1, promote_integers=False, dtype=np.int16).dtype == np.int16


def test_reduction_arguments_refuse_what_jax_refuses():
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="max: a where= mask needs initial="):
        fnp.max(x, where=x > 1)
    with pytest.raises(ValueError, match=r"sum: where= must broadcast to the input's shape "
                                         r"\(2, 3\), got shape \(2,\)"):
        fnp.sum(x, where=np.array([True, False]))
    with pytest.raises(NotImplementedError, match="mean: out= is not supported"):
        fnp.mean(x, out=np.zeros(3))
    with pytest.raises(ValueError, match="var: mean= must have the shape"):
        fnp.var(x, axis=1, mean=np.zeros(2))
    with pytest.raises(NotImplementedError, match="ravel: order must be 'C' or 'F'"):
        fnp.ravel(x, order="K")
    with pytest.raises(ValueError, match="standardize: algorithm must be"):
        ft.nn.standardize(x, algorithm="exact")


def test_small_arguments():
    x = np.arange(24.0).reshape(2, 3, 4)
    assert fnp.size(x, axis=(0, 2)) == 8 and fnp.size(x, 1) == 3
    assert fnp.argmax(x, axis=1, keepdims=None).shape == (2, 4)
    assert fnp.indices((2, 2)).dtype == np.int64
    assert ft.nn.one_hot(np.array([1]), 3).dtype == np.float64
    assert fnp.array(x, order="F").flags["F_CONTIGUOUS"]
    assert fnp.array([1.0], ndmin=3).shape == (1, 1, 1)
    np.testing.assert_array_equal(fnp.flip(m=np.arange(3)), [2, 1, 0])
    np.testing.assert_array_equal(fnp.broadcast_to(array=np.arange(2), shape=(2, 2)),
                                  [[0, 1], [0, 1]])
    np.testing.assert_array_equal(lax.reshape(operand=np.arange(4), new_sizes=(2, 2)),
                                  [[0, 1], [2, 3]])
    assert lax.nextafter(x1=1.0, x2=2.0) > 1.0
    assert lax.sin(0.5, accuracy=None) == np.sin(0.5)
    assert lax.mul(np.int8(100), np.int8(3), out_dtype=np.int32) == 300
    assert lax.mul(np.int8(100), np.int8(3), out_dtype=np.int32).dtype == np.int32
    np.testing.assert_array_equal(lax.reduce_window(np.arange(5.0), 0.0, lax.add, (2,)),
                                  [1.0, 3.0, 5.0, 7.0])
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    assert fnp.linalg.eigh(a, UPLO=None)[0][0] == fnp.linalg.eigh(a)[0][0]
    assert fnp.linalg.matrix_rank(M=np.eye(3)) == 3


def test_lstsq_numpy_resid():
    a, b = np.ones((4, 2)), np.arange(4.0)  # rank 1 < 2 columns: NumPy's empty residuals
    assert fnp.linalg.lstsq(a, b)[1].shape == (1,)
    assert fnp.linalg.lstsq(a, b, numpy_resid=True)[1].shape == (0,)
    a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    np.testing.assert_allclose(fnp.linalg.lstsq(a, b[:3], numpy_resid=True)[1],
                               np.linalg.lstsq(a, b[:3])[1], rtol=1e-12)
    with pytest.raises(ft.ConcretizationTypeError, match="numpy_resid=True"):
        ft.jit(lambda a: fnp.linalg.lstsq(a, b, numpy_resid=True))(np.ones((4, 2)))


def test_control_flow_arguments():
    assert lax.cond(True, lambda x: x + 1.0, lambda x: x, operand=1.0) == 2.0
    assert lax.switch(1, [lambda x: x, lambda x: 3 * x], operand=2.0) == 6.0
    assert ft.grad(lambda x: lax.cond(x > 0, lambda v: v * v, lambda v: -v, operand=x))(3.0
                                                                                     ) == 6.0
    with pytest.raises(TypeError, match="cond: give the operands positionally or one"):
        lax.cond(True, lambda x: x, lambda x: x, 1.0, operand=2.0)
    assert lax.fori_loop(0, 4, lambda i, x: x + i, 0.0, unroll=2) == 6.0
    with pytest.raises(ValueError, match="fori_loop: unroll= needs loop bounds known"):
        ft.jit(lambda n: lax.fori_loop(0, n, lambda i, x: x + 1.0, 0.0, unroll=2))(3)


def test_transform_arguments():
    from functools import partial

    @partial(ft.custom_jvp, nondiff_argnames=("n",))
    def power(x, n):
        return x ** n

    @power.defjvp
    def power_jvp(n, primals, tangents):
        (x,), (t,) = primals, tangents
        return power(x, n), n * x ** (n - 1) * t

    assert power.nondiff_argnums == (1,)
    assert ft.grad(power)(2.0, 3) == 12.0 == ft.grad(lambda x: power(x, n=3))(2.0)

    @partial(ft.custom_vjp, nondiff_argnames="scale")
    def scaled(x, scale):
        return x * scale

    scaled.defvjp(lambda x, scale: (x * scale, None), lambda scale, _, g: (g * scale,))
    assert ft.grad(scaled)(1.0, 4.0) == 4.0
    with pytest.raises(ValueError, match=r"custom_jvp: nondiff_argnames \['m'\]"):
        ft.custom_jvp(lambda x, n: x, nondiff_argnames=("m",))
    f = ft.checkpoint(lambda x, n: fnp.sin(x) ** n, static_argnames="n")
    assert ft.grad(lambda x: f(x, n=2))(1.0) == pytest.approx(np.sin(2.0))
    g = ft.jit(lambda x, n: x * n, static_argnums=None, static_argnames=None,
               donate_argnums=None, donate_argnames="x")
    assert g(2.0, 3.0) == 6.0


def test_vmap_sum_match_sums_batched_outputs_with_out_axes_none():
    x = np.arange(3.0)
    f = ft.vmap(lambda v, w: (v * w, w), in_axes=(0, None), out_axes=None, sum_match=True)
    assert f(x, 2.0) == (6.0, 2.0)  # the unbatched output as it is
    np.testing.assert_array_equal(ft.grad(lambda v: f(v, 2.0)[0])(x), [2.0, 2.0, 2.0])
    assert ft.jit(f)(x, 2.0)[0] == 6.0
    inner = ft.vmap(lambda v: v * v, out_axes=None, sum_match=True)
    np.testing.assert_array_equal(ft.vmap(inner)(np.ones((2, 3))), [3.0, 3.0])
    with pytest.raises(ValueError, match="sum_match=True"):
        ft.vmap(lambda v: v, out_axes=None)(x)


def test_samplers_draw_jax_bits():
    """JAX 0.10.2's ``bernoulli(PRNGKey(3), 0.3, (8,), mode="high")`` (float64 and
    float32 ``p``) and ``categorical(PRNGKey(1), logits, replace=False, ...)``."""
    key = random.PRNGKey(3)
    np.testing.assert_array_equal(random.bernoulli(key, 0.3, (8,), mode="high"),
                                  [0, 0, 1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(random.bernoulli(key, np.float32(0.3), (8,), mode="high"),
                                  [1, 0, 0, 0, 1, 0, 1, 0])
    # categorical without replacement on batched logits: JAX's top-k per batch member
    logits = np.log(np.arange(1.0, 11.0)).reshape(2, 5)
    np.testing.assert_array_equal(random.categorical(random.PRNGKey(1), logits, replace=False,
                                                     shape=(3, 2)), [[3, 0], [2, 3], [4, 1]])
    np.testing.assert_array_equal(random.categorical(random.PRNGKey(1), logits.T, axis=0,
                                                     replace=False, shape=(2, 2)),
                                  [[4, 1], [3, 2]])
    with pytest.raises(ValueError, match="bernoulli: mode must be 'low' or 'high'"):
        random.bernoulli(key, 0.3, mode="exact")
    with pytest.raises(ValueError, match="only impl='threefry2x32' exists"):
        random.key(0, impl="rbg")
