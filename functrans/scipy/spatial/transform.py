"""``functrans.scipy.spatial.transform``: rotations in three dimensions, as
``jax.scipy.spatial.transform``: ``Rotation`` (a stack of unit quaternions, scalar last as
in SciPy) and ``Slerp`` (spherical linear interpolation between key rotations).

Both are named tuples, so pytrees (``Rotation``'s leaf is its quaternion array; ``Slerp``'s
are its times, their differences, the key rotations and the rotation vectors between them):
they pass through ``jit``, ``vmap`` and ``grad`` as JAX's do.  Every conversion is written
with ``functrans.numpy`` functions, so it is differentiable, batched over any leading axes
and keeps CuPy arrays on their device.  Where a textbook formula divides by the rotation
angle (``from_rotvec``, ``as_rotvec``), small angles use the series SciPy uses, written in
the squared angle, so the derivatives at the identity are finite and right to any order.

>>> import numpy as np
>>> from functrans.scipy.spatial.transform import Rotation
>>> r = Rotation.from_euler("z", 90, degrees=True)
>>> np.round(r.apply(np.array([1.0, 0.0, 0.0])), 12)
array([0., 1., 0.])
>>> np.round(r.as_rotvec(), 6)
array([0.      , 0.      , 1.570796])
"""
from __future__ import annotations

import re
import typing

import numpy as np

import functrans.numpy as fnp
import functrans.random as frandom
from functrans.core import get_aval
from functrans.scipy._util import inexact

__all__ = ["Rotation", "Slerp"]

#: Below this angle (radians) ``from_rotvec`` and ``as_rotvec`` use their Taylor series,
#: as SciPy and JAX do.
_SMALL_ANGLE = 1e-3

#: Euler angles this close (radians) to 0 or pi in the middle angle are a gimbal lock.
_GIMBAL_EPS = 1e-7


def _shape(x) -> tuple:
    return get_aval(x).shape


def _select(flag, if_true, if_false):
    """``if_true`` where ``flag`` else ``if_false``: decided in Python for a Python or NumPy
    boolean, elementwise (``where``) for an array flag (JAX accepts traced flags)."""
    if isinstance(flag, (bool, np.bool_)):
        return if_true if flag else if_false
    return fnp.where(flag, if_true, if_false)


def _parts(q, count: int) -> list:
    """The components ``q[..., 0]``, ..., ``q[..., count - 1]``."""
    return [q[..., i] for i in range(count)]


def _norm(v):
    """The Euclidean norm over the last axis, with derivative zero (not NaN) at the zero
    vector: the symmetric difference of a norm there (a cone's apex) is zero."""
    squared = fnp.sum(v * v, axis=-1)
    positive = squared > 0
    return fnp.where(positive, fnp.sqrt(fnp.where(positive, squared, 1)), 0)


def _normalize(q):
    return q / _norm(q)[..., None]


def _compose(p, q):
    """The quaternion product ``p q`` (the rotation ``q`` first, then ``p``), broadcast over
    the leading axes."""
    px, py, pz, pw = _parts(p, 4)
    qx, qy, qz, qw = _parts(q, 4)
    return fnp.stack([pw * qx + qw * px + (py * qz - pz * qy),
                      pw * qy + qw * py + (pz * qx - px * qz),
                      pw * qz + qw * pz + (px * qy - py * qx),
                      pw * qw - px * qx - py * qy - pz * qz], axis=-1)


def _as_matrix(q):
    x, y, z, w = _parts(q, 4)
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
    return fnp.stack([fnp.stack(row, axis=-1) for row in rows], axis=-2)


