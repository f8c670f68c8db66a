"""The contract suite's case for ``sga``: the two translated squares of ``wdha``'s case."""

import cases_wdha


def make(fault=None, at=3):
    """``(problem, None, options)``: the problem of :func:`cases_wdha.make` (a dual method
    takes no starting barycenter), 20 iterations."""
    case = cases_wdha.make(fault, at)
    return None if case is None else (case[0], None, {"maxiter": 20})
