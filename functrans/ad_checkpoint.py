"""``functrans.ad_checkpoint``: JAX's ``jax.ad_checkpoint`` import path for rematerialization:
:func:`checkpoint` (alias ``remat``), :class:`checkpoint_policies` and
:func:`checkpoint_name`, which tags a value for the name-based policies.

>>> import functrans as ft, functrans.numpy as fnp
>>> from functrans.ad_checkpoint import checkpoint, checkpoint_name, checkpoint_policies
>>> def layer(x):
...     h = checkpoint_name(fnp.sin(x), "h")
...     return fnp.sum(fnp.exp(h))
...
>>> f = checkpoint(layer, policy=checkpoint_policies.save_only_these_names("h"))
>>> round(float(ft.grad(f)(0.5)), 6)  # cos(x) exp(sin(x))
1.417424
"""
from functrans.primitives.checkpoint import (checkpoint, checkpoint_name, checkpoint_policies,
                                             remat)

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]


def __dir__() -> list[str]:
    return sorted(__all__)
