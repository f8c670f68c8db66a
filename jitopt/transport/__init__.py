"""Exact optimal transport on regular grids.

The building blocks (discrete Legendre transform and c-transform, Neumann inverse
Laplacian, pushforward by the gradient of a convex potential, back-and-forth W2) on 2-D and
3-D grids, exact Wasserstein barycenters of 2-D and 3-D densities (WDHA: :func:`wdha`, and
:func:`wdha_barycenter` with POT's interface; Sobolev gradient ascent on the dual:
:func:`sga`, and :func:`sga_barycenter`), and exact 1-D W2 and barycenters by quantiles.
"""

from ._grid import (
    c_transform,
    grid_coordinates,
    legendre_transform,
    potential_gradient,
    pushforward,
    wasserstein2_grid,
)
from ._onedim import barycenter_1d, wasserstein2_1d
from ._poisson import inverse_laplacian
from ._sga import sga
from ._wdha import wdha
from ._wdha_pot import sga_barycenter, wdha_barycenter

__all__ = [
    "grid_coordinates",
    "legendre_transform",
    "c_transform",
    "inverse_laplacian",
    "potential_gradient",
    "pushforward",
    "wasserstein2_grid",
    "wdha",
    "wdha_barycenter",
    "sga",
    "sga_barycenter",
    "wasserstein2_1d",
    "barycenter_1d",
]
