"""``functrans.scipy.signal``: signal processing, as ``jax.scipy.signal``.

Spectral analysis (``stft``, ``istft``, ``welch``, ``csd``, ``detrend``) is built on
``functrans.numpy.fft``, so it is differentiable at every order and works under ``vmap``,
``jit`` and on CuPy arrays.

>>> import numpy as np, functrans.scipy.signal as signal
>>> f, p = signal.welch(np.array([1.0, -1.0] * 8), nperseg=8, window="boxcar")
>>> float(f[np.argmax(p)])
0.5
"""
from functrans.scipy._spectral import csd, detrend, istft, stft, welch

__all__ = ["csd", "detrend", "istft", "stft", "welch"]
