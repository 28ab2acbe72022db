"""refjax.experimental.pjit: pjit as JAX 0.10 keeps it (deprecated there in favour of jit):
jit whose PartitionSpecs resolve against the `with mesh:` context as well as set_mesh."""
import warnings as _warnings

from ...core.transforms.jit import JitWrapped as _JitWrapped

__all__ = []


def _pjit(fun, in_shardings=None, out_shardings=None, static_argnums=None, static_argnames=None,
          donate_argnums=None, donate_argnames=None, keep_unused=False, device=None,
          backend=None, inline=False, compiler_options=None):
    """jit(fun) with in/out shardings, whose bare PartitionSpecs name axes of the mesh entered
    with `with mesh:` (or set with jax.set_mesh): the seeds' pjit."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    return _JitWrapped(fun, static_argnums, static_argnames, donate_argnums, in_shardings,
                      out_shardings, who="pjit", donate_argnames=donate_argnames)


_pjit.__name__ = _pjit.__qualname__ = "pjit"


def __getattr__(name):
    if name == "pjit":
        _warnings.warn("jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` "
                      "instead.", DeprecationWarning, stacklevel=2)
        return _pjit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
