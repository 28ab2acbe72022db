"""Core of refjax: pytrees, abstract values, tracing and primitives."""
