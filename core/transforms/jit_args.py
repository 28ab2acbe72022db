"""jit's static_argnums/static_argnames/donate_argnums/donate_argnames checked against the
function's signature when jit is called, as JAX's `resolve_argnums` checks them."""
import inspect
import operator

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_NOT_KEYWORD = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)


def index_tuple(argnums):
    """argnums as a tuple of ints (TypeError, as JAX's, for anything not an index)."""
    try:
        return (operator.index(argnums),)
    except TypeError:
        return tuple(map(operator.index, argnums))


def str_tuple(argnames):
    """argnames as a tuple of strings (TypeError, as JAX's, for a non-string name)."""
    if isinstance(argnames, str):
        return (argnames,)
    return tuple(map(_string, argnames))


def _string(name):
    if not isinstance(name, str):
        raise TypeError(f"argument is not a string: {name}")
    return name


def check_argnums(fun, signature, static_argnums, static_argnames, donate_argnums,
                  donate_argnames):
    """Refuse, with JAX's ValueError, argument numbers past the function's positional
    parameters, names it does not take (or takes positionally only), and an argument both
    static and donated; without a signature (some builtins) only donate_argnames, as JAX."""
    if signature is None:
        if donate_argnames is not None:
            raise ValueError(f"Getting the signature of function {fun} failed. "
                             "Pass donate_argnums instead of donate_argnames.")
        return
    static = _inferred(signature, static_argnums, static_argnames)
    donate = _inferred(signature, donate_argnums, donate_argnames)
    for (nums, names), kind in ((static, "static"), (donate, "donate")):
        _check_nums(signature, nums, f"{kind}_argnums")
        _check_names(signature, names, f"{kind}_argnames")
    both = set(static[1]) & set(donate[1])
    if both:
        raise ValueError("static_argnames and donate_argnames cannot intersect. Argument "
                         f"names {both} appear in both static_argnames and donate_argnames")


def _inferred(signature, nums, names):
    """(argnums, argnames), the missing one named from the other (JAX's
    infer_argnums_and_argnames: only positional-or-keyword parameters have both)."""
    if nums is None and names is None:
        return (), ()
    if nums is not None and names is not None:
        return index_tuple(nums), str_tuple(names)
    both_ways = [(i, k) for i, (k, p) in enumerate(signature.parameters.items())
                 if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    if nums is None:
        names = str_tuple(names)
        return tuple(i for i, k in both_ways if k in names), names
    nums = index_tuple(nums)
    return nums, tuple(k for i, k in both_ways if i in nums)


def _check_nums(signature, nums, what):
    kinds = [p.kind for p in signature.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds:  # any number of positional arguments
        return
    n = sum(k in _POSITIONAL for k in kinds)
    if nums and (-min(nums) > n or max(nums) >= n):
        raise ValueError(f"Jitted function has {what}={nums}, but only accepts {n} "
                         "positional arguments.")


def _check_names(signature, names, what):
    params = signature.parameters.values()
    positional_only = {p.name for p in params if p.kind in _NOT_KEYWORD} & set(names)
    if positional_only:
        raise ValueError(f"Jitted function has invalid argnames {positional_only} in {what}. "
                         "These are positional-only")
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params):
        return
    unknown = set(names) - {p.name for p in params if p.kind in _KEYWORD}
    if unknown:
        raise ValueError(f"Jitted function has invalid argnames {unknown} in {what}. "
                         "Function does not take these args.")
