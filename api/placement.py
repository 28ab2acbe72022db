"""jax.transfer_guard*: context managers over the transfer guard config options."""
import contextlib

from ..core.config import config


def _scoped(option, doc):
    @contextlib.contextmanager
    def manager(new_val):
        with config.override(**{option: new_val}):
            yield
    manager.__doc__ = doc
    return manager


transfer_guard = _scoped(
    "jax_transfer_guard", "Context manager setting the guard level ('allow', 'log', "
    "'disallow', 'log_explicit', 'disallow_explicit') of every kind of transfer.")
transfer_guard_host_to_device = _scoped(
    "jax_transfer_guard_host_to_device", "Context manager setting the guard level of "
    "host-to-device transfers.")
transfer_guard_device_to_host = _scoped(
    "jax_transfer_guard_device_to_host", "Context manager setting the guard level of "
    "device-to-host transfers (on CPU none is guarded, as in JAX: the host reads device "
    "memory in place).")
transfer_guard_device_to_device = _scoped(
    "jax_transfer_guard_device_to_device", "Context manager setting the guard level of "
    "device-to-device transfers.")
