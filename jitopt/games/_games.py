r"""Normal-form and polymatrix games and their variational inequalities.

A game with mixed strategies :math:`x_i \in \Delta(m_i)` and multilinear utilities
:math:`u_i` is the VI with :math:`X = \prod_i \Delta(m_i)` and
:math:`F(x) = -(\nabla_{x_i} u_i(x))_i`. Its EVI solutions for the block-diagonal linear
deviations are the correlated equilibria (CE; a mixture of product distributions
:math:`\sum_k w_k \otimes_i x^k_i` read as a distribution over pure profiles); for all affine
self-maps of :math:`X` they are the anonymous linear correlated equilibria (ALCE), a strict
refinement of CE (Zhang et al., ICML 2025, §5).
"""

import numbers

import numpy as np

from .._core.result import OptimizeResult
from ..problems import AffineOperator, NormalFormOperator, VIProblem
from ..sets import ProductOfSimplices
from ..evi import evi, evi_gap
from ..validation import check_array, check_choice, check_int, check_rng

__all__ = ["NormalFormGame", "PolymatrixGame", "concave_game"]


class _GameBase:
    """What normal-form and polymatrix games share (``sizes``, ``offsets``, ``payoffs()``)."""

    def _profile(self, x, name="x"):
        """The players' blocks of the mixed profile ``x``; a ValueError naming ``name``
        when a block is not a probability vector (to 1e-7)."""
        x = check_array(name, x)
        if x.shape != (self.dim,):
            raise ValueError(f"{name} must be a concatenated mixed profile of shape "
                             f"({self.dim},), got {x.shape}")
        if not ProductOfSimplices(self.sizes).contains(x, 1e-7):
            raise ValueError(f"{name} must be a mixed profile (each player's block a "
                             f"probability vector)")
        return [x[self.offsets[i]:self.offsets[i + 1]] for i in range(self.n_players)]

    def vi_problem(self):
        """The :class:`jitopt.problems.VIProblem` of the game (domain the product of the
        players' simplices)."""
        return VIProblem(self.operator, ProductOfSimplices(self.sizes))

    def correlated_equilibrium(self, tol=1e-3, deviations="ce", **options):
        r"""An :math:`\varepsilon`-CE (``deviations="ce"``, the sum over players of the CE
        regrets at most ``tol``) or :math:`\varepsilon`-ALCE (``deviations="linear"``: all
        affine deviations, the anonymous linear correlated equilibria) computed by
        :func:`jitopt.solvers.evi`, as a mixture of mixed profiles (``points``,
        ``weights``); ``deviations`` and every other option (``options``) are those of
        :func:`~jitopt.solvers.evi`, with other defaults. With ``deviations="ce"``:
        ``learner="prm+"`` (predictive regret matching+), ``weighting="uniform"``,
        ``check_every=100`` and ``reweight="cg"`` (the column generation over the iterates,
        after 200 rounds, or at the first gap check within ``20 * tol`` if earlier, then
        each time the rounds double), chosen on the defaults battery (``python -m benchmarks
        defaults``): without the reweighting, zero-sum games converge like :math:`1/T` only,
        and linear weighting needs up to eight times more rounds on them. With
        ``deviations="linear"``: ``learner="prm+"``, ``weighting="uniform"``,
        ``reweight=True`` with ``reweight_max=1000`` (the LP over up to 1000 iterates, after
        100 rounds, then each time the rounds double), which certifies ALCE gaps of
        :math:`10^{-4}` on the zero-sum games of the battery, out of reach of the regret loop
        alone. Pass ``reweight=False`` for the plain regret loop.

        Examples
        --------
        Rock-paper-scissors: the marginals of a CE (``res.x``, the mean of the mixture)
        approach the unique Nash equilibrium, uniform play.

        >>> import numpy as np
        >>> from jitopt.games import NormalFormGame
        >>> A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
        >>> res = NormalFormGame([A, -A]).correlated_equilibrium(tol=1e-4)
        >>> bool(res.success), bool(np.abs(res.x - 1 / 3).max() < 1e-3)
        (True, True)
        """
        check_choice("deviations", deviations, ("ce", "linear"))
        defaults = {"learner": "prm+", "weighting": "uniform"}
        if deviations == "ce":
            defaults.update(check_every=100, reweight="cg")
        else:
            defaults.update(reweight=True, reweight_max=1000)
        return evi(self.vi_problem(), tol=tol, deviations=deviations,
                   **{**defaults, **options})

    def mixture_gaps(self, points, weights=None):
        """Per-player ALCE, CE and CCE gaps of a mixture of mixed profiles (closed form)."""
        problem = self.vi_problem()
        return evi_gap(problem, points, weights)

    def joint_distribution(self, points, weights=None):
        r"""The distribution :math:`\sum_k w_k \otimes_i x^k_i` over pure profiles (a tensor
        of shape ``sizes``)."""
        P = check_array("points", points)
        P = P.reshape(1, -1) if P.ndim == 1 else P
        if P.ndim != 2 or P.shape[1] != self.dim or P.shape[0] == 0:
            raise ValueError(f"points must have shape (k, {self.dim}) with k >= 1, got "
                             f"{np.shape(points)}")
        if weights is None:
            w = np.full(P.shape[0], 1.0 / P.shape[0])
        else:
            w = check_array("weights", weights)
            if w.shape != (P.shape[0],) or not np.all(np.isfinite(w)) or (w < 0).any() \
                    or w.sum() <= 0:
                raise ValueError(f"weights must be {P.shape[0]} nonnegative finite numbers "
                                 f"with a positive sum, got {weights!r}")
            w = w / w.sum()
        profiles = [self._profile(x, f"points[{k}]") for k, x in enumerate(P)]
        out = np.zeros(self.sizes)
        for wk, blocks in zip(w, profiles):
            t = np.array(wk)
            for blk in blocks:
                t = np.multiply.outer(t, blk)
            out += t
        return out

    def _check_dist(self, dist):
        p = check_array("dist", dist)
        if p.shape != self.sizes:
            raise ValueError(f"dist must have shape {self.sizes}, got {p.shape}")
        if not np.all(np.isfinite(p)) or (p < -1e-9).any() or abs(p.sum() - 1.0) > 1e-6:
            raise ValueError("dist must be a probability distribution over pure profiles")
        return p

    def _regret_matrices(self, p):
        """G_i[a, b] = sum_{a_-i} p(a, a_-i) u_i(b, a_-i) for each player."""
        U = self.payoffs()
        out = []
        for i in range(self.n_players):
            Pi = np.moveaxis(p, i, 0).reshape(self.sizes[i], -1)
            Ui = np.moveaxis(U[i], i, 0).reshape(self.sizes[i], -1)
            out.append(Pi @ Ui.T)
        return out

    def ce_gap(self, dist):
        r"""Per-player CE regrets of a joint distribution :math:`p`:
        :math:`\sum_a \max_b \sum_{a_{-i}} p(a, a_{-i}) [u_i(b, a_{-i}) - u_i(a, a_{-i})]`."""
        G = self._regret_matrices(self._check_dist(dist))
        return np.array([(g.max(axis=1) - np.diag(g)).sum() for g in G])

    def cce_gap(self, dist):
        r"""Per-player CCE regrets :math:`\max_b \mathbb E_p u_i(b, a_{-i}) - \mathbb E_p u_i`
        (may be negative)."""
        G = self._regret_matrices(self._check_dist(dist))
        return np.array([g.sum(axis=0).max() - np.trace(g) for g in G])

    def ce_lp(self, objective="welfare"):
        r"""A correlated equilibrium by the CE linear program over pure profiles (HiGHS).

        For each player :math:`i` and actions :math:`a \ne b`:
        :math:`\sum_{a_{-i}} p(a, a_{-i})[u_i(b, a_{-i}) - u_i(a, a_{-i})] \le 0`,
        :math:`p \ge 0`, :math:`\sum p = 1`; maximise the welfare :math:`\sum_i \mathbb E_p u_i`
        (``"welfare"``) or any feasible point (``"feasibility"``).

        Returns
        -------
        OptimizeResult
            ``dist`` (tensor of shape ``sizes``), ``welfare``, ``n_variables``, ``nnz``,
            ``status``/``success``/``message`` of HiGHS.
        """
        from scipy.optimize import linprog

        check_choice("objective", objective, ("welfare", "feasibility"))
        U = self.payoffs()
        N = int(np.prod(self.sizes))
        # the constraints are homogeneous in the payoffs: scale them to a largest entry of 1
        # (HiGHS' absolute tolerances) without changing the feasible set or the argmax
        top = np.abs(U).max()
        unit = 1.0 / top if top > 0 else 1.0
        A_ub = self.ce_constraints() * unit
        cost = -U.reshape(self.n_players, N).sum(axis=0) * unit if objective == "welfare" \
            else np.zeros(N)
        rows = A_ub.shape[0] > 0  # no constraint when every player has one action
        r = linprog(cost, A_ub=A_ub if rows else None, b_ub=np.zeros(A_ub.shape[0]) if rows
                    else None, A_eq=np.ones((1, N)), b_eq=[1.0], bounds=(0, None),
                    method="highs")
        dist = None
        if r.x is not None:  # clip and renormalise HiGHS's rounding (tolerance about 1e-7)
            dist = np.maximum(r.x, 0.0).reshape(self.sizes)
            dist /= dist.sum()
        welfare = float((U.reshape(self.n_players, N).sum(0) @ dist.ravel())) if dist is not None else np.nan
        return OptimizeResult(dist=dist, welfare=welfare, n_variables=N, nnz=int(A_ub.nnz),
                              status=int(r.status), success=bool(r.status == 0), message=r.message)

    def ce_constraints(self):
        r"""The CE constraints over pure profiles as a sparse matrix :math:`G` (a
        ``scipy.sparse.csr_matrix``): a distribution :math:`p` (flattened row-major over
        the profiles) is a CE iff :math:`p \ge 0`, :math:`\sum p = 1` and :math:`G p \le 0`.
        Row :math:`(i, a, b)`, for each player :math:`i` and actions :math:`a \ne b` in that
        order, is :math:`\sum_{a_{-i}} p(a, a_{-i})[u_i(b, a_{-i}) - u_i(a, a_{-i})]`."""
        import scipy.sparse as sp

        U = self.payoffs()
        N = int(np.prod(self.sizes))
        idx = np.arange(N).reshape(self.sizes)
        rows, cols, vals = [], [], []
        row = 0
        for i in range(self.n_players):
            m = self.sizes[i]
            Ii = np.moveaxis(idx, i, 0).reshape(m, -1)
            Ui = np.moveaxis(U[i], i, 0).reshape(m, -1)
            for a in range(m):
                for b in range(m):
                    if a == b:
                        continue
                    cols.append(Ii[a])
                    vals.append(Ui[b] - Ui[a])
                    rows.append(np.full(Ii.shape[1], row))
                    row += 1
        if not rows:  # every player has one action: no deviation
            return sp.csr_matrix((0, N))
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(row, N))


