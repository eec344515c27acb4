"""Optional: functrans.gradcheck gives PyTorch's gradcheck verdict on custom backward rules
(skipped when torch is not installed; CI does not install it).

The rules are a sine whose backward rule is exact, 1% off, adds a tiny constant (which
only the "backward not multiplied by grad_output" check sees), or calls NumPy (which
functrans's full mode cannot vmap and must compute row by row)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

torch = pytest.importorskip("torch")

BACKWARDS = {
    "exact": lambda cos_x, g: g * cos_x,
    "one_percent_off": lambda cos_x, g: 1.01 * g * cos_x,
    "adds_1e-9": lambda cos_x, g: g * cos_x + 1e-9,
    "adds_1e-2": lambda cos_x, g: g * cos_x + 1e-2,
}


def _torch_sin(rule, via_numpy):
    class Sin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if via_numpy:
                out = rule(np.cos(x.detach().numpy()), g.detach().numpy())
                return torch.from_numpy(np.asarray(out, np.float64))
            return rule(torch.cos(x), g)
    return Sin.apply


def _functrans_sin(rule, via_numpy):
    @ft.custom_vjp
    def f(x):
        return fnp.sin(x)

    def fwd(x):
        return fnp.sin(x), fnp.cos(x)

    def bwd(cos_x, g):
        if via_numpy:
            return (rule(np.asarray(cos_x), np.asarray(g)),)
        return (rule(cos_x, g),)

    f.defvjp(fwd, bwd)
    return f


@pytest.mark.parametrize("via_numpy", [False, True], ids=["array_ops", "numpy_calls"])
@pytest.mark.parametrize("fast_mode", [False, True], ids=["full", "fast"])
@pytest.mark.parametrize("rule", sorted(BACKWARDS))
def test_gradcheck_verdict_matches_torch(rule, fast_mode, via_numpy):
    x = np.array([0.3, -0.5, 1.2])
    options = dict(eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=fast_mode)
    theirs = torch.autograd.gradcheck(
        _torch_sin(BACKWARDS[rule], via_numpy), (torch.tensor(x, requires_grad=True),),
        raise_exception=False, **options)
    result = ft.gradcheck(_functrans_sin(BACKWARDS[rule], via_numpy), modes="rev",
                          raise_exception=False, **options)(x)
    assert bool(result) == bool(theirs), result.report()
