"""The common options' descriptions, written once.

A registered solver's docstring holds the line ``{common options}`` where its Parameters
section describes ``callback, history, disp, rng``; :func:`~jitopt._core.registry.register_method`
puts :func:`common_options` there, with what is particular to the method (what one iteration
is, its own history columns, what the seed draws) given at registration.
"""

import textwrap

MARKER = "{common options}"

#: what ``rng`` seeds when a method draws nothing but its random start
SEED_OF_START = "Seed of the random starting point (used only when ``x0`` is omitted)."

_ENTRIES = (
    ("callback : callable, optional",
     "Called after each {unit}: ``callback(intermediate_result)``, with an "
     ":class:`~jitopt.OptimizeResult` of {fields}, when its parameter has that name "
     "(scipy's rule), else ``callback(xk)``; raise :class:`StopIteration` to stop "
     "(``Status.CALLBACK``).{callback}"),
    ("history : bool",
     "Record a row per {unit} in ``result.history``: the common columns ``iteration, time, "
     "fun, stationarity, nfev, njev, nifo``{history}."),
    ("disp : bool", "Print a line of progress {disp}."),
    ("rng : int or numpy.random.Generator, optional", "{rng}"),
)


def common_options(unit="iteration", fields="``x, fun, stationarity, nit``", callback="",
                   history="", disp=None, rng=SEED_OF_START, indent="    "):
    """The Parameters entries of ``callback, history, disp, rng`` for one method.

    Parameters
    ----------
    unit : str
        What the callback, a history row and a display line follow ("iteration",
        "outer iteration", "checkpoint", ...).
    fields : str
        The intermediate result's fields.
    callback, history : str
        Added to the entry's shared text: a sentence for ``callback``, the method's own
        columns for ``history`` (starting with ", and").
    disp : str, optional
        When a line is printed ("per <unit>" by default).
    rng : str
        What the seed draws.
    indent : str
        The docstring's indentation of the entries' names.

    Returns
    -------
    str
        The entries, one per line group, ending with a newline.

    Examples
    --------
    >>> from jitopt._core.docs import common_options
    >>> print(common_options(rng="Unused: the method is deterministic.").splitlines()[-1])
            Unused: the method is deterministic.
    """
    values = dict(unit=unit, fields=fields, callback=callback and " " + callback,
                  history=history, disp=disp or f"per {unit}", rng=rng)
    lines = []
    for head, text in _ENTRIES:
        lines.append(indent + head)
        lines.extend(textwrap.wrap(text.format(**values), 92 - len(indent) - 4,
                                   initial_indent=indent + "    ",
                                   subsequent_indent=indent + "    ",
                                   break_on_hyphens=False, break_long_words=False))
    return "\n".join(lines) + "\n"


def fill_common_options(doc, name, **particulars):
    """``doc`` with its ``{common options}`` line replaced by :func:`common_options`.

    Raises ``ValueError`` naming the method when the line is missing, so that every
    registered method describes the common options the same way. ``None`` (docstrings
    stripped by ``python -OO``) is returned as is.
    """
    if doc is None:
        return None
    line = next((ln for ln in doc.splitlines(keepends=True) if ln.strip() == MARKER), None)
    if line is None:
        raise ValueError(f"the docstring of method {name!r} has no {MARKER!r} line in its "
                         f"Parameters section")
    indent = line[:len(line) - len(line.lstrip())]
    return doc.replace(line, common_options(indent=indent, **particulars), 1)
