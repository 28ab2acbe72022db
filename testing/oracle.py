"""The oracle: primitives and whole programs evaluated by the numpy_ref backend."""
import contextlib
import functools

import numpy as np

ORACLE = "numpy_ref"


@contextlib.contextmanager
def enable_x64(enabled=True):
    """64-bit types in refjax for a block (and in real JAX too, when it is installed)."""
    import refjax
    previous = refjax.config.read("jax_enable_x64")
    refjax.config.update("jax_enable_x64", bool(enabled))
    try:
        with _jax_x64(enabled):
            yield
    finally:
        refjax.config.update("jax_enable_x64", previous)


def _jax_x64(enabled):
    try:
        import jax
    except ImportError:
        return contextlib.nullcontext()
    return jax.enable_x64(bool(enabled))


def _on_oracle(values, weak):
    """Arguments as oracle Arrays: Python scalars weakly typed in their canonical dtype (as JAX
    converts them), NumPy values with the given weak types, Arrays of any backend copied."""
    import refjax.numpy as jnp
    from ..spec.base import refjax_array
    return [jnp.asarray(v) if type(v) in (bool, int, float, complex) else
            _to_oracle(v) if _is_refjax(v) else refjax_array(np.asarray(v), w)
            for v, w in zip(values, weak)]


def _is_refjax(x):
    from ..core.array import Array
    return isinstance(x, Array)


def reference(primitive_name, *args, weak_types=None, **params):
    """The oracle's result of the primitive called `primitive_name` on `args` (NumPy arrays,
    Python scalars, weakly typed as in JAX, or refjax Arrays; `weak_types` gives each NumPy
    argument's weak type) with `params`: a NumPy array, or a list of them for
    multiple-result primitives.

    >>> reference("add", np.float32(1), np.float32(2))
    array(3., dtype=float32)
    >>> reference("cumsum", np.arange(4), axis=0, reverse=False)
    array([0, 1, 3, 6])
    """
    from ..backends.base import backend
    from ..spec import spec_for
    spec = spec_for(primitive_name)
    weak = weak_types or [False] * len(args)
    with backend(ORACLE):
        out = spec.bind(*_on_oracle(args, weak), **params)
        if isinstance(out, (list, tuple)):
            return [np.array(o) for o in out]
        return np.array(out)


def reference_fn(fn):
    """`fn` (a program written against `import refjax as jax`) evaluated by the oracle: the
    returned function runs it on the numpy_ref backend and returns its results as refjax
    Arrays, which carry the values, dtypes, weak types and layouts to compare with
    `assert_conforms`.

    >>> import refjax.numpy as jnp
    >>> reference_fn(lambda x: jnp.sum(x * 2))(np.arange(3.0, dtype=np.float32))
    Array(6., dtype=float32)
    """
    from ..backends.base import backend

    @functools.wraps(fn)
    def run(*args, **kwargs):
        with backend(ORACLE):
            return fn(*_to_oracle(args), **_to_oracle(kwargs))
    return run


def _to_oracle(tree):
    """Arrays of other backends copied to the oracle (as NumPy values, keeping weak types)."""
    from ..core import pytree
    from ..spec.base import refjax_array

    def move(x):
        return refjax_array(np.asarray(x), x.weak_type) if _is_refjax(x) else x
    return pytree.tree_map(move, tree)
