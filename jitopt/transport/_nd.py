"""The grid kernels of a 2-D or a 3-D grid, chosen by the arrays' number of axes
(:mod:`jitopt.transport._kernels`, :mod:`jitopt.transport._kernels3d`)."""

import contextlib
import queue

import numpy as np

from . import _kernels, _kernels3d

__all__ = []


def legendre(f, out):
    """The exact grid Legendre transform of ``f`` into ``out`` (which may alias it)."""
    (_kernels.legendre_2d if f.ndim == 2 else _kernels3d.legendre_3d)(f, out)


def gradients(f, out):
    """The gradient of ``f`` at the cell centres into ``out`` of shape
    ``(f.ndim,) + f.shape``."""
    (_kernels.gradient if f.ndim == 2 else _kernels3d.gradient_3d)(f, *out)


def push(rho, f, out, maxsub, mult, down):
    """``out = (grad f)_# rho`` by :func:`~jitopt.transport._kernels.pushforward` (in 3-D
    at most 8 sub-samples per axis)."""
    kernel = _kernels.pushforward if rho.ndim == 2 else _kernels3d.pushforward_3d
    kernel(rho, f, out, maxsub, mult, down)


def dual(psi, phi, nu, mu):
    """The Kantorovich dual value :func:`~jitopt.transport._kernels.dual_value`."""
    return (_kernels.dual_value if psi.ndim == 2 else _kernels3d.dual_value_3d)(psi, phi, nu, mu)


def each(pool, task, items):
    """``[task(i) for i in items]``, in the threads of ``pool`` when given."""
    return list(pool.map(task, items)) if pool else [task(i) for i in items]


class Scratch:
    """Grids of one shape lent to one task at a time (:meth:`grid`, or :meth:`take` and
    :meth:`give`): as many exist as were ever out at once, so a transient grid of each input
    costs one grid per thread."""

    def __init__(self, shape):
        self.shape, self.free = shape, queue.SimpleQueue()

    def take(self):
        try:
            return self.free.get_nowait()
        except queue.Empty:
            return np.empty(self.shape)

    def give(self, a):
        self.free.put(a)

    @contextlib.contextmanager
    def grid(self):
        a = self.take()
        try:
            yield a
        finally:
            self.give(a)
