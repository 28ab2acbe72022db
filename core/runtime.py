"""The hooks through which core/ reaches the backends without importing them.

core/ never imports api/ or backends/: the arrows go the other way. Where core needs a
backend (EvalTrace executing a primitive, a rule making a constant Array, jit asking which
backend is current and for its compiled runner), it calls one of the functions below, which
backends/base.py installs when refjax is imported (`install(...)`). Importing `refjax.core`
alone gives a core that can trace and stage but not run."""


def _no_backend(*_, **__):
    raise RuntimeError("no backend is loaded; import refjax, not refjax.core, to run code")


# (prim, args, params) -> outputs: how EvalTrace executes a primitive eagerly.
eval_primitive = _no_backend
# (value, aval, sharding=None) -> Array: a NumPy value as an Array on the current backend.
make_array = _no_backend
# () -> str: the name of the current backend (part of every compiled-program cache key).
current_backend_name = _no_backend
# (name=None) -> Backend: the backend object (jit asks it for fast runners).
get_backend = _no_backend
# () -> None: drop every backend's compiled programs (jax.clear_caches).
clear_backend_caches = _no_backend
# () -> int: the number of devices of the current backend (pmap's default axis size).
device_count = _no_backend

_HOOKS = ("eval_primitive", "make_array", "current_backend_name", "get_backend",
          "clear_backend_caches", "device_count")


def install(**hooks):
    """Install backend hooks by name (backends/base calls this at import)."""
    unknown = set(hooks) - set(_HOOKS)
    if unknown:
        raise TypeError(f"unknown runtime hooks: {sorted(unknown)}; known: {_HOOKS}")
    globals().update(hooks)
