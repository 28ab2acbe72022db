"""Unreduced and reduced values in shard_map beyond the fully manual eager case (issue 15):
lax.psum of an unreduced value (JAX's `unreduced_psum`), the specs of a partially manual
shard_map, unreduced arguments split inside a compiled jit, and a loop over unreduced values
compiled as one program on the xla backend; each program run on real JAX 0.10.2 and on
refjax and compared (printed jaxprs, typeof text, every device's data, error class and
message)."""
import pytest
from test_unreduced import _same_as_jax


pytestmark = pytest.mark.backends("numpy_ref", "xla")  # xla: JAX holds the partial values


def _operands(lib):
    """a (columns over X), b (rows over X) and their product left unreduced over X."""
    jnp, P = lib.numpy, lib.P
    a = lib.device_put(jnp.arange(8.0).reshape(2, 4), P(None, "X"))
    b = lib.device_put(jnp.arange(8.0, 16.0).reshape(4, 2), P("X", None))
    return a, b, jnp.einsum("ij,jk->ik", a, b, out_sharding=P(None, None, unreduced={"X"}))


def test_psum_of_an_unreduced_value_binds_unreduced_psum():
    """In a check_vma body lax.psum of a value unreduced over its axes binds JAX's
    `unreduced_psum` (each device's partial value summed; the result invariant), printed as
    JAX prints it, transposed to `preduced`; JAX's errors for what it cannot sum."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a, b, u = _operands(lib)
        UN = P(None, None, unreduced={"X"})
        total = lib.shard_map(lambda v: lax.psum(v, "X"), in_specs=UN, out_specs=P())
        cast = lib.shard_map(lambda a, b: lax.psum(lax.pcast(a @ b, "X", to="unreduced"), "X"),
                             in_specs=(P(None, "X"), P("X", None)), out_specs=P())
        loss = lambda a, b: jnp.sum(cast(a, b) ** 2)  # noqa: E731
        show(lambda: lib.make_jaxpr(total)(u))
        show(lambda: lib.make_jaxpr(cast)(a, b))
        for run in (lambda f: f, lib.jit):
            show(lambda: run(total)(u))
            show(lambda: run(cast)(a, b))
            show(lambda: run(lib.grad(loss, argnums=(0, 1)))(a, b))
        show(lambda: lib.shard_map(lambda v: lax.psum(v * 2.0, "X"), in_specs=UN,
                                   out_specs=P())(u))
        show(lambda: lib.shard_map(lambda v: lax.psum(lax.pcast(v, "X", to="unreduced"), "X"),
                                   in_specs=UN, out_specs=P())(u))
    shown = _same_as_jax(program)
    assert "unreduced_psum[axes=('X',)] c" in shown[0]
