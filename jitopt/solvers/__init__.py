"""Solvers. Each is registered as a method of :func:`jitopt.minimize`."""

from .rgd import rgd

__all__ = ["rgd"]
