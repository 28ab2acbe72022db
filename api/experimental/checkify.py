"""refjax.experimental.checkify: JAX's checkify (functionalized run-time checks: user checks,
NaN, division-by-zero and out-of-bounds checks) on refjax's checkify interpreter."""
import numpy as _np

from ...core import pytree as _pytree
from ...core.array import BaseArray as _BaseArray
from ...core.primitives import elementwise as _ew
from ...core.primitives.checkify import check_error as _check_error
from ...core.trace import as_value as _as_value
from ...core.transforms import checkify as _checkify
from ...core.transforms import checkify_rules as _rules  # noqa: F401  (registers the checks)
from ...core.transforms.checkify_errors import DivisionByZeroError as _DivisionByZeroError
from ...core.transforms.checkify_errors import Error, JaxRuntimeError, init_error
from ...core.transforms.checkify_errors import FailedCheckError as _FailedCheckError
from ...core.transforms.checkify_errors import NaNError as _NaNError
from ...core.transforms.checkify_errors import OOBError as _OOBError

__all__ = ["Error", "ErrorCategory", "JaxRuntimeError", "all_checks", "automatic_checks",
           "check", "check_error", "checkify", "debug_check", "div_checks", "float_checks",
           "index_checks", "init_error", "nan_checks", "user_checks"]

ErrorCategory = type  # an error class (FailedCheckError, NaNError, ...), as JAX's alias

user_checks = frozenset({_FailedCheckError})
nan_checks = frozenset({_NaNError})
index_checks = frozenset({_OOBError})
div_checks = frozenset({_DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


def checkify(f, errors=user_checks):
    """f as a function returning (Error, f's output): the checks of `errors` (by default the
    user's `check`s) are recorded in the Error instead of raising."""
    return _checkify.checkify(f, frozenset(errors))


def check(pred, msg, *fmt_args, debug=False, **fmt_kwargs):
    """Check that the scalar boolean `pred` holds; otherwise the error `msg` (a format string
    of fmt_args/fmt_kwargs, arrays whose run-time values it shows). Eagerly a failure raises
    JaxRuntimeError; under checkify it is recorded in the Error; it cannot be staged
    (jit, scan, ...) without checkify."""
    _check(pred, msg, debug, fmt_args, fmt_kwargs)


def debug_check(pred, msg, *fmt_args, **fmt_kwargs):
    """A check that only runs under checkify (elsewhere it does nothing)."""
    _check(pred, msg, True, fmt_args, fmt_kwargs)


def check_error(error):
    """Raise JaxRuntimeError if `error` holds a failure (functionalized again by checkify)."""
    if not isinstance(error, Error):
        raise TypeError("check_error takes an Error as argument, "
                        f"got type {type(error)} instead.")
    _check_error(error)


def _is_scalar_pred(pred):
    return isinstance(pred, bool) or (isinstance(pred, _BaseArray) and _np.shape(pred) == ()
                                      and pred.dtype == _np.dtype(bool))


def _check(pred, msg, debug, fmt_args, fmt_kwargs):
    if not _is_scalar_pred(pred):
        name = "debug_check" if debug else "check"
        raise TypeError(f"{name} takes a scalar pred as argument, got {pred}")
    if not isinstance(msg, str):  # JAX fails later, in err.get(), with an AttributeError
        raise TypeError(f"checkify.check's msg must be a str, got {type(msg).__name__}")
    leaves, tree = _pytree.tree_flatten((fmt_args, fmt_kwargs))
    for arg in leaves:
        if not isinstance(arg, (_BaseArray, _np.ndarray)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {arg!r} of type {type(arg)}.")
    exc = _FailedCheckError((msg, tree), [_as_value(a) for a in leaves])
    failed = _ew.bitwise_not(_as_value(pred))
    _check_error(_checkify.assert_func(init_error, failed, exc), debug)
