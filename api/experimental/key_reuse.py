"""refjax.experimental.key_reuse: JAX's key-reuse checking module, whose public namespace in JAX
0.10.2 is its documentation only (the checker itself is core/key_reuse.py).

Key reuse checking is enabled with the ``jax_debug_key_reuse`` configuration, globally with
``jax.config.update('jax_debug_key_reuse', True)`` or in a block with the
:func:`jax.debug_key_reuse` context manager. When enabled, using the same typed key twice
raises :class:`~jax.errors.KeyReuseError`::

  >>> import refjax as jax
  >>> with jax.debug_key_reuse(True):
  ...   key = jax.random.key(0)
  ...   val1 = jax.random.normal(key)
  ...   val2 = jax.random.normal(key)  # doctest: +IGNORE_EXCEPTION_DETAIL
  Traceback (most recent call last):
   ...
  KeyReuseError: Previously-consumed key passed to jit-compiled function at index 0
"""
