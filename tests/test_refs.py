"""Mutable array references (jax.new_ref, jax.Ref, jax.freeze, jax.empty_ref, jax.free_ref,
jax.ref): programs written once against a jax-like module run on refjax (both backends) and
on real JAX with the same values, dtypes, weak types, reference contents, printed jaxprs,
reprs and errors."""
import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _basic(jax):
    """Reads, writes, swaps and additions, eagerly."""
    r = jax.new_ref(jax.numpy.arange(4.0))
    r[...] += 1.0
    r[1] = 5.0
    old = jax.ref.swap(r, 0, 7.0)
    jax.ref.addupdate(r, 2, 10.0)
    r[1:3] = r[2:4] * 2
    r.addupdate(1.0, -1)
    ints = jax.new_ref(jax.numpy.arange(6, dtype="int32").reshape(2, 3))
    ints[:, ::2] = jax.numpy.zeros((2, 2), "int8")  # integers take the reference's dtype
    weak = jax.new_ref(1.0)
    return [old, r[1], r[-1], jax.ref.get(r, 2), jax.freeze(r), ints[...], ints[1],
            weak[...], jax.ref.swap(weak, ..., 3.0), jax.freeze(weak)]


def _jit_writes(jax):
    """A reference passed to jit and one it closes over: the writes are seen after each call;
    an index traced under jit counts from the end when negative and is clamped."""
    arg = jax.new_ref(jax.numpy.zeros(3))
    closed = jax.new_ref(jax.numpy.zeros((), "int32"))

    @jax.jit
    def step(ref, x, i):
        ref[...] += x
        ref[i] = -1.0
        closed[...] += 1
        return ref[0] * 2

    @jax.jit
    def bump():  # no outputs (the jit's second call, on its fast path, returns None too)
        closed[...] += 10

    outs = [step(arg, 1.0, 1), step(arg, 2.0, -1), step(arg, 3.0, 7)]
    assert bump() is None and bump() is None
    return outs + [jax.freeze(arg), closed[...]]


def _loops(jax):
    """References written in fori_loop and scan bodies (closed over). (A strongly typed
    reference: JAX's jit types what it reads from a weak one by the last value written.)"""
    acc = jax.new_ref(jax.numpy.float32(0.0))
    hist = jax.new_ref(jax.numpy.zeros(4))

    def body(i, c):
        acc[...] += c * i
        hist[i] = acc[...]
        return c + 1.0

    out = jax.lax.fori_loop(0, 4, body, 1.0)

    def scan_body(c, x):
        acc[...] = acc[...] * 0.5 + x
        return c + acc[...], acc[...]

    carry, ys = jax.jit(lambda xs: jax.lax.scan(scan_body, 0.0, xs))(jax.numpy.arange(3.0))
    return [out, jax.freeze(hist), carry, ys, acc[...]]


def _local(jax, x):
    """A function using a reference internally (what grad, jvp and vmap see)."""
    r = jax.new_ref(jax.numpy.zeros_like(x))
    r[...] = jax.numpy.sin(x)
    r[...] += x * x
    jax.ref.addupdate(r, 0, x[1] * 3.0)
    old = jax.ref.swap(r, 1, x[2] ** 2)
    return (jax.freeze(r) * old).sum()


def _empty(jax, x):
    r = jax.empty_ref(jax.ShapeDtypeStruct(x.shape, x.dtype))
    r[...] = x
    out = r[...] * r[...]
    jax.free_ref(r)
    return out.sum()


def _transforms(jax):
    x = jax.numpy.arange(1.0, 4.0)
    xs = jax.numpy.arange(1.0, 7.0).reshape(2, 3)

    def local(x):
        return _local(jax, x)
    return [jax.grad(local)(x), jax.jit(jax.grad(local))(x),
            jax.grad(jax.jit(local))(x), *jax.jvp(local, (x,), (jax.numpy.ones(3),)),
            jax.vmap(local)(xs), jax.vmap(jax.grad(local))(xs),
            jax.grad(jax.jit(lambda x: _empty(jax, x)))(x)]


