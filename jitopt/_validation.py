from .validation import *  # noqa: F401,F403  (temporary, removed at integration)
from .validation import as_c_float, check_array, check_choice, check_int, check_real, check_rng  # noqa: F401