def _from_matrix(m):
    """Markley's method, as SciPy and JAX: the largest of the diagonal and the trace picks
    which component is computed from it (the others from off-diagonal sums), then the
    quaternion is normalised."""
    e = [[m[..., r, c] for c in range(3)] for r in range(3)]
    trace = e[0][0] + e[1][1] + e[2][2]
    decision = fnp.stack([e[0][0], e[1][1], e[2][2], trace], axis=-1)
    choice = fnp.argmax(decision, axis=-1)
    quat = fnp.stack([e[2][1] - e[1][2], e[0][2] - e[2][0], e[1][0] - e[0][1], 1 + trace],
                     axis=-1)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts = [None] * 4
        parts[i] = 1 - trace + 2 * e[i][i]
        parts[j] = e[j][i] + e[i][j]
        parts[k] = e[k][i] + e[i][k]
        parts[3] = e[k][j] - e[j][k]
        quat = fnp.where((choice == i)[..., None], fnp.stack(parts, axis=-1), quat)
    return _normalize(quat)


def _from_rotvec(rotvec, degrees):
    rotvec = _select(degrees, fnp.deg2rad(rotvec), rotvec)
    angle2 = fnp.sum(rotvec * rotvec, axis=-1)
    angle = _norm(rotvec)
    small = angle <= _SMALL_ANGLE
    safe = fnp.where(small, 1, angle)  # keeps the unused branch, and its derivative, finite
    scale = fnp.where(small, 0.5 - angle2 / 48 + angle2 * angle2 / 3840,
                      fnp.sin(safe / 2) / safe)
    w = fnp.where(small, 1 - angle2 / 8 + angle2 * angle2 / 384, fnp.cos(safe / 2))
    return fnp.concatenate([scale[..., None] * rotvec, w[..., None]], axis=-1)


def _as_rotvec(q, degrees):
    q = fnp.where((q[..., 3] < 0)[..., None], -q, q)  # w >= 0: the angle is in [0, pi]
    v, w = q[..., :3], q[..., 3]
    angle = 2 * fnp.arctan2(_norm(v), w)
    small = angle <= _SMALL_ANGLE
    # The small-angle series in angle**2 = 4 arctan(|v| / w)**2, itself a series in
    # |v|**2 / w**2 (w > 0 there), so that the derivatives at the identity are right.
    ratio2 = fnp.sum(v * v, axis=-1) / fnp.where(small, w * w, 1)
    angle2 = 4 * ratio2 * (1 - 2 * ratio2 / 3)
    safe = fnp.where(small, 1, angle)
    scale = fnp.where(small, 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880,
                      safe / fnp.sin(safe / 2))
    scale = _select(degrees, fnp.rad2deg(scale), scale)
    return scale[..., None] * v


def _as_mrp(q):
    one = fnp.ones_like(q[..., 3])
    sign = fnp.where(q[..., 3] < 0, -one, one)
    return sign[..., None] * q[..., :3] / (1 + sign * q[..., 3])[..., None]


def _from_mrp(mrp):
    plus_one = fnp.sum(mrp * mrp, axis=-1) + 1
    return fnp.concatenate([2 * mrp, (2 - plus_one)[..., None]], axis=-1) / plus_one[..., None]


def _inv(q):
    return fnp.concatenate([-q[..., :3], q[..., 3:]], axis=-1)


def _magnitude(q):
    return 2 * fnp.arctan2(_norm(q[..., :3]), fnp.abs(q[..., 3]))


def _make_canonical(q):
    """``q`` or ``-q``, whichever has its first nonzero component, in the order w, x, y,
    z, positive (SciPy's canonical form)."""
    x, y, z, w = _parts(q, 4)
    negative = ((w < 0) | ((w == 0) & (x < 0)) | ((w == 0) & (x == 0) & (y < 0))
                | ((w == 0) & (x == 0) & (y == 0) & (z < 0)))
    return fnp.where(negative[..., None], -q, q)


def _check_seq(seq: str, what: str, lengths: tuple) -> bool:
    """Checks an axis sequence; True for an extrinsic one (lower case)."""
    if not isinstance(seq, str) or len(seq) not in lengths:
        want = "3 axes" if lengths == (3,) else "a string of 1 to 3 axes"
        raise ValueError(f"Rotation.{what}: expected {want}, got seq={seq!r}")
    intrinsic = re.fullmatch(r"[XYZ]+", seq) is not None
    extrinsic = re.fullmatch(r"[xyz]+", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Rotation.{what}: expected axes from 'xyz' (extrinsic) or 'XYZ' "
                         f"(intrinsic), not mixed, got seq={seq!r}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Rotation.{what}: expected consecutive axes to be different, got "
                         f"seq={seq!r}")
    return extrinsic


