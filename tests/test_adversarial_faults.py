"""Shared pieces of the adversarial property tests (the other test_adversarial_* modules
import them): the faults injected into array and scalar arguments, and the check that a
refusal names its argument; the tests here check the injections themselves.

An array fault turns a healthy float64 array into what a careless caller passes: NaN or inf
entries, a complex or object dtype, integers, a non-contiguous view, values scaled to about
1e300 or 1e-300 (by a power of two, so that scaling is exact), a wrong shape or no entries.
"""

import collections

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

#: faults after which the call must be refused
REFUSED = ("nan", "inf", "complex", "empty", "wrong_shape")
#: faults the call must handle exactly as the healthy array (the value is the same)
SAME = ("ok", "strided", "fortran", "object")
#: faults the call may refuse (by name) or must handle with the invariants scaled
SCALED = ("big", "tiny")
FAULTS = REFUSED + SAME + SCALED + ("int",)
#: the scale exponents: 2**996 is about 6.7e299
EXPONENT = {"big": 996, "tiny": -996}

_CHECKS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
_PHASES = (Phase.explicit, Phase.generate)  # no shrinking: a failure shows its case as drawn
#: tests over generated scalars and seeds
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=_CHECKS, phases=_PHASES)
#: tests parametrized by the fault (every fault is run), seeds generated
PER_FAULT = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                     suppress_health_check=_CHECKS, phases=_PHASES)

COUNTS = collections.Counter()


def inject(fault, a, rng=None):
    """``a`` (a healthy float64 array) with ``fault``: the array to pass."""
    a = np.asarray(a, dtype=float)
    if fault == "ok":
        return a.copy()
    if fault == "nan" or fault == "inf":
        b = a.copy()
        b.flat[(rng.integers(b.size) if rng is not None else 0)] = (
            np.nan if fault == "nan" else -np.inf)
        return b
    if fault == "complex":
        return a + 1e-3j
    if fault == "object":
        return a.astype(object)
    if fault == "int":
        return np.rint(4 * a).astype(np.int64)
    if fault == "strided":  # every other entry of a longer array along the last axis
        b = np.zeros(a.shape[:-1] + (2 * a.shape[-1],)) if a.ndim else np.zeros(2)
        b[..., ::2] = a
        return b[..., ::2]
    if fault == "fortran":
        return np.asfortranarray(a)
    if fault in EXPONENT:
        return np.ldexp(a, EXPONENT[fault])
    if fault == "empty":
        return np.zeros((0,) * max(a.ndim, 1))
    if fault == "wrong_shape":
        return a[..., None] if a.ndim < 2 else a.ravel()
    raise AssertionError(fault)


def healthy(fault, a):
    """The float64 value the call should see for a non-refused fault (integers: the
    rounded values; scaled faults: the unscaled ones, to compare after rescaling)."""
    a = np.asarray(a, dtype=float)
    if fault == "int":
        return np.rint(4 * a)
    return a


def scale(fault):
    """The factor a scaled fault multiplies by (1 for the others)."""
    return 2.0 ** EXPONENT.get(fault, 0)


def refused_by_name(call, *names):
    """``call()`` raises ValueError or TypeError with one of ``names`` in the message."""
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    message = str(info.value)
    assert any(name in message for name in names), (names, message)
    return info.value


def maybe_refused(call, *names):
    """``call()``, or ``None`` when it raises ValueError/TypeError naming one of ``names``
    (any other exception propagates and fails the test)."""
    try:
        return call()
    except (ValueError, TypeError) as err:
        assert any(name in str(err) for name in names), (names, str(err))
        return None


faults = st.sampled_from(FAULTS)
seeds = st.integers(0, 2 ** 32 - 1)

#: scalar arguments as careless callers pass them
BAD_SCALARS = (np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300, -1.0, 0.0, 1j, True, "a",
               None, np.float32(2.0), np.int64(3))
scalars = st.sampled_from(BAD_SCALARS)


def unchanged(before, after):
    """The caller's array is not modified (same values, NaN where NaN)."""
    before, after = np.asarray(before), np.asarray(after)
    if before.dtype == object:
        assert all(x == y for x, y in zip(before.ravel(), after.ravel()))
    else:
        np.testing.assert_array_equal(before, after)


def exercise(group, entry, fault, arg, call, names, check):
    """Call ``call(arg)`` with the faulty ``arg``: refused by name for a refused fault,
    else checked by ``check(result)`` (a scaled or object array may also be refused by
    name); ``arg`` unchanged either way. Counted as ``"group:entry"``."""
    COUNTS[f"{group}:{entry}"] += 1
    before = np.array(arg, copy=True)
    if fault in REFUSED:
        refused_by_name(lambda: call(arg), *names)
    else:
        out = maybe_refused(lambda: call(arg), *names) if fault in SCALED + ("object",) \
            else call(arg)
        if out is not None:
            check(out)
    unchanged(before, arg)


def report_counts(name):
    """A module fixture printing the generated cases per entry point of ``name``."""

    @pytest.fixture(scope="module", autouse=True)
    def fixture():
        yield
        mine = {k: v for k, v in sorted(COUNTS.items()) if k.startswith(name + ":")}
        print(f"\ngenerated cases per entry point ({name}):", mine)

    return fixture


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_changes_only_what_it_names(fault):
    a = np.random.default_rng(0).standard_normal((3, 4))
    b = inject(fault, a, np.random.default_rng(1))
    if fault in SAME:
        np.testing.assert_array_equal(np.asarray(b, dtype=float), a)
        assert (fault != "strided" or not b.flags.c_contiguous) and \
            (fault != "fortran" or b.flags.f_contiguous and not b.flags.c_contiguous)
    elif fault in SCALED:
        np.testing.assert_array_equal(b / scale(fault), a)
    elif fault == "int":
        assert b.dtype.kind == "i" and np.array_equal(b, healthy(fault, a))
    elif fault in ("nan", "inf"):
        assert np.count_nonzero(~np.isfinite(b)) == 1
    elif fault == "complex":
        assert np.iscomplexobj(b) and np.array_equal(b.real, a)
    else:
        assert b.size == 0 or b.shape != a.shape
