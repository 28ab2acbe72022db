"""jax.Array's remaining methods and attributes (copy, copy.copy/deepcopy, view, byteswap,
argpartition, choose, compress, searchsorted, flat, device_buffer(s), platform,
unsafe_buffer_pointer) on arrays and tracers, against real JAX 0.10.2."""
import copy
import pickle
import warnings

import jax as real_jax
import jax.numpy as real_jnp
import numpy as np
import pytest

import refjax

NAMES = ["__copy__", "__deepcopy__", "copy", "argpartition", "choose", "compress",
         "searchsorted", "view", "flat", "byteswap", "device_buffer", "device_buffers",
         "platform", "unsafe_buffer_pointer"]
TRACER_REFUSES = {"device_buffer", "device_buffers", "platform"}  # AttributeError in JAX


def outcome(fn):
    """repr of fn()'s result (values, dtype, weak type), or its error's class and first line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return repr(fn())
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def same(scenario):
    """scenario(jax, jnp), a list of thunks, gives the same outcomes on refjax as on JAX."""
    theirs = [outcome(f) for f in scenario(real_jax, real_jnp)]
    ours = [outcome(f) for f in scenario(refjax, refjax.numpy)]
    assert [(i, o) for i, o in enumerate(ours) if o != theirs[i]] == \
        [(i, t) for i, t in enumerate(theirs) if t != ours[i]]


def eager(jax, jnp):
    x, w = jnp.arange(6.0), jnp.asarray(2.0)
    i8 = jnp.arange(8, dtype=jnp.uint8)
    return [
        lambda: x.copy(), lambda: w.copy(), lambda: copy.copy(w), lambda: copy.deepcopy(w),
        lambda: pickle.loads(pickle.dumps(w)),
        lambda: jnp.array([3, 1, 2, 5, 4]).argpartition(2),
        lambda: jnp.array([[3, 1, 2], [5, 4, 0]]).argpartition(1, axis=0),
        lambda: jnp.array([0, 1, 2]).choose([jnp.arange(3), jnp.arange(3) * 10], mode="wrap"),
        lambda: jnp.array([0, 1, 2]).choose([jnp.arange(3), jnp.arange(3) * 10], mode="clip"),
        lambda: x.compress(jnp.array([True, False, True])),
        lambda: x.reshape(2, 3).compress(jnp.array([False, True]), axis=0),
        lambda: x.compress(jnp.array([True, True]), size=3, fill_value=-1),
        lambda: x.searchsorted(2.5), lambda: x.searchsorted(jnp.array([2.0, 3.0]), side="right"),
        lambda: x.view(jnp.int32), lambda: x.view(), lambda: x.view("uint32"),
        lambda: x.reshape(3, 2).view(jnp.int16), lambda: i8.view(jnp.float32),
        lambda: i8.reshape(2, 4).view(jnp.uint16), lambda: i8.view(jnp.int8),
        lambda: jnp.array([1, 0], dtype=jnp.uint8).view(jnp.bool_),
        lambda: jnp.array([True, False, False, True]).view(jnp.int16),
        lambda: jnp.arange(4, dtype=jnp.float32).view(jnp.complex64),
        lambda: jnp.array([1 + 2j, 3 - 4j], jnp.complex64).view(jnp.float32),
        lambda: jnp.array([1 + 2j], jnp.complex64).view(jnp.uint16),
        lambda: jnp.arange(2, dtype=jnp.float32).view(jnp.bfloat16),
        lambda: w.view(jnp.int32), lambda: w.view(jnp.float32), lambda: w.view(jnp.int16),
        lambda: i8[:3].view(jnp.int16), lambda: x.view(type=np.ndarray),
        lambda: x.view("float64"),
        lambda: jnp.arange(3, dtype=jnp.int16).byteswap(), lambda: x.byteswap(),
        lambda: jnp.asarray(3).byteswap(), lambda: jnp.array([True]).byteswap(),
        lambda: i8.byteswap(), lambda: jnp.array([1 + 2j], jnp.complex64).byteswap(),
        lambda: x.byteswap().byteswap(), lambda: x.byteswap(inplace=True),
        lambda: x.flat, lambda: x.device_buffer, lambda: x.device_buffers, lambda: x.platform(),
    ]


def test_methods_match_jax_on_arrays():
    same(eager)


def traced(jax, jnp):
    x = jnp.arange(6.0)
    mask = jnp.array([True, False, True, True, False, False])
    return [
        lambda: jax.jit(lambda a: (a.copy(), copy.copy(a), copy.deepcopy(a), a.byteswap(),
                                   a.view(jnp.int16), a.searchsorted(2.5), a.argpartition(2),
                                   a.compress(mask, size=4)))(x),
        lambda: jax.jit(lambda a, m: a.compress(m))(x, mask),
        lambda: jax.jit(lambda a: a.flat)(x), lambda: jax.jit(lambda a: a.platform())(x),
        lambda: jax.jit(lambda a: a.device_buffer)(x),
        lambda: jax.jit(lambda a: a.unsafe_buffer_pointer())(x),
        lambda: jax.vmap(lambda a: a.view(jnp.int16))(x.reshape(2, 3)),
        lambda: jax.vmap(lambda a: a.view(jnp.uint8))(x.reshape(6, 1)),
        lambda: jax.vmap(lambda a, v: a.searchsorted(v))(x.reshape(2, 3), jnp.array([1.5, 4.5])),
        lambda: jax.vmap(lambda i: i.choose([x[:3], -x[3:]]))(jnp.array([[0, 1, 0], [1, 1, 0]])),
        lambda: jax.grad(lambda a: (a.copy() ** 2 + copy.deepcopy(a) ** 3).sum())(x),
        lambda: jax.grad(lambda a: a.view(jnp.float32).sum() + a.compress(mask).sum())(x),
        lambda: jax.grad(lambda a: jnp.array([0, 1, 0]).choose([a[:3], a[3:] * 3]).sum())(x),
        lambda: jax.grad(lambda a: a.byteswap().sum())(x),
        lambda: jax.grad(lambda a: a.view(jnp.int32).sum())(x),
    ]


def test_methods_match_jax_under_jit_vmap_and_grad():
    same(traced)