def _elementary(axis: int, angle):
    """The quaternion of a rotation by ``angle`` about coordinate axis ``axis``."""
    zero, half = fnp.zeros_like(angle), angle / 2
    parts = [zero, zero, zero, fnp.cos(half)]
    parts[axis] = fnp.sin(half)
    return fnp.stack(parts, axis=-1)


def _as_euler(q, axes: list, extrinsic: bool):
    """SciPy's quaternion-to-Euler algorithm (Bernardes and Viollet, 2022), with the axis
    sequence known in Python."""
    if not extrinsic:
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    first, third = (0, 2) if extrinsic else (2, 0)
    comp = _parts(q, 4)
    if symmetric:
        a, b, c, d = comp[3], comp[i], comp[j], comp[k] * sign
    else:
        a, b = comp[3] - comp[j], comp[i] + comp[k] * sign
        c, d = comp[j] + comp[3], comp[k] * sign - comp[i]
    middle = 2 * fnp.arctan2(fnp.hypot(c, d), fnp.hypot(a, b))
    case = fnp.where(fnp.abs(middle - np.pi) <= _GIMBAL_EPS, 2, 0)
    case = fnp.where(fnp.abs(middle) <= _GIMBAL_EPS, 1, case)
    half_sum, half_diff = fnp.arctan2(b, a), fnp.arctan2(d, c)
    # a gimbal lock (case 1 or 2) sets the third angle to zero and folds it into the first
    angles = [None, middle, fnp.zeros_like(middle)]
    angles[0] = fnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    regular = case == 0
    angles[first] = fnp.where(regular, half_sum - half_diff, angles[first])
    angles[third] = fnp.where(regular, half_sum + half_diff, angles[third])
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    out = fnp.stack(angles, axis=-1)
    return fnp.mod(out + np.pi, 2 * np.pi) - np.pi


def _quaternions(quat, what: str):
    quat = inexact(quat)
    if len(_shape(quat)) < 1 or _shape(quat)[-1] != 4:
        raise ValueError(f"Rotation.{what}: expected quaternions of shape (..., 4), got "
                         f"shape {_shape(quat)}")
    return quat


def _vectors(x, what: str, name: str = "rotvec"):
    x = inexact(x)
    if len(_shape(x)) < 1 or _shape(x)[-1] != 3:
        raise ValueError(f"Rotation.{what}: expected {name} of shape (..., 3), got shape "
                         f"{_shape(x)}")
    return x


