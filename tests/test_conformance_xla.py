"""What `python -m refjax.conformance --backend xla` with every check found, fixed and kept fixed:
signed `mulhi` fused with another operation, which XLA's CPU backend refuses (in JAX too), and
mulhi on a mesh, which XLA cannot lower (in JAX too)."""
import jax as real_jax
import numpy as np
import pytest

import refjax
from refjax.conformance import main

SIGNED = ("int8", "int16", "int32", "int64")


def _operands(dtype):
    """Random values of `dtype` and its extremes paired with each other and with -1 (unsigned:
    the top bit alone), 0, 1."""
    info = np.iinfo(dtype)
    edges = [info.min, info.max, -1 if info.min else info.max // 2 + 1, 0, 1]
    x = np.array([a for a in edges for _ in edges], dtype)
    y = np.array([b for _ in edges for b in edges], dtype)
    rng = np.random.default_rng(0)
    more = [rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True) for _ in range(2)]
    return np.concatenate([x, more[0]]), np.concatenate([y, more[1]])


def _high_half(x, y):
    """The high half of each product, by Python integers (the hand-computed truth)."""
    bits = np.iinfo(x.dtype).bits
    return np.array([(int(a) * int(b)) >> bits for a, b in zip(x, y)], x.dtype)


def fused(x, y):
    return refjax.lax.mulhi(x + x, y)  # mulhi fused with another elementwise operation


@pytest.mark.parametrize("dtype", SIGNED)
def test_signed_mulhi_fused_in_a_jit_on_xla(dtype):
    x, y = _operands(dtype)
    with refjax.enable_x64(dtype == "int64"), refjax.backend("xla"):
        got = refjax.jit(fused)(x, y)
        batched = refjax.jit(refjax.vmap(refjax.lax.mulhi, in_axes=(0, None)))(x[:1], y[0])
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got), _high_half(x + x, y))  # (NumPy wraps too)
    np.testing.assert_array_equal(np.asarray(batched), _high_half(x[:1], y[:1]))


@pytest.mark.parametrize("dtype", ["int8", "int32"])
def test_jax_itself_refuses_the_fused_signed_mulhi(dtype):
    """Where refjax does better: XLA's CPU backend has no fused signed mulhi."""
    x, y = _operands(dtype)
    with pytest.raises(Exception, match="Unsupported elementwise operation.*mulhi"):
        real_jax.jit(lambda a, b: real_jax.lax.mulhi(a + a, b))(x, y)


def test_the_cli_finds_mulhi_conforming_on_xla_with_every_check(tmp_path):
    """The shrunk example of the full run's one failure (mulhi/vmap, batch size 1 with an
    unbatched operand) and the other checks of mulhi, on xla."""
    assert main(["--backend", "xla", "--primitives", "mulhi", "--examples", "3",
                 "--no-progress"]) == 0


@pytest.mark.parametrize("update", [False, True])
def test_batched_dynamic_slices_with_int8_indices_on_xla(update):
    """The full run's dynamic_slice/vmap and dynamic_update_slice/vmap failures: vmap adds
    int32 indices beside the user's int8 one, which lax.dynamic_slice refused."""
    x, start = np.arange(12.0, dtype=np.float32).reshape(3, 4), np.int8(2)
    if update:
        f = lambda row, i: refjax.lax.dynamic_update_slice(row, np.ones(2, np.float32), (i,))
        want = x.copy()
        want[:, 2:4] = 1.0
    else:
        f = lambda row, i: refjax.lax.dynamic_slice(row, (i,), (2,))
        want = x[:, 2:4]
    with refjax.backend("xla"):
        got = refjax.jit(refjax.vmap(f, in_axes=(0, None)))(x, start)
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("backend", ["numpy_ref", "xla"])
def test_the_jvp_of_cumprod_gives_cumprods_own_result(backend):
    """The full run's cumprod/jvp failure: the primal of the JVP (an associative scan) was an
    ulp from cumprod's result (on both backends); it is now cumprod's result itself."""
    x = np.random.default_rng(1).uniform(0.5, 1.5, (4, 64))  # (about 200 differed)
    f = lambda v: refjax.lax.cumprod(v, axis=1)
    with refjax.enable_x64(True), refjax.backend(backend):
        primal, tangent = refjax.jvp(f, (x,), (np.ones_like(x),))
        eager = f(x)
    np.testing.assert_array_equal(np.asarray(primal), np.asarray(eager))
    want = np.cumprod(x, 1) * np.cumsum(1 / x, 1)  # d/dt prod(x + t) = prod * sum(1/x)
    np.testing.assert_allclose(np.asarray(tangent), want, rtol=1e-11)


def test_mulhi_on_a_mesh_on_xla():
    """The layouts check's mulhi failure: XLA cannot lower a mulhi carrying a sharding
    ("Unable to convert MHLO to StableHLO", in JAX too); on a mesh it is computed from
    half-width limbs. Signed, unsigned and 64-bit operands against Python integers."""
    from refjax.sharding import NamedSharding, PartitionSpec
    mesh = refjax.make_mesh((2,), ("x",))
    for dtype in ("int8", "uint32", "int64"):
        x, y = (v[:64] for v in _operands(dtype))
        with refjax.enable_x64(dtype.endswith("64")), refjax.backend("xla"):
            xs, ys = (refjax.device_put(v, NamedSharding(mesh, PartitionSpec("x")))
                      for v in (x, y))
            got = refjax.jit(refjax.lax.mulhi)(xs, ys)
        np.testing.assert_array_equal(np.asarray(got), _high_half(x, y), err_msg=dtype)


def test_jax_itself_cannot_lower_mulhi_on_a_mesh():
    mesh = real_jax.make_mesh((2,), ("x",), axis_types=(real_jax.sharding.AxisType.Auto,))
    x = real_jax.device_put(np.arange(4, dtype=np.uint32),
                            real_jax.sharding.NamedSharding(mesh, real_jax.P("x")))
    with pytest.raises(Exception, match="Unable to convert MHLO to StableHLO"):
        real_jax.lax.mulhi(x, x)