def _int_arrays(jax):
    """Integer-array indices (advanced indexing: broadcast together, in place when adjacent,
    in front otherwise; negative ones count from the end), read, written and added to
    (repeated indices each add), eagerly, under jit and grad."""
    jnp = jax.numpy
    i2, i3 = jnp.array([0, 2]), jnp.array([1, -1, 3])

    def f(x):
        r = jax.new_ref(x)
        reads = [r[i3, jnp.array([[1], [2]])], r[i2, 1:3], r[i2, :, 0], r[:, i2, 1],
                 r[i2, 0, i2]]
        r[i2, jnp.array([0, 0]), 1] = reads[1][:, 0, 0] * 2
        r[1, jnp.array([0, -1])] += 1.0
        jax.ref.addupdate(r, (jnp.array([2, 2, 0]), 1), jnp.arange(3.0 * 4).reshape(3, 4))
        return [jax.freeze(r)] + reads

    x = jnp.arange(4.0 * 3 * 4).reshape(4, 3, 4)
    loss = lambda x: sum(jnp.sum(jnp.sin(y)) for y in f(x))  # noqa: E731
    return [*f(x), *jax.jit(f)(x), jax.grad(loss)(x), jax.jit(jax.grad(loss))(x)]


def _branch(jax, x):
    r = jax.new_ref(0.0)
    jax.lax.cond(x > 0, lambda: r.__setitem__(..., x * 3), lambda: r.__setitem__(..., x))
    return r[...]


def _reverse_loops(jax):
    """Reverse mode through scan, fori_loop and cond bodies writing references (run iteration
    by iteration in refjax), eagerly and under jit (scan); a while loop is refused."""
    jnp = jax.numpy

    def fori(x):
        acc = jax.new_ref(jnp.zeros(3))

        def body(i, c):
            acc[i] = jnp.sin(x * i) + acc[i - 1]
            return c * x
        out = jax.lax.fori_loop(0, 3, body, x)  # before the reference is read
        return jnp.sum(acc[...]) + out

    def scan(x):
        r = jax.new_ref(0.0)

        def body(c, xi):
            r[...] += xi * x
            return c * x, c + r[...]
        c, ys = jax.lax.scan(body, 1.0, jnp.arange(3.0), reverse=True)
        return r[...] + c + ys.sum()

    def loop(x):
        r = jax.new_ref(0.0)
        jax.lax.while_loop(lambda i: i < 3, lambda i: (r.__setitem__(..., x * i), i + 1)[1], 0)
        return r[...]
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.grad(loop)(2.0)
    return [g(f)(x) for f in (fori, scan) for g in (jax.grad, lambda f: jax.jit(jax.grad(f)))
            for x in (2.0, -0.5)] + [jax.grad(lambda x: _branch(jax, x))(x) for x in (2.0, -1.0)]


PROGRAMS = {"basic": _basic, "jit_writes": _jit_writes, "loops": _loops,
            "transforms": _transforms, "int_arrays": _int_arrays, "reverse_loops": _reverse_loops}


def _assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert (a.dtype, a.shape, a.weak_type) == (b.dtype, b.shape, b.weak_type), k
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, err_msg=str(k))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_match_jax(name):
    _assert_same(PROGRAMS[name](refjax), PROGRAMS[name](real_jax))


def _views(jax):
    """`ref.at[idx]` of a traced reference (JAX's TransformedRef): reads and writes of the
    part it selects, views of views (strided, negative, traced and '...' indices), and what
    the reference holds afterwards; shapes seen while tracing."""
    jnp, shapes = jax.numpy, []
    r, r2 = jax.new_ref(jnp.arange(6.0)), jax.new_ref(jnp.arange(12.0).reshape(3, 4))

    def f(ref, ref2):
        v, w, u = ref.at[1:5], ref.at[::2].at[1:], ref2.at[1:, ::2]
        shapes.append((v.shape, w.shape, u.shape, v.ndim, v.dtype == ref.dtype))
        out = [v.get(), v[1]]
        v[0] = 10.0
        out.append(v.at[1:].get())
        v.at[1].set(20.0)
        w[0] = -1.0
        u.at[0].set(jnp.zeros(2))
        return out + [w.get(), v.at[-1].get(), ref.at[jnp.int32(2)].get(), u[:, 1],
                      ref2.at[1].at[2:].get(), ref2.at[..., 1].get()]
    return jax.jit(f)(r, r2) + [r[...], r2[...]], shapes


