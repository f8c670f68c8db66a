"""The principal logarithm of a rotation of the plane or of space in closed form (the
logarithm of :class:`~jitopt.manifolds.Orthogonal` for n = 2, 3)."""

import math

import numpy as np

__all__ = ["rotation_log", "cut_locus"]


def cut_locus():
    """The error of a logarithm asked at the cut locus (a rotation by pi)."""
    return ValueError("y is at the cut locus of x (x^T y has the eigenvalue -1, a rotation by "
                      "pi): the logarithm is not unique")


def rotation_log(r):
    r"""The principal logarithm of a rotation ``r`` of the plane or of space, in closed form:
    :math:`\theta J` for the angle :math:`\theta = \operatorname{atan2}(r_{10} - r_{01},
    r_{00} + r_{11})`; in space :math:`[\theta n]_\times` (Rodrigues), with :math:`\theta n`
    from the skew part, :math:`\sin\theta\, n`, and near :math:`\theta = \pi`, where that
    part vanishes, the axis from the symmetric part :math:`(1 - \cos\theta) nn^\top`.
    ``ValueError`` at :math:`\theta = \pi` (to rounding), where no logarithm is principal."""
    if len(r) == 2:
        s, c = 0.5 * (r[1, 0] - r[0, 1]), 0.5 * (r[0, 0] + r[1, 1])
        if c < 0.0 and abs(s) <= 1e-12:
            raise cut_locus()
        theta = math.atan2(s, c)
        return np.array([[0.0, -theta], [theta, 0.0]])
    a = 0.5 * np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    s, c = float(np.linalg.norm(a)), 0.5 * (np.trace(r) - 1.0)
    theta = math.atan2(s, c)
    if c > -0.5:  # theta below 2 pi / 3: theta / sin(theta) is well conditioned
        w = a * (theta / s) if s > 0.0 else np.zeros(3)
    else:
        if s <= 1e-12:
            raise cut_locus()
        b = 0.5 * (r + r.T) - c * np.eye(3)  # (1 - cos theta) n n^T
        j = int(np.argmax(np.diag(b)))
        n = b[:, j] / math.sqrt(b[j, j] * (1.0 - c))
        w = theta * (n if n @ a >= 0.0 else -n)
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