def _sizes_offsets(sizes):
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return tuple(int(m) for m in sizes), off


class NormalFormGame(_GameBase):
    r"""An ``n``-player normal-form game.

    Parameters
    ----------
    payoffs : sequence of n array_like, or array_like of shape (n, m_1, ..., m_n)
        ``payoffs[i][a_1, ..., a_n]`` is player ``i``'s payoff at the pure profile
        :math:`(a_1, \dots, a_n)`. Two-player games: ``[A, B]``.

    Attributes
    ----------
    n_players : int
    sizes : tuple of int
        Actions per player.
    operator : jitopt.problems.NormalFormOperator
        :math:`F(x) = -(\nabla_{x_i} u_i(x))_i` on concatenated mixed profiles (compiled).

    Examples
    --------
    The battle of the sexes: the two pure equilibria, each with probability 1/2, are a
    correlated equilibrium (no player gains by deviating from a recommendation), while
    each player would lose 1 by ignoring the recommendations altogether.

    >>> import numpy as np
    >>> from jitopt.games import NormalFormGame
    >>> game = NormalFormGame([[[3.0, 0.0], [0.0, 2.0]], [[2.0, 0.0], [0.0, 3.0]]])
    >>> game.n_players, game.sizes
    (2, (2, 2))
    >>> dist = np.array([[0.5, 0.0], [0.0, 0.5]])
    >>> game.ce_gap(dist), game.cce_gap(dist)
    (array([0., 0.]), array([-1., -1.]))
    """

    def __init__(self, payoffs):
        try:
            payoffs = list(payoffs)
        except TypeError:
            raise TypeError(f"payoffs must be a sequence of numeric arrays, got "
                            f"{type(payoffs).__name__}") from None
        arrays = [check_array(f"payoffs[{i}]", p) for i, p in enumerate(payoffs)]
        n = len(arrays)
        if n < 1:
            raise ValueError("payoffs must hold one array per player")
        shape = arrays[0].shape
        for i, p in enumerate(arrays):
            if p.ndim != n or p.shape != shape:
                raise ValueError(f"payoffs[{i}] must have one axis per player and all payoff "
                                 f"arrays the same shape; got shapes "
                                 f"{[a.shape for a in arrays]} for {n} players")
        if min(shape) < 1:
            raise ValueError("every player needs at least one action")
        self.n_players = n
        self.sizes, self.offsets = _sizes_offsets(shape)
        self.dim = int(self.offsets[-1])
        self._U = np.ascontiguousarray(np.stack(arrays))
        self.operator = NormalFormOperator(self._U)

    def payoffs(self):
        """The payoff tensors, shape ``(n, m_1, ..., m_n)`` (a copy)."""
        return self._U.copy()

    def expected_payoffs(self, x):
        """Expected payoff of each player at the mixed profile ``x`` (concatenated; a
        ``ValueError`` when a player's block is not a probability vector)."""
        blocks = self._profile(x)
        out = np.empty(self.n_players)
        for i in range(self.n_players):
            t = self._U[i]
            for blk in reversed(blocks):
                t = t @ blk
            out[i] = t
        return out


