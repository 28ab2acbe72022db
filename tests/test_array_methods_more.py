"""jax.Array's remaining methods and attributes (copy, copy.copy/deepcopy, view, byteswap,
argpartition, choose, compress, searchsorted, flat, device_buffer(s), platform,
unsafe_buffer_pointer) on arrays and tracers, against real JAX 0.10.2."""
import copy
import pickle
import re
import warnings

import jax as real_jax
import jax.numpy as real_jnp
import numpy as np
import pytest

import refjax

NAMES = ["__copy__", "__deepcopy__", "copy", "argpartition", "choose", "compress",
         "searchsorted", "view", "flat", "byteswap", "device_buffer", "device_buffers",
         "platform", "unsafe_buffer_pointer", "clone"]
TRACER_REFUSES = {"device_buffer", "device_buffers", "platform", "clone"}  # AttributeError in JAX


def outcome(fn):
    """repr of fn()'s result (values, dtype, weak type), or its error's class and first line."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return repr(fn())
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def same(scenario, case):
    """The case-th thunk of scenario(jax, jnp) gives the same outcome on refjax as on JAX
    (refjax's messages may name the function first, as `jnp.compress: `)."""
    theirs = outcome(scenario(real_jax, real_jnp)[case])
    assert re.sub(r"jnp\.\w+: ", "", outcome(scenario(refjax, refjax.numpy)[case])) == theirs


def cases(scenario):
    """One test case per thunk (the default run takes a share of them, `thorough` all: each
    compiles its own programs in JAX)."""
    return pytest.mark.parametrize("case", range(len(scenario(refjax, refjax.numpy))))


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
        lambda: jnp.array([0, 2]).choose([x[:2], x[2:4]]),
        lambda: jnp.array([3, 1, 2]).argpartition(1, kind="introselect"),
        lambda: jnp.array([3.0, 1.0, 2.0]).searchsorted(2.5, sorter=jnp.array([1, 2, 0])),
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
        lambda: x.compress(jnp.array([1, 0, 0, 0, 0, 0, 1])),
        lambda: jnp.ones((2, 3)).compress(jnp.array([1, 0, 1]), axis=1, size=3, fill_value=7),
        lambda: x.flat, lambda: x.device_buffer, lambda: x.device_buffers, lambda: x.platform(),
    ]


@cases(eager)
def test_methods_match_jax_on_arrays(case):
    same(eager, case)


def traced(jax, jnp):
    x = jnp.arange(6.0)
    mask = jnp.array([True, False, True, True, False, False])
    return [
        lambda: jax.jit(lambda a: (a.copy(), copy.copy(a), copy.deepcopy(a), a.byteswap(),
                                   a.view(jnp.int16), a.searchsorted(2.5), a.argpartition(2),
                                   a.compress(mask, size=4)))(x),
        lambda: jax.jit(lambda a: a.flat)(x),
        lambda: jax.jit(lambda a: a.unsafe_buffer_pointer())(x),
        lambda: jax.vmap(lambda a: a.view(jnp.int16))(x.reshape(2, 3)),
        lambda: jax.vmap(lambda a: a.view(jnp.uint8))(x.reshape(6, 1)),
        lambda: jax.vmap(lambda a: a.view(jnp.int16), in_axes=1)(x.reshape(3, 2)),
        lambda: jax.vmap(lambda a: a.view(jnp.complex64), in_axes=1)(x.reshape(2, 3)[:, :2]),
        lambda: jax.vmap(lambda a: (a.byteswap(), a.argpartition(1)), in_axes=1)(x.reshape(2, 3)),
        lambda: jax.vmap(lambda a: a.view(jnp.int16))(x),
        lambda: jax.jvp(lambda a: a.view(jnp.float32).copy(), (x,), (x,)),
        lambda: jax.vmap(lambda a, v: a.searchsorted(v))(x.reshape(2, 3), jnp.array([1.5, 4.5])),
        lambda: jax.vmap(lambda i: i.choose([x[:3], -x[3:]]))(jnp.array([[0, 1, 0], [1, 1, 0]])),
        lambda: jax.grad(lambda a: (a.copy() ** 2 + copy.deepcopy(a) ** 3).sum())(x),
        lambda: jax.grad(lambda a: a.view(jnp.float32).sum() + a.compress(mask).sum())(x),
        lambda: jax.grad(lambda a: jnp.array([0, 1, 0]).choose([a[:3], a[3:] * 3]).sum())(x),
        lambda: jax.grad(lambda a: a.byteswap().sum())(x),
        lambda: jax.grad(lambda a: a.view(jnp.int32).sum())(x),
    ]


@cases(traced)
def test_methods_match_jax_under_jit_vmap_and_grad(case):
    same(traced, case)


