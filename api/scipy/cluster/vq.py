"""jax.scipy.cluster.vq: assign observations to their nearest code."""
from ... import numpy as _jnp
from ...nn.functions import _inexact as _promote


def vq(obs, code_book, check_finite=True):
    """(index of the nearest code of each observation, its Euclidean distance); obs and
    code_book of the same rank, 1 or 2. check_finite is ignored (as in JAX)."""
    obs, book = _promote("scipy.cluster.vq.vq", obs, code_book)
    if obs.ndim != book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, book = obs[:, None], book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    diff = obs[:, None, :] - book[None, :, :]
    dist = _jnp.sqrt(_jnp.sum(diff * _jnp.conj(diff), axis=-1).real)
    code = _jnp.argmin(dist, axis=-1)
    return code, _jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