class PolymatrixGame(_GameBase):
    r"""A polymatrix (network) game: :math:`u_i(x) = \sum_{j} x_i^\top A_{ij} x_j` over the
    edges :math:`(i, j)`; its operator is linear, :math:`F_i(x) = -\sum_j A_{ij} x_j`.

    Parameters
    ----------
    sizes : sequence of int
        Actions per player.
    edges : dict
        ``{(i, j): A_ij}`` with ``A_ij`` of shape ``(m_i, m_j)``: player ``i``'s payoff from
        its interaction with ``j`` (give ``(j, i)`` separately for ``j``'s side).

    Examples
    --------
    A ring of four players with two actions each, random payoffs, and an
    :math:`\varepsilon`-correlated equilibrium of it:

    >>> from jitopt.games import PolymatrixGame
    >>> game = PolymatrixGame.ring(4, m=2, rng=3)
    >>> game.sizes, sorted(game.edges)[:3]
    ((2, 2, 2, 2), [(0, 1), (0, 3), (1, 0)])
    >>> res = game.correlated_equilibrium(tol=1e-3, rng=0)
    >>> bool(res.success), bool(res.gap <= 1e-3)
    (True, True)
    """

    def __init__(self, sizes, edges):
        if isinstance(sizes, numbers.Integral) or not hasattr(sizes, "__len__"):
            raise TypeError("sizes must be a sequence of positive integers")
        sizes = [check_int(f"sizes[{i}]", m, low=1) for i, m in enumerate(sizes)]
        if len(sizes) < 1:
            raise ValueError("sizes must hold at least one positive integer, got []")
        if not isinstance(edges, dict):
            raise TypeError("edges must be a dict {(i, j): A_ij}")
        self.n_players = len(sizes)
        self.sizes, self.offsets = _sizes_offsets(sizes)
        self.dim = int(self.offsets[-1])
        n, off = self.n_players, self.offsets
        self.edges = {}
        A = np.zeros((self.dim, self.dim))
        for key, Aij in edges.items():
            if not (isinstance(key, tuple) and len(key) == 2
                    and all(isinstance(k, numbers.Integral)
                            and not isinstance(k, (bool, np.bool_)) for k in key)):
                raise TypeError(f"edges keys must be pairs (i, j) of player indices, got "
                                f"{key!r}")
            i, j = key
            if not (0 <= i < n and 0 <= j < n) or i == j:
                raise ValueError(f"edge {key} must join two different players in 0..{n - 1}")
            Aij = check_array(f"edges[{key}]", Aij)
            if Aij.shape != (self.sizes[i], self.sizes[j]):
                raise ValueError(f"edges[{key}] must have shape {(self.sizes[i], self.sizes[j])}, "
                                 f"got {Aij.shape}")
            self.edges[(int(i), int(j))] = Aij
            A[off[i]:off[i + 1], off[j]:off[j + 1]] -= Aij
        self.operator = AffineOperator(A)

    @classmethod
    def ring(cls, n, m=3, rng=None, zero_sum=False):
        """Players on a ring, each edge in both directions with payoffs U(-1, 1) (or
        ``A_ji = -A_ij^T`` when ``zero_sum``)."""
        n = check_int("n", n, 3)
        m = check_int("m", m, 1)
        gen = check_rng(rng)
        edges = {}
        for i in range(n):
            j = (i + 1) % n
            edges[(i, j)] = gen.uniform(-1, 1, (m, m))
            edges[(j, i)] = -edges[(i, j)].T if zero_sum else gen.uniform(-1, 1, (m, m))
        return cls([m] * n, edges)

    def payoffs(self):
        """Dense payoff tensors ``(n, m_1, ..., m_n)`` (only for small games)."""
        N = int(np.prod(self.sizes))
        if N * self.n_players > 5e7:
            raise ValueError(f"the game has {N} pure profiles: too many for dense payoffs")
        prof = np.indices(self.sizes).reshape(self.n_players, -1)
        U = np.zeros((self.n_players, N))
        for (i, j), Aij in self.edges.items():
            U[i] += Aij[prof[i], prof[j]]
        return U.reshape((self.n_players,) + self.sizes)

    def to_normal_form(self):
        return NormalFormGame(list(self.payoffs()))

    def expected_payoffs(self, x):
        """Expected payoff of each player at the mixed profile ``x`` (concatenated; a
        ``ValueError`` when a player's block is not a probability vector)."""
        blocks = self._profile(x)
        out = np.zeros(self.n_players)
        for (i, j), Aij in self.edges.items():
            out[i] += blocks[i] @ Aij @ blocks[j]
        return out