def test_tracers_refuse_concrete_only_names_and_compress_says_why():
    """A tracer has no device_buffer(s) or platform (AttributeError, as JAX's tracers), and its
    unsafe_buffer_pointer(), traceback and pickling are ConcretizationTypeErrors. jnp.compress of a traced condition
    without `size` does better than JAX, whose TracerBoolConversionError speaks of a bool[]
    scalar: refjax's ConcretizationTypeError names the `size` argument."""
    x = refjax.numpy.arange(6.0)
    for name in TRACER_REFUSES:
        with pytest.raises(AttributeError, match=name):
            refjax.jit(lambda a, name=name: getattr(a, name))(x)
    for lib in (real_jax, refjax):
        for refuse, says in ((lambda a: a.traceback, "The traceback property was called on"),
                             (pickle.dumps, "The error occurred in the __reduce__ method")):
            with pytest.raises(lib.errors.ConcretizationTypeError) as refused:
                lib.jit(lambda a, refuse=refuse: refuse(a) and a)(np.arange(6.0))
            assert "traced array with shape float32[6]" in str(refused.value)
            assert says in str(refused.value)
    with pytest.raises(refjax.errors.ConcretizationTypeError, match="unsafe_buffer_pointer"):
        refjax.jit(lambda a: a.unsafe_buffer_pointer())(x)
    mask = x > 2
    with pytest.raises(real_jax.errors.TracerBoolConversionError, match=r"bool\[\]"):
        real_jax.jit(lambda a, m: a.compress(m))(real_jnp.asarray(x), real_jnp.asarray(mask))
    with pytest.raises(refjax.errors.ConcretizationTypeError, match="size argument of jnp.compress"):
        refjax.jit(lambda a, m: a.compress(m))(x, mask)


def test_dir_of_arrays_and_tracers_lists_what_jax_lists():
    seen = {}
    for lib in (real_jax, refjax):
        lib.jit(lambda a, lib=lib: seen.setdefault(lib, [n for n in NAMES if n in dir(a)]) and a)(
            lib.numpy.ones(3))
        assert [n for n in NAMES if n in dir(lib.numpy.ones(3))] == NAMES
    assert seen[refjax] == seen[real_jax] == [n for n in NAMES if n not in TRACER_REFUSES]


_BITS = (lambda a: a.view("int16"), lambda a: a.byteswap())


@pytest.mark.backends("numpy_ref", "xla")
def test_copies_keep_placement_and_share_no_memory():
    """copy(), copy.copy, copy.deepcopy and clone() keep the sharding, committedness and weak
    type (of an array on one device, one split over a mesh and a weak scalar, as JAX's:
    checked against it); a pickled array comes back uncommitted on the default device. No
    copy shares memory with the original or with a NumPy array the caller got from it. A
    deleted array's clone() raises RuntimeError (JAX's crashes the process). view and
    byteswap of the array split over Explicit axes keep its layout, as JAX's."""
    def copies(lib):
        mesh = lib.make_mesh((4,), ("a",), axis_types=(lib.sharding.AxisType.Explicit,))
        y = lib.device_put(np.arange(8.0, dtype=np.float32), lib.NamedSharding(mesh, lib.P("a")))
        d = lib.device_put(lib.numpy.asarray(2.0), lib.devices()[3])
        return [(x, c) for x in (y, d, lib.numpy.asarray(3.0))
                for c in (x.copy(), copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x)))]

    def show(pairs):
        return [(str(c.sharding), c.committed, str(type(c).__name__), str(real_jax.typeof(c))
                 if isinstance(c, real_jax.Array) else str(refjax.typeof(c)), repr(c))
                for _, c in pairs]
    ours = copies(refjax)
    assert show(ours) == show(copies(real_jax))
    split, theirs = ours[0][0], copies(real_jax)[0][0]
    assert show([(split, f(split)) for f in _BITS]) == show([(theirs, f(theirs)) for f in _BITS])
    clones = [(x, x.clone()) for x, _ in ours[::4]]  # JAX's clone may share the buffer
    assert show(clones) == show([(x, x.clone()) for x, _ in copies(real_jax)[::4]])
    for x, c in ours + clones:
        assert c is not x and not np.shares_memory(np.asarray(c), np.asarray(x))
        assert c.unsafe_buffer_pointer() != x.unsafe_buffer_pointer() if len(x.devices()) == 1 \
            else [s.data.unsafe_buffer_pointer() for s in c.addressable_shards] != \
            [s.data.unsafe_buffer_pointer() for s in x.addressable_shards]
    gone = refjax.numpy.arange(3.0)
    gone.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        gone.clone()


@pytest.mark.backends("numpy_ref", "xla")
def test_unsafe_buffer_pointer_is_the_address_numpy_views_share():
    """The oracle can honestly give the address of the memory it holds the values in: the
    one NumPy views of the array (np.asarray) point at, stable from call to call. Arrays on
    several devices raise JAX's JaxRuntimeError."""
    x = refjax.numpy.arange(4.0) + 1
    assert x.unsafe_buffer_pointer() == x.unsafe_buffer_pointer() == np.asarray(x).ctypes.data
    mesh = refjax.make_mesh((2,), ("a",))
    y = refjax.device_put(x, refjax.NamedSharding(mesh, refjax.P()))
    with pytest.raises(real_jax.errors.JaxRuntimeError) as theirs:
        real_jax.device_put(real_jnp.asarray(x), real_jax.NamedSharding(
            real_jax.make_mesh((2,), ("a",)), real_jax.P())).unsafe_buffer_pointer()
    with pytest.raises(refjax.errors.JaxRuntimeError) as ours:
        y.unsafe_buffer_pointer()
    assert str(ours.value) == str(theirs.value)
    gone = [lib.numpy.arange(3.0) for lib in (real_jax, refjax)]
    for g in gone:
        g.delete()
    with pytest.raises(real_jax.errors.JaxRuntimeError) as theirs:
        gone[0].unsafe_buffer_pointer()
    with pytest.raises(refjax.errors.JaxRuntimeError) as ours:
        gone[1].unsafe_buffer_pointer()
    # JAX's message has a typo, "UnsafeBufferPointer(", which refjax's lacks
    assert str(ours.value) == str(theirs.value).replace("Pointer(", "Pointer()")
    x.delete()
    assert x.platform() == "cpu"  # JAX's crashes the process
