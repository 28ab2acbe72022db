"""Backends: the interface, the registry, the NumPy oracle and the XLA fast path."""
