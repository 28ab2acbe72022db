"""jnp functions restaged as JAX's (quantiles, cov, convolve, correlate, roll, bincount,
nonzero, argwhere, flatnonzero, pad, trace) keep JAX's
values, dtypes and errors on each backend, compared with real JAX."""
import jax as real_jax
import numpy as np
import pytest

import refjax
from jax_recordings import on_jax

pytestmark = pytest.mark.backends("numpy_ref", "xla")

_RNG = np.random.RandomState(0)
X = _RNG.randn(3, 4, 5).astype(np.float32)
XN = np.where(_RNG.rand(3, 4, 5) < 0.2, np.nan, X).astype(np.float32)


def _calls(jnp):
    q = np.array([0.0, 0.3, 1.0], np.float32)
    fw, aw = np.array([1, 2, 0, 3, 1]), np.abs(X[0, 0]) + 0.1
    return [
        *(f(a, qq, axis=axis, keepdims=kd, method=m) for f in (jnp.quantile, jnp.nanquantile)
          for a in (X, XN) for axis, kd in ((None, True), (1, False), ((0, 2), True))
          for qq, m in ((0.3, "linear"), (q, "nearest"), (q, "midpoint"), (0.7, "lower"))),
        jnp.percentile(XN, 40, axis=-1), jnp.nanpercentile(XN, q * 100, axis=(1, 2)),
        jnp.median(np.arange(7) % 3, keepdims=True), jnp.nanmedian(XN, axis=0),
        jnp.quantile(X, q, axis=2, method="inverted_cdf", weights=aw),
        jnp.cov(X[0]), jnp.cov(X[0], X[1], rowvar=False, ddof=0),
        jnp.cov(X[0], fweights=fw, aweights=aw), jnp.cov(X[0], fweights=fw, aweights=aw, ddof=0),
        jnp.corrcoef(X[0]), jnp.cov(X[0, :, :0]),
        jnp.convolve(X[0, 0], X[0, 1, :3], mode="same"), jnp.correlate(X[0, 0, :2], X[0, 1]),
        jnp.convolve(np.arange(4), np.arange(3)), jnp.roll(X[0], (2, -1), axis=(1, 0)),
        jnp.bincount(fw), jnp.bincount(fw > 1, aw, length=3), jnp.bincount(fw - 1, length=9),
        *jnp.nonzero(XN[0] > 0, size=9, fill_value=(7, 8)), *jnp.nonzero(X[0, 0] > 0, size=4),
        jnp.argwhere(XN[0] > 0, size=3), jnp.flatnonzero(X[0] > 0, size=25),
        *(jnp.pad(X[0], ((1, 2), (0, 3)), mode=m) for m in ("constant", "edge", "wrap")),
        jnp.trace(X), jnp.trace(X, -1, 2, 0, dtype=jnp.int32), jnp.trace(np.eye(3, dtype=bool)),
    ]


def _values(lib):
    outs = _calls(lib.numpy)
    return [np.asarray(o) for o in outs], [bool(o.weak_type) for o in outs]


def test_restaged_jnp_functions_keep_jax_values():
    """Each value, dtype and weak type as JAX's (refjax's cov with both fweights and aweights
    divided by the wrong count: JAX's ddof * sum(w * aweights) / sum(w) correction)."""
    ours = _calls(refjax.numpy)
    values, weak = on_jax(_values)
    for i, (o, t, w) in enumerate(zip(ours, values, weak)):
        assert (o.dtype, o.weak_type, o.shape) == (t.dtype, w, t.shape), i
        np.testing.assert_allclose(np.asarray(o), t, rtol=2e-6, atol=1e-6, err_msg=str(i))


@pytest.mark.parametrize("call", [
    lambda jnp: jnp.quantile(X, 0.3, method="cubic"),
    lambda jnp: jnp.quantile(X, np.ones((2, 2))),
    lambda jnp: jnp.nanquantile(X, 0.3, axis=(0, 0)),
    lambda jnp: jnp.quantile(X + 1j, 0.3),
    lambda jnp: jnp.cov(np.ones((2, 2, 2))),
    lambda jnp: jnp.cov(X[0], fweights=X[0, 0]),
    lambda jnp: jnp.cov(X[0], aweights=X[0, 0, :3]),
    lambda jnp: jnp.convolve(X[0, 0], X[0, 0], mode="wrap"),
    lambda jnp: jnp.correlate(X[0], X[0, 0]),
])
def test_restaged_jnp_functions_refuse_as_jax(call):
    """Bad input raises JAX's error class with JAX's message (refjax prefixes the function's
    name)."""
    with pytest.raises(Exception) as theirs:
        call(real_jax.numpy)
    with pytest.raises(type(theirs.value)) as ours:
        call(refjax.numpy)
    assert str(ours.value).endswith(str(theirs.value))
