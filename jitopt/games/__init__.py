"""Games as variational inequalities: normal-form and polymatrix games, their VI operators,
correlated equilibria through the EVI solver, CE/CCE gap checks and the CE linear program."""

from ._games import NormalFormGame, PolymatrixGame, concave_game

__all__ = ["NormalFormGame", "PolymatrixGame", "concave_game"]