def test_views_of_traced_references_as_jax():
    (ours, our_shapes), (theirs, their_shapes) = _views(refjax), _views(real_jax)
    _assert_same(ours, theirs)
    assert our_shapes == their_shapes == [((4,), (2,), (2, 2), 1, True)]


def test_empty_ref_and_free_ref():
    """JAX evaluates empty_ref only under its jit; refjax everywhere, and under vmap too
    (JAX leaves it unbatched, so that the batched write fails)."""
    x = np.arange(3.0, dtype=np.float32)

    def run(jax, transform):
        return transform(lambda x: _empty(jax, x))

    ours = [run(refjax, refjax.jit)(x), _empty(refjax, x), run(refjax, refjax.grad)(x)]
    theirs = [run(real_jax, real_jax.jit)(x)] * 2 + [
        run(real_jax, lambda f: real_jax.grad(real_jax.jit(f)))(x)]
    _assert_same(ours, theirs)
    with pytest.raises(NotImplementedError, match="empty_ref"):
        _empty(real_jax, x)
    np.testing.assert_array_equal(run(refjax, refjax.vmap)(np.stack([x, 2 * x])), [5.0, 20.0])
    with pytest.raises(Exception, match="vmapped value on an unbatched array reference"):
        run(real_jax, lambda f: real_jax.vmap(real_jax.jit(f)))(np.stack([x, 2 * x]))


def _printed(jax):
    def update(x):
        r = jax.new_ref(x)
        r[0, 0] = 5.0
        r[...] = r[...] + 1.0
        jax.ref.addupdate(r, (1, slice(1, None)), x[0, :2])
        old = jax.ref.swap(r, -1, x[1])
        return old, r[:, 1], r[1:2, ::2], jax.freeze(r)

    def passed(r, y):
        r[...] += y
        return r[0]

    def empty():
        jax.free_ref(jax.empty_ref(jax.ShapeDtypeStruct((2,), "float32")))

    x = jax.numpy.ones((2, 3))
    return [jax.make_jaxpr(update)(x), jax.make_jaxpr(passed)(jax.new_ref(x[0]), 1.0),
            jax.make_jaxpr(empty)()]


def test_jaxprs_print_as_jax():
    assert [str(j) for j in _printed(refjax)] == [str(j) for j in _printed(real_jax)]


def test_repr_typeof_and_attributes():
    for value in (np.array([1.0, 2.0]), 3, np.arange(6, dtype=np.int8).reshape(2, 3)):
        ours, theirs = refjax.new_ref(value), real_jax.new_ref(value)
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
        assert str(refjax.typeof(ours)) == str(real_jax.typeof(theirs))
        assert (ours.shape, ours.dtype, ours.ndim, ours.size) == \
            (theirs.shape, theirs.dtype, theirs.ndim, theirs.size)
    assert isinstance(ours, refjax.Ref) and isinstance(refjax.typeof(ours), refjax.ref.AbstractRef)
    assert len(ours) == 2 and str(refjax.typeof(ours)) == "Ref{int8[2,3]}"


def test_values_are_never_shared():
    """The reference copies what it is made from, values read from it and frozen from it
    stay as they were when it is written later, and NumPy views of them are read-only."""
    source = np.zeros(3, np.float32)
    r = refjax.new_ref(source)
    source[0] = 9.0
    read, frozen = r[...], refjax.freeze(r)
    r[...] = np.ones(3, np.float32)
    r[1] += 5.0
    np.testing.assert_array_equal(read, [0, 0, 0])
    np.testing.assert_array_equal(frozen, [0, 0, 0])
    np.testing.assert_array_equal(refjax.freeze(r), [1, 6, 1])
    assert not np.asarray(refjax.freeze(r)).flags.writeable


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e), str(e).split("Transforms:")[0].split("Indexer:")[0]
    return None


