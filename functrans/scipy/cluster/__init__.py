"""``functrans.scipy.cluster``: clustering helpers, as ``jax.scipy.cluster`` (``vq``).

Import the submodule itself: ``import functrans.scipy.cluster.vq``.
"""
from functrans.scipy.cluster import vq

__all__ = ["vq"]
