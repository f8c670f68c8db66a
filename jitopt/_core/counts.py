"""Oracle counters, kept per thread so that concurrent runs on one problem count their own
calls."""

import threading

__all__ = ["OracleCounts", "ConstraintCounts"]


def _counter(i, doc):
    """The property of the counter ``i``: reads the total over all threads, and an
    assignment adds the change to the calling thread's cell, so that ``counts.nfev += k``
    made by concurrent runs adds ``k`` to the total and to the run's own thread."""

    def get(self):
        cells = self._cells
        total = (cells[0][i] if len(cells) == 1 else sum([c[i] for c in cells])) \
            - self._zero[i]
        self._cell()[-1] = (i, total)  # what ``+=`` read, for the assignment that follows
        return total

    def set(self, value):
        cell = self._cell()
        read, cell[-1] = cell[-1], None
        before = read[1] if read is not None and read[0] == i else getattr(self, self.FIELDS[i])
        cell[i] += value - before

    return property(get, set, doc=doc)


class OracleCounts:
    """Counters of oracle calls, kept per thread.

    Reading a counter gives the running total of every thread; ``counts.nfev += k`` adds
    ``k`` to the total and to the calling thread's own count, :meth:`own`. A solver run
    reports the change of :meth:`own` over the run, so concurrent runs on one shared
    problem (threads) each report their own calls.

    Attributes
    ----------
    nfev : int
        Cost evaluations (one per call, whatever the batch).
    njev : int
        Euclidean gradient evaluations (one per call, whatever the batch).
    nifo : int
        Per-sample gradients: a gradient over the sample indices ``idx`` adds ``len(idx)``;
        a full gradient adds ``n_samples`` (1 for a plain :class:`Problem`).
    nhev : int
        Hessian-vector products (one per call).

    Examples
    --------
    >>> import threading, jitopt
    >>> counts = jitopt.OracleCounts()
    >>> counts.nfev += 2
    >>> def work():
    ...     counts.nfev += 3
    ...     print(counts.own())
    >>> thread = threading.Thread(target=work); thread.start(); thread.join()
    (3, 0, 0, 0)
    >>> counts, counts.own()
    (OracleCounts(nfev=5, njev=0, nifo=0, nhev=0), (2, 0, 0, 0))
    >>> counts.reset(); counts.as_dict()
    {'nfev': 0, 'njev': 0, 'nifo': 0, 'nhev': 0}
    """

    #: the counters, in the order of :meth:`own`
    FIELDS = ("nfev", "njev", "nifo", "nhev")

    nfev = _counter(0, "Cost evaluations (total of every thread).")
    njev = _counter(1, "Euclidean gradient evaluations (total of every thread).")
    nifo = _counter(2, "Per-sample gradients (total of every thread).")
    nhev = _counter(3, "Hessian-vector products (total of every thread).")

    def __init__(self):
        self._lock = threading.Lock()
        self._local = threading.local()
        self._cells = []  # one list of counts (in the order of FIELDS) per thread that counted
        self._zero = [0] * len(self.FIELDS)  # the raw totals at the last reset

    def _cell(self):
        """The calling thread's counts (in the order of ``FIELDS``) and its last read."""
        try:
            return self._local.cell
        except AttributeError:
            cell = self._local.cell = [0] * len(self.FIELDS) + [None]
            with self._lock:
                self._cells.append(cell)
            return cell

    def own(self):
        """``(nfev, njev, nifo, nhev)`` counted by the calling thread since the counters
        were made (:meth:`reset` leaves them: a run measures their change).

        Returns
        -------
        tuple of int
            The calling thread's counts.

        Examples
        --------
        >>> import jitopt
        >>> counts = jitopt.OracleCounts()
        >>> counts.njev += 1; counts.own()
        (0, 1, 0, 0)
        """
        return tuple(self._cell()[:-1])

    def add(self, nfev=0, njev=0, nifo=0, nhev=0):
        """Count calls made by the calling thread: the same as ``counts.nfev += nfev``
        and so on, in one step.

        Parameters
        ----------
        nfev, njev, nifo, nhev : int
            The calls to add to each counter.

        Returns
        -------
        None

        Examples
        --------
        >>> import jitopt
        >>> counts = jitopt.OracleCounts()
        >>> counts.add(nfev=1, njev=1, nifo=10); counts
        OracleCounts(nfev=1, njev=1, nifo=10, nhev=0)
        """
        cell = self._cell()
        cell[0] += nfev
        cell[1] += njev
        cell[2] += nifo
        cell[3] += nhev

    def reset(self):
        """Set the totals to zero (the per-thread counts of :meth:`own` go on)."""
        with self._lock:
            self._zero = [sum([cell[i] for cell in self._cells])
                          for i in range(len(self.FIELDS))]

    def as_dict(self):
        """The totals as a dict."""
        return {name: getattr(self, name) for name in self.FIELDS}

    def __getstate__(self):
        return {"totals": [getattr(self, name) for name in self.FIELDS]}

    def __setstate__(self, state):
        self.__init__()
        self._cell()[:-1] = state["totals"]

    def __repr__(self):
        counts = ", ".join(f"{name}={value}" for name, value in self.as_dict().items())
        return f"{type(self).__name__}({counts})"


class ConstraintCounts(OracleCounts):
    """:class:`OracleCounts` with the counters of the constraint oracles of a
    :class:`~jitopt.problems.ConstrainedProblem`: ``ncev``, the points at which the user's
    constraint values were evaluated (``ineq`` and ``eq`` together), and ``ncjev``, the
    points at which their gradient oracles were (one weighted sum of all the gradients).

    Examples
    --------
    >>> from jitopt._core.counts import ConstraintCounts
    >>> counts = ConstraintCounts()
    >>> counts.add(nfev=1, ncev=2); counts
    ConstraintCounts(nfev=1, njev=0, nifo=0, nhev=0, ncev=2, ncjev=0)
    >>> counts.own()
    (1, 0, 0, 0, 2, 0)
    """

    FIELDS = OracleCounts.FIELDS + ("ncev", "ncjev")

    ncev = _counter(4, "Constraint value evaluations (total of every thread).")
    ncjev = _counter(5, "Constraint gradient (weighted sum) evaluations (total of every "
                        "thread).")

    def add(self, nfev=0, njev=0, nifo=0, nhev=0, ncev=0, ncjev=0):
        """Count calls made by the calling thread (see :meth:`OracleCounts.add`).

        Parameters
        ----------
        nfev, njev, nifo, nhev, ncev, ncjev : int
            The calls to add to each counter.

        Returns
        -------
        None
        """
        super().add(nfev, njev, nifo, nhev)
        cell = self._cell()
        cell[4] += ncev
        cell[5] += ncjev