def _error_cases(jax):
    r = jax.new_ref(jax.numpy.zeros(3))
    return [
        lambda: r.__setitem__(..., jax.numpy.ones(4)),
        lambda: r.__setitem__(..., jax.numpy.ones(3, "int32")),
        lambda: r.__setitem__(..., 1),  # a Python int is no float
        lambda: r[5],
        lambda: r[0, 0],
        lambda: r[::-1],
        lambda: r + 1,
        lambda: jax.new_ref([1.0]),
        lambda: jax.jit(lambda a, b: None)(r, r),
        lambda: jax.jit(lambda a: r[...])(r),
        lambda: jax.jit(lambda a, d: d["r"])(1.0, {"r": r}),  # names the argument returned
        lambda: jax.jit(lambda a: (a, {"k": jax.new_ref(a)}))(1.0),  # its path and line
        lambda: jax.jit(lambda a: r)(1.0),  # closed over: no origin
        lambda: jax.lax.sin(r),
        lambda: r[jax.numpy.array([0.5])],
        lambda: jax.vmap(lambda x: r.__setitem__(..., x))(jax.numpy.ones((2, 3))),
        lambda: jax.grad(lambda x: (r.__setitem__(..., x), x.sum())[1])(jax.numpy.ones(3)),
    ]


def test_errors_match_jax():
    ours = [_error(f) for f in _error_cases(refjax)]
    theirs = [_error(f) for f in _error_cases(real_jax)]
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a is not None and b is not None, k
        # JAX raises a bare Exception for the vmap and grad misuses: refjax a ValueError
        assert a[0] is b[0] or b[0] is Exception and a[0] is ValueError, (k, a, b)
        assert a[1].strip() == b[1].strip() or a[0] is TypeError, (k, a, b)


def test_errors_where_jax_is_poor_or_missing():
    """A reference returned from jit names the function (as JAX's); a Ref of a Ref is a
    TypeError (JAX: a bare AssertionError); an empty strided slice reads nothing (JAX: a
    TypeError about negative slice limits); a traced reference in arithmetic is JAX's
    error for a Ref given to a primitive (JAX: an AttributeError, `_mul`); grad of a cond
    using references under jit is refused (JAX differentiates it)."""
    r = refjax.new_ref(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"Attempting to pass a Ref Ref\{float32\[3\]\} to a "
                       "primitive: mul -- did you forget to unpack"):
        refjax.jit(lambda r: r * 2)(r)
    with pytest.raises(AttributeError, match="_mul"):
        real_jax.jit(lambda r: r * 2)(real_jax.new_ref(np.zeros(3)))
    with pytest.raises(ValueError, match="traced for jit returned a mutable array reference "
                       r"of type Ref\{float32\[\]\}"):
        refjax.jit(lambda: refjax.new_ref(1.0))()
    with pytest.raises(AssertionError):
        real_jax.new_ref(real_jax.new_ref(1.0))
    with pytest.raises(TypeError, match="not a Ref"):
        refjax.new_ref(r)
    assert refjax.jit(lambda r: r[:0:2])(r).shape == (0,) == r[:0:2].shape
    with pytest.raises(TypeError, match="limit_indices"):
        real_jax.new_ref(np.zeros(3))[:0:2]

    with pytest.raises(NotImplementedError, match="a cond using mutable array references "
                       ".*index is traced"):
        refjax.jit(refjax.grad(lambda x: _branch(refjax, x)))(2.0)
    # index arrays that do not broadcast: JAX's message forgets to format the shapes
    pair = (np.array([0, 1]), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"indexing: \[\(2,\), \(3,\)\]"):
        refjax.new_ref(np.zeros((3, 3)))[pair]
    with pytest.raises(ValueError, match="indexing: {indexer_shapes}"):
        real_jax.new_ref(np.zeros((3, 3)))[pair]


def _ref_layouts(j):
    """A reference made from an array sharded over two devices keeps its layout: a whole
    read, a swap's old value and freeze give it, eagerly and under jit."""
    mesh = j.sharding.Mesh(np.array(j.devices()[:2]), ("x",))
    x = j.device_put(np.arange(4, dtype=np.float32), j.sharding.NamedSharding(mesh, j.P("x")))

    def f(x):
        r = j.new_ref(x)
        return [r[...], j.ref.swap(r, ..., x * 2), j.freeze(r)]
    return [str(o.sharding.spec) for o in f(x) + j.jit(f)(x)]


def test_a_reference_keeps_its_arrays_layout():
    assert _ref_layouts(refjax) == on_jax(_ref_layouts)
