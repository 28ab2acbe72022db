"""Backends: the interface, the registry, the NumPy oracle and the XLA fast path.

The public names a backend written outside refjax needs (ARCHITECTURE.md, "Recipe: add a
backend"): `Backend` to subclass, `register_rule` for its rules, `register_backend` (or the
`refjax.backends` entry point), `eval_jaxpr` to interpret a jaxpr with its rules,
`make_cpu_devices` for its devices, `run_callback` for the host callbacks, and `get_backend`.
Primitives are in `refjax.extend.core.primitives`, as in JAX."""
from ..core.jaxpr import eval_jaxpr
from ..core.sharding import make_cpu_devices
from .base import Backend, get_backend, register_backend, register_rule
from .callbacks import run_callback

__all__ = ["Backend", "eval_jaxpr", "get_backend", "make_cpu_devices", "register_backend",
           "register_rule", "run_callback"]