def concave_game(partial_gradients, domain, *, dim=None):
    r"""The VI :math:`F(x) = -(\nabla_{x_i} u_i(x))_i` of a concave (or smooth) game.

    Parameters
    ----------
    partial_gradients : callable
        ``partial_gradients(x) -> ndarray (d,)``: the concatenated gradients
        :math:`(\nabla_{x_i} u_i(x))_i` of each player's utility in its own variables.
    domain : a domain of :class:`jitopt.problems.VIProblem`
        The joint strategy set; a :class:`jitopt.sets.Polytope` expresses coupled (shared)
        constraints.
    dim : int, optional
        The dimension :math:`d` of the joint strategy, as for
        :class:`jitopt.problems.VIProblem` (needed only when the domain does not tell it).

    Returns
    -------
    jitopt.problems.VIProblem
        The VI of the operator :math:`F(x) = -(\nabla_{x_i} u_i(x))_i` over ``domain``.

    Examples
    --------
    Two players share the budget :math:`x_1 + x_2 \le 1/2`; with utilities
    :math:`u_i = x_i(1 - x_1 - x_2)`, the symmetric equilibrium spends the budget
    equally:

    >>> import numpy as np
    >>> from jitopt.games import concave_game
    >>> from jitopt.sets import Polytope
    >>> from jitopt.solvers import evi
    >>> game = concave_game(lambda x: np.array([1 - 2 * x[0] - x[1], 1 - 2 * x[1] - x[0]]),
    ...                     Polytope([[1, 1], [-1, 0], [0, -1]], [0.5, 0, 0]))
    >>> res = evi(game, tol=1e-3, rng=0)
    >>> bool(res.success), np.round(res.x, 3)
    (True, array([0.25, 0.25]))
    """
    if not callable(partial_gradients):
        raise TypeError("partial_gradients must be callable")

    def operator(x):
        g = np.asarray(partial_gradients(x))
        if np.iscomplexobj(g):
            raise TypeError("partial_gradients must return a real array, got a complex one")
        return -g.astype(float)

    return VIProblem(operator, domain, dim=dim)
