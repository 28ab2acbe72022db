"""jax._src.util's safe_map and safe_zip: map and zip that refuse sequences of unequal length."""


def _check_lengths(name, args):
    """ValueError in JAX's words when an argument's length differs from the first's."""
    n = len(args[0])
    for i, arg in enumerate(args[1:], start=2):
        if len(arg) != n:
            relation = "shorter" if len(arg) < n else "longer"
            raise ValueError(f"{name}() argument {i} is {relation} than argument 1")


def safe_map(f, *args):
    """list(map(f, *args)), after checking that every argument has the same length."""
    args = [list(a) for a in args]
    _check_lengths("safe_map", args)
    return list(map(f, *args))


def safe_zip(*args):
    """list(zip(*args)), after checking that every argument has the same length."""
    args = [list(a) for a in args]
    _check_lengths("safe_zip", args)
    return list(zip(*args))