class Rotation(typing.NamedTuple):
    """Rotations in three dimensions, as ``jax.scipy.spatial.transform.Rotation`` (and
    ``scipy.spatial.transform.Rotation``): ``quat`` holds unit quaternions ``(x, y, z, w)``,
    scalar last, of shape ``(4,)`` for a single rotation or ``(..., 4)`` for a stack (any
    number of leading axes; most constructors broadcast over them).

    Build rotations with the class methods (``from_quat``, ``from_matrix``, ``from_rotvec``,
    ``from_mrp``, ``from_euler``, ``identity``, ``random``, ``concatenate``); ``Rotation(q)``
    takes ``q`` as it is, without normalising it, as JAX's does.  ``r * s`` is the
    composition (``s`` first, then ``r``), ``r[i]`` and ``len(r)`` index a stack.

    ``Rotation`` is a named tuple, so a pytree whose one leaf is ``quat``: it passes through
    ``jit``, ``vmap`` and ``grad`` (whose gradient is a ``Rotation`` holding the gradient of
    the quaternions).  Every method is differentiable.

    Parameters
    ----------
    quat : array_like
        Quaternions, scalar last, shape ``(4,)`` or ``(..., 4)``, used as they are.

    Examples
    --------
    >>> import numpy as np, functrans as ft
    >>> from functrans.scipy.spatial.transform import Rotation
    >>> r = Rotation.from_euler("z", 90, degrees=True)
    >>> s = Rotation.from_euler("x", 90, degrees=True)
    >>> np.round((r * s).as_matrix(), 12) + 0.0  # (+ 0.0: no negative zeros)
    array([[0., 0., 1.],
           [1., 0., 0.],
           [0., 1., 0.]])
    >>> turn = lambda angle: Rotation.from_rotvec(np.array([0.0, 0.0, 1.0]) * angle)
    >>> float(ft.grad(lambda a: turn(a).apply(np.array([1.0, 0.0, 0.0]))[1])(0.0))
    1.0
    """
    quat: typing.Any

    # -- constructors ------------------------------------------------------------------

    @classmethod
    def concatenate(cls, rotations: typing.Sequence):
        """The rotations of a sequence of ``Rotation`` objects, in one stack (a single
        rotation counts as a stack of one; JAX's concatenates the quaternions as they are).

        >>> from functrans.scipy.spatial.transform import Rotation
        >>> len(Rotation.concatenate([Rotation.identity(), Rotation.identity(3)]))
        4
        """
        quats = [r.quat for r in rotations]
        return cls(fnp.concatenate([q[None] if len(_shape(q)) == 1 else q for q in quats]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False):
        """Rotations from Euler angles about the axes of ``seq``: 1 to 3 of ``"xyz"``
        (extrinsic: about the fixed frame's axes) or of ``"XYZ"`` (intrinsic: about the
        rotating frame's), consecutive axes different.  The last axis of ``angles`` holds
        one angle per axis of ``seq`` (a scalar is one angle), in radians or, with
        ``degrees``, in degrees.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> r = Rotation.from_euler("ZYX", np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.5]]))
        >>> r.quat.shape
        (2, 4)
        >>> np.round(r.as_euler("ZYX"), 12)
        array([[0.1, 0.2, 0.3],
               [0. , 0. , 0.5]])
        """
        extrinsic = _check_seq(seq, "from_euler", (1, 2, 3))
        angles = fnp.atleast_1d(inexact(angles))
        if _shape(angles)[-1] != len(seq):
            raise ValueError(f"Rotation.from_euler: expected the last axis of angles to hold "
                             f"{len(seq)} angle(s) for seq={seq!r}, got shape "
                             f"{_shape(angles)}")
        angles = _select(degrees, fnp.deg2rad(angles), angles)
        axes = ["xyz".index(a) for a in seq.lower()]
        result = _elementary(axes[0], angles[..., 0])
        for n in range(1, len(axes)):
            quat = _elementary(axes[n], angles[..., n])
            result = _compose(quat, result) if extrinsic else _compose(result, quat)
        return cls(result)

    @classmethod
    def from_matrix(cls, matrix):
        """Rotations from rotation matrices, shape ``(3, 3)`` or ``(..., 3, 3)``.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> m = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
        >>> np.round(Rotation.from_matrix(m).as_quat(), 6)
        array([0.      , 0.      , 0.707107, 0.707107])
        """
        matrix = inexact(matrix)
        if len(_shape(matrix)) < 2 or _shape(matrix)[-2:] != (3, 3):
            raise ValueError(f"Rotation.from_matrix: expected matrices of shape (..., 3, 3), "
                             f"got shape {_shape(matrix)}")
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp):
        """Rotations from Modified Rodrigues Parameters: the unit axis times
        ``tan(angle / 4)``, shape ``(3,)`` or ``(..., 3)``.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> round(float(Rotation.from_mrp(np.array([0.0, 0.0, 1.0])).magnitude()), 6)
        3.141593
        """
        return cls(_from_mrp(_vectors(mrp, "from_mrp", "mrp")))

    @classmethod
    def from_quat(cls, quat):
        """Rotations from quaternions ``(x, y, z, w)``, scalar last, shape ``(4,)`` or
        ``(..., 4)``; they are normalised.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> Rotation.from_quat(np.array([0.0, 0.0, 3.0, 4.0])).quat
        array([0. , 0. , 0.6, 0.8])
        """
        return cls(_normalize(_quaternions(quat, "from_quat")))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False):
        """Rotations from rotation vectors: the axis times the angle (radians, or degrees
        with ``degrees``), shape ``(3,)`` or ``(..., 3)``.  Differentiable at the zero
        vector too.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> np.round(Rotation.from_rotvec(np.array([0.0, 90.0, 0.0]), degrees=True).quat, 6)
        array([0.      , 0.707107, 0.      , 0.707107])
        """
        return cls(_from_rotvec(_vectors(rotvec, "from_rotvec"), degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float):
        """The identity rotation, or a stack of ``num`` of them (JAX's takes only
        ``num=None``).

        >>> from functrans.scipy.spatial.transform import Rotation
        >>> Rotation.identity().quat
        array([0., 0., 0., 1.])
        >>> Rotation.identity(2).quat.shape
        (2, 4)
        """
        quat = fnp.asarray([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(quat if num is None else fnp.tile(quat, (num, 1)))

    @classmethod
    def random(cls, random_key, num: int | None = None):
        """Rotations drawn uniformly (by the Haar measure): normalised standard normal
        quaternions, as SciPy draws them, with ``functrans.random``'s ``random_key``
        (JAX's raises ``NotImplementedError``).

        >>> import numpy as np, functrans as ft
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> r = Rotation.random(ft.random.key(0), 5)
        >>> r.quat.shape, bool(np.allclose(np.linalg.norm(r.quat, axis=-1), 1.0))
        ((5, 4), True)
        """
        shape = (4,) if num is None else (num, 4)
        return cls(_normalize(frandom.normal(random_key, shape)))

    # -- the container -----------------------------------------------------------------

    def __getitem__(self, indexer):
        """The rotation(s) at ``indexer`` of a stack."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(fnp.asarray(self.quat)[indexer])

    def __len__(self):
        """The number of rotations of a stack (its first axis)."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return _shape(self.quat)[0]

    def __mul__(self, other) -> Rotation:
        """The composition ``self * other``: ``other`` first, then ``self`` (normalised)."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(_compose(self.quat, other.quat))

    @property
    def single(self) -> bool:
        """Whether this is a single rotation (``quat`` of shape ``(4,)``), not a stack."""
        return len(_shape(self.quat)) == 1

    # -- conversions -------------------------------------------------------------------

    def apply(self, vectors, inverse: bool = False):
        """The rotation(s) applied to ``vectors`` (shape ``(3,)`` or ``(..., 3)``,
        broadcast against the rotations' leading axes); with ``inverse``, their inverses.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> r = Rotation.from_rotvec(np.array([0.0, 0.0, np.pi / 2]))
        >>> np.round(r.apply(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), inverse=True), 12)
        array([[ 0., -1.,  0.],
               [ 1.,  0.,  0.]])
        """
        vectors = _vectors(vectors, "apply", "vectors")
        matrix = self.as_matrix()
        matrix = _select(inverse, fnp.swapaxes(matrix, -1, -2), matrix)
        return fnp.matmul(matrix, vectors[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles about the 3 axes of ``seq`` (as ``from_euler``'s; here exactly 3),
        in ``[-pi, pi)`` (the middle one in ``[0, pi]`` for a symmetric sequence such as
        ``"zxz"``, else in ``[-pi / 2, pi / 2]``), in radians or, with ``degrees``,
        degrees.  At a gimbal lock (the middle angle within 1e-7 of its limits) the third
        angle is set to zero, as SciPy does (without its warning); the angles are
        differentiable away from it.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> r = Rotation.from_euler("xyz", np.array([10.0, 20.0, 30.0]), degrees=True)
        >>> np.round(r.as_euler("xyz", degrees=True), 9)
        array([10., 20., 30.])
        """
        extrinsic = _check_seq(seq, "as_euler", (3,))
        angles = _as_euler(self.quat, ["xyz".index(a) for a in seq.lower()], extrinsic)
        return _select(degrees, fnp.rad2deg(angles), angles)

    def as_matrix(self):
        """Rotation matrices, shape ``(3, 3)`` or ``(..., 3, 3)``.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> np.round(Rotation.from_euler("x", np.pi / 2).as_matrix(), 12)
        array([[ 1.,  0.,  0.],
               [ 0.,  0., -1.],
               [ 0.,  1.,  0.]])
        """
        return _as_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters (the axis times ``tan(angle / 4)``), of norm at
        most 1 (the angle taken in ``[0, pi]``).

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> np.round(Rotation.from_rotvec(np.array([0.0, 0.0, np.pi])).as_mrp(), 12)
        array([0., 0., 1.])
        """
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False):
        """Rotation vectors: the axis times the angle in ``[0, pi]`` (radians, or degrees
        with ``degrees``).  Differentiable at the identity too (there the derivative with
        respect to the vector part ``(x, y, z)`` of the quaternion is twice the identity
        matrix; a naive ``angle / sin(angle / 2)`` gives NaN).

        >>> import numpy as np, functrans as ft
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> np.round(Rotation.from_euler("y", 30.0, degrees=True).as_rotvec(degrees=True), 9)
        array([ 0., 30.,  0.])
        >>> ft.grad(lambda r: r.as_rotvec()[0])(Rotation.identity()).quat
        array([2., 0., 0., 0.])
        """
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """The quaternions, scalar last (``scalar_first``: ``(w, x, y, z)``).  With
        ``canonical``, of ``q`` and ``-q`` (the same rotation) the one whose first nonzero
        component in the order w, x, y, z is positive.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> r = Rotation.from_quat(np.array([0.0, 0.0, 0.6, -0.8]))
        >>> r.as_quat(canonical=True, scalar_first=True) + 0.0  # (+ 0.0: no negative zeros)
        array([ 0.8,  0. ,  0. , -0.6])
        """
        quat = _make_canonical(self.quat) if canonical else self.quat
        if scalar_first:
            return fnp.concatenate([quat[..., 3:], quat[..., :3]], axis=-1)
        return quat

    def inv(self):
        """The inverse rotation(s).

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> r = Rotation.from_rotvec(np.array([0.3, -0.2, 0.5]))
        >>> bool(np.allclose((r * r.inv()).as_matrix(), np.eye(3)))
        True
        """
        return Rotation(_inv(self.quat))

    def magnitude(self):
        """The rotation angle(s), in ``[0, pi]`` radians (derivative zero at the
        identity, where the angle has a cone's kink).

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> float(Rotation.from_rotvec(np.array([0.0, -0.25, 0.0])).magnitude())
        0.25
        """
        return _magnitude(self.quat)

    def mean(self, weights=None):
        """The (weighted) mean rotation of a stack: the eigenvector of the largest
        eigenvalue of ``sum_i weights[i] q_i q_i^T`` (Markley et al.), as SciPy and JAX.
        A single rotation is its own mean.

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation
        >>> r = Rotation.from_euler("z", np.array([[10.0], [30.0]]), degrees=True)
        >>> np.round(np.abs(r.mean().as_euler("zyx", degrees=True)), 9)
        array([20.,  0.,  0.])
        """
        quat = self.quat
        if self.single:
            quat = quat[None]
        if len(_shape(quat)) != 2:
            raise ValueError(f"Rotation.mean: expected a 1-D stack of rotations, got "
                             f"quaternions of shape {_shape(quat)}")
        count = _shape(quat)[0]
        if weights is None:
            weighted = quat
        else:
            weights = fnp.asarray(weights, dtype=get_aval(quat).dtype)
            if len(_shape(weights)) != 1:
                raise ValueError(f"Rotation.mean: expected weights to be 1-D, got shape "
                                 f"{_shape(weights)}")
            if _shape(weights)[0] != count:
                raise ValueError(f"Rotation.mean: expected one weight per rotation, got "
                                 f"{_shape(weights)[0]} weights and {count} rotations")
            weighted = quat * weights[:, None]
        _, vectors = fnp.linalg.eigh(fnp.matmul(fnp.swapaxes(weighted, 0, 1), quat))
        return Rotation(vectors[:, -1])


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation between key rotations at increasing key times, as
    ``jax.scipy.spatial.transform.Slerp``: build it with ``Slerp.init(times, rotations)``
    and call it with the times to interpolate at (a scalar gives a single rotation, a 1-D
    array a stack).  Between two keys the rotation turns at a constant rate about one
    axis.  Times before the first key or after the last are extrapolated from the first or
    last interval (SciPy raises; JAX's extrapolates below the first key but, after the
    last, restarts from the last interval's start).

    ``Slerp`` is a named tuple, so a pytree: the interpolation is differentiable in the
    query times, the key times and the key rotations.

    Attributes
    ----------
    times : array
        The key times, increasing (not checked: they may be traced).
    timedelta : array
        ``diff(times)``.
    rotations : Rotation
        The key rotations but the last: the start of each interval.
    rotvecs : array
        The rotation vector of each interval: ``(rotations[i].inv() * key[i + 1])``.

    Examples
    --------
    >>> import numpy as np
    >>> from functrans.scipy.spatial.transform import Rotation, Slerp
    >>> keys = Rotation.from_euler("z", np.array([[0.0], [90.0], [180.0]]), degrees=True)
    >>> slerp = Slerp.init(np.array([0.0, 1.0, 3.0]), keys)
    >>> np.round(slerp(np.array([0.5, 2.0])).as_euler("zyx", degrees=True), 9)
    array([[ 45.,   0.,   0.],
           [135.,   0.,   0.]])
    """
    times: typing.Any
    timedelta: typing.Any
    rotations: Rotation
    rotvecs: typing.Any

    @classmethod
    def init(cls, times, rotations: Rotation):
        """The interpolator between ``rotations`` (a stack of at least 2) at the key
        ``times`` (1-D, one per rotation, increasing).

        >>> import numpy as np
        >>> from functrans.scipy.spatial.transform import Rotation, Slerp
        >>> keys = Rotation.from_rotvec(np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
        >>> slerp = Slerp.init(np.array([0.0, 2.0]), keys)
        >>> np.round(slerp(0.5).as_rotvec(), 12)
        array([0.  , 0.  , 0.25])
        """
        if not isinstance(rotations, Rotation):
            raise TypeError(f"Slerp.init: rotations must be a Rotation, got "
                            f"{type(rotations).__name__}")
        if rotations.single or len(rotations) < 2:
            raise ValueError("Slerp.init: rotations must be a stack of at least 2 rotations")
        quat = rotations.quat
        if len(_shape(quat)) != 2:
            raise ValueError(f"Slerp.init: expected a 1-D stack of rotations, got "
                             f"quaternions of shape {_shape(quat)}")
        times = fnp.asarray(times, dtype=get_aval(quat).dtype)
        if len(_shape(times)) != 1:
            raise ValueError(f"Slerp.init: expected times to be 1-D, got shape "
                             f"{_shape(times)}")
        if _shape(times)[0] != len(rotations):
            raise ValueError(f"Slerp.init: expected one time per rotation, got "
                             f"{_shape(times)[0]} times and {len(rotations)} rotations")
        starts = Rotation(quat[:-1])
        rotvecs = (starts.inv() * Rotation(quat[1:])).as_rotvec()
        return cls(times=times, timedelta=fnp.diff(times), rotations=starts, rotvecs=rotvecs)

    def __call__(self, times):
        """The interpolated rotations at ``times`` (a scalar or 1-D)."""
        times = fnp.asarray(times, dtype=get_aval(self.times).dtype)
        if len(_shape(times)) > 1:
            raise ValueError(f"Slerp: times must be at most 1-D, got shape {_shape(times)}")
        single = len(_shape(times)) == 0
        times = fnp.atleast_1d(times)
        last = _shape(self.timedelta)[0] - 1
        index = fnp.clip(fnp.searchsorted(self.times, times) - 1, 0, last)
        alpha = (times - fnp.take(self.times, index)) / fnp.take(self.timedelta, index)
        starts = Rotation(fnp.take(self.rotations.quat, index, axis=0))
        steps = fnp.take(self.rotvecs, index, axis=0) * alpha[:, None]
        result = starts * Rotation.from_rotvec(steps)
        return result[0] if single else result
