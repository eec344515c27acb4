"""``functrans.scipy.spatial``: spatial algorithms, as ``jax.scipy.spatial``
(``transform``: ``Rotation`` and ``Slerp``).

Import the submodule itself: ``import functrans.scipy.spatial.transform``.
"""
from functrans.scipy.spatial import transform

__all__ = ["transform"]
