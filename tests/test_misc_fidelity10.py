"""Small user-visible differences from JAX 0.10.2, each settled against real JAX run side by
side: 64-bit dtype warnings of lax functions and reductions, Array.format and traceback,
the names jit gives callable objects, lax.pvary's removal."""
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import refjax
import refjax.numpy as rnp


def _warned(fn):
    """The warnings fn gives, as (category, message), and the files they point to."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, str(w.message)) for w in caught], {w.filename for w in caught}


def _jax_warned(fn):
    """The warnings JAX gives for fn called the first time: its jitted jnp functions check
    dtypes when traced, so only a call missing their caches warns (refjax's warn on every
    call, as JAX's first). Traced, not run: nothing compiles."""
    jax.clear_caches()
    return _warned(lambda: jax.eval_shape(fn))


# each call takes (jax-like module, its numpy, dtype)
DTYPE_CALLS = {
    "convert_element_type": lambda j, n, d: j.lax.convert_element_type(n.arange(3.0), d),
    "convert of a scalar": lambda j, n, d: j.lax.convert_element_type(1.0, d),
    "full": lambda j, n, d: j.lax.full((2,), 1, d),
    "full_like": lambda j, n, d: j.lax.full_like(n.ones(2), 1, d),
    "iota": lambda j, n, d: j.lax.iota(d, 3),
    "broadcasted_iota": lambda j, n, d: j.lax.broadcasted_iota(d, (2, 3), 1),
    "bitcast_convert_type": lambda j, n, d: j.lax.bitcast_convert_type(n.ones(2), d),
    "dot": lambda j, n, d: j.lax.dot(n.ones(2), n.ones(2), preferred_element_type=d),
    "dot_general": lambda j, n, d: j.lax.dot_general(n.ones(2), n.ones(2), (([0], [0]), ([], [])),
                                                     None, d),
    "conv_general_dilated": lambda j, n, d: j.lax.conv_general_dilated(
        n.ones((1, 1, 3)), n.ones((1, 1, 2)), (1,), "VALID", preferred_element_type=d),
    "conv_transpose": lambda j, n, d: j.lax.conv_transpose(
        n.ones((1, 3, 1)), n.ones((2, 1, 1)), (1,), "VALID", preferred_element_type=d),
    "convolve": lambda j, n, d: n.convolve(n.ones(3), n.ones(2), preferred_element_type=d),
    "rng_bit_generator": lambda j, n, d: j.lax.rng_bit_generator(n.zeros(4, "uint32"), (2,), d),
    "sum": lambda j, n, d: n.sum(n.ones((2, 2)), 0, dtype=d),  # twice: sum, then its convert
    "prod": lambda j, n, d: n.prod(n.ones(2), dtype=d, keepdims=True),
    "nanprod": lambda j, n, d: n.nanprod(n.ones(2), dtype=d),
    "cumsum": lambda j, n, d: n.cumsum(n.ones(2), dtype=d),
    "std": lambda j, n, d: n.std(n.ones(2), dtype=d),
    "nanstd": lambda j, n, d: n.nanstd(n.ones(2), dtype=d),
    "mean": lambda j, n, d: n.mean(n.ones(2), dtype=d),
    "cumulative_sum": lambda j, n, d: n.cumulative_sum(n.ones(2), dtype=d),  # names none
    "trace": lambda j, n, d: n.trace(n.ones((2, 2)), dtype=d),
    "empty": lambda j, n, d: n.empty(2, d),
    "identity": lambda j, n, d: n.identity(2, d),
    "vecdot": lambda j, n, d: n.vecdot(n.ones(2), n.ones(2), preferred_element_type=d),
    "float64(x)": lambda j, n, d: n.float64(n.ones(2)),
    "uniform": lambda j, n, d: j.random.uniform(j.random.key(0), (2,), d),
    "randint": lambda j, n, d: j.random.randint(j.random.key(0), (2,), 0, 3, d),
    "traced": lambda j, n, d: _traced(j, n, functools.partial(j.lax.convert_element_type,
                                                               new_dtype=d)),
}


def _traced(j, n, f):
    """f staged: a jit called twice (traced once), a vmap and a grad."""
    g = j.jit(f)
    return g(n.ones(2)), g(n.ones(2)), j.vmap(f)(n.ones(2)), j.grad(f)(1.0)


# the dtypes each call is asked for: a 64-bit one, a 32-bit one, Python's (default) type
_KINDS = {"f": ("float64", "float32", float), "i": ("int64", "int32", int),
          "u": ("uint64", "uint32")}
_KIND_OF = {"iota": "i", "broadcasted_iota": "i", "randint": "i", "bitcast_convert_type": "i",
            "rng_bit_generator": "u"}


@pytest.mark.backends("numpy_ref")
def test_64_bit_dtypes_warn_as_jax():
    """Every call warns as JAX's (text, count) for a 64-bit dtype, and not for a 32-bit one or
    Python's float; refjax's warnings name the user's line, where JAX's from jitted jnp
    functions and iota name its own source."""
    for name, call in DTYPE_CALLS.items():
        for d in _KINDS[_KIND_OF.get(name, "f")]:
            theirs, _ = _jax_warned(lambda: call(jax, jnp, d))
            ours, files = _warned(lambda: call(refjax, rnp, d))
            assert ours == theirs, (name, d)
            assert files <= {__file__}, (name, files)
            assert bool(ours) == (d in ("float64", "int64", "uint64") or name == "float64(x)")
    assert len(_warned(lambda: DTYPE_CALLS["sum"](refjax, rnp, "float64"))[0]) == 2
    assert len(_warned(lambda: DTYPE_CALLS["traced"](refjax, rnp, "float64"))[0]) == 3


@pytest.mark.backends("numpy_ref")
def test_ragged_dot_warns_as_jax_then_computes():
    """JAX's ragged_dot warns (naming dot), then fails to lower its float32 result typed as
    the float64 it was asked for (ValueError); refjax computes it in float32."""
    args = np.ones((4, 2), np.float32), np.ones((2, 2, 3), np.float32), np.array([2, 2])

    def asked(lib, np_):
        return lib.lax.ragged_dot(*map(np_.asarray, args), preferred_element_type="float64")

    def failing(lib, np_):
        lib.clear_caches()  # a traced call would not warn again
        with pytest.raises(ValueError, match="Cannot lower jaxpr with verifier errors"):
            asked(lib, np_)
    assert _warned(lambda: asked(refjax, rnp))[0] == _warned(lambda: failing(jax, jnp))[0]
    with pytest.warns(UserWarning, match="requested in dot "):
        out = asked(refjax, rnp)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.full((4, 3), 2.0))


@pytest.mark.backends("numpy_ref")
def test_reduction_warnings_name_the_function_called():
    """JAX's nansum names nanprod and nanmean names mean (slips in its source); refjax names
    the function called, warning as many times."""
    assert "requested in nanprod " in str(
        _jax_warned(lambda: jnp.nansum(jnp.ones(2), dtype="int64")))
    assert "requested in mean " in str(
        _jax_warned(lambda: jnp.nanmean(jnp.ones(2), dtype="float64")))
    ours = _warned(lambda: rnp.nansum(rnp.ones(2), dtype="int64"))[0]
    assert len(ours) == 1 and "requested in nansum " in ours[0][1]
    ours = _warned(lambda: rnp.nanmean(rnp.ones(2), dtype="float64"))[0]
    assert len(ours) == 1 and "requested in nanmean " in ours[0][1]


@pytest.mark.backends("numpy_ref")
def test_convert_element_type_keeps_jax_signature_and_errors():
    import inspect
    assert list(inspect.signature(refjax.lax.convert_element_type).parameters) == \
        list(inspect.signature(jax.lax.convert_element_type).parameters)
    for bad in (None, "foo"):
        for lib, np_ in ((jax, jnp), (refjax, rnp)):
            with pytest.raises(ValueError if bad is None else TypeError):
                lib.lax.convert_element_type(np_.ones(2), bad)
    for lib in (jax, refjax):  # the dtype is warned about before the key is refused
        with pytest.warns(UserWarning, match="requested in convert_element_type"), \
                pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to "
                              "float32"):
            lib.lax.convert_element_type(lib.random.key(0), "float64")
    with refjax.enable_x64(True):
        assert refjax.lax.convert_element_type(rnp.ones(2), "float64").dtype == np.float64
        assert _warned(lambda: refjax.lax.full((2,), 1, "float64"))[0] == []


# ---------------------------------------------------------------- Array.format, traceback

def _format_cases(lib, np_):
    """Arrays of several ranks and dtypes (sub-byte ones too), made as several operations
    make them, and one split over a mesh."""
    mesh = lib.make_mesh((2, 4), ("x", "y"), axis_types=(lib.sharding.AxisType.Auto,) * 2)
    x = np_.arange(6.0).reshape(2, 3)
    return [x, x.T, np_.float32(1), np_.ones((2, 3, 4), "int8"), np_.zeros((0, 3)),
            np_.ones(3, "int4"), np_.ones(2, "bfloat16"), np_.ones(2, bool),
            lib.jit(lambda a: a.T)(x),
            lib.device_put(np_.ones((4, 8)), lib.NamedSharding(mesh, lib.P("x", "y")))]


@pytest.mark.backends("numpy_ref", "xla")
def test_array_format_is_jax_cpu_layout():
    from refjax.experimental.layout import Format, Layout
    theirs = [repr(a.format) for a in _format_cases(jax, jnp)]
    ours = _format_cases(refjax, rnp)
    assert [repr(a.format) for a in ours] == theirs
    f = ours[0].format
    assert f == Format(Layout((0, 1), ()), ours[0].sharding) and hash(f) == hash(ours[0].format)
    assert f.layout != Layout((0, 1)) and f.layout.update(tiling=None) == Layout((0, 1))
    with pytest.raises(AttributeError):
        refjax.jit(lambda a: a.format)(ours[0])  # as JAX's tracers: no such attribute
    deleted = [lib.numpy.ones(2) for lib in (jax, refjax)]
    for x in deleted:
        x.delete()
    assert repr(deleted[1].format) == repr(deleted[0].format)  # no layout: no buffers
    assert deleted[1].traceback is deleted[0].traceback is None


def test_layout_and_format_classes_as_jax():
    import jax.experimental.layout as theirs

    import refjax.experimental.layout as ours
    def cases(L, sharding):
        return [lambda: L.Layout([1, 0], [[8, 128]]), lambda: L.Layout((0,)).update(tiling=()),
                lambda: L.Format(), lambda: L.Format(L.Layout.AUTO, sharding),
                lambda: L.Format(None, sharding), lambda: L.Format(L.Layout((0,)), sharding),
                lambda: L.Format(L.Layout((0,))), lambda: L.Format(sharding),
                lambda: L.Format(None, 3), lambda: L.Layout((0, 1)).check_compatible_aval((2,)),
                lambda: L.Layout((0, 1)) == L.Layout((0, 1), None), lambda: L.Format() == None]  # noqa: E711
    for mine, real in zip(cases(ours, refjax.sharding.SingleDeviceSharding(refjax.devices()[0])),
                          cases(theirs, jax.sharding.SingleDeviceSharding(jax.devices()[0]))):
        ours_out, theirs_out = _outcome(mine), _outcome(real)
        for where, here in (("jax._src.layout", "refjax.api.layout"),
                            ("<class 'jax.sharding.", "<class 'refjax.core.sharding.shardings.")):
            theirs_out = theirs_out.replace(where, here)
        assert ours_out == theirs_out


def _outcome(fn):
    try:
        return repr(fn())
    except (TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}"


@pytest.mark.backends("numpy_ref", "xla")
def test_array_traceback_is_where_it_was_made():
    """Innermost frame first, the user's line last, printed `file:line (function)` per frame as
    JAX's; the frames between are each library's own."""
    def made_here(lib, np_):
        return lib.jit(lambda a: a + 1)(np_.ones(2))  # the line both tracebacks end at

    line = made_here.__code__.co_firstlineno + 1
    for lib, np_ in ((jax, jnp), (refjax, rnp)):
        tb = made_here(lib, np_).traceback
        users = [f for f in tb.frames if f.file_name == __file__]
        assert (users[0].function_name, users[0].line_num) == (
            "test_array_traceback_is_where_it_was_made.<locals>.made_here", line)
        assert users[0].function_start_line == line - 1
        assert str(users[0]) == f"{users[0].function_name};{__file__}:{line}"
        assert users[1].function_name == "test_array_traceback_is_where_it_was_made"
        assert f"{__file__}:{line} (test_array_traceback_is_where_it_was_made.<locals>" \
            f".made_here)" in str(tb).splitlines()
    x = rnp.ones(2)
    assert refjax.device_put(x).traceback == x.traceback != rnp.ones(2).traceback
    with pytest.raises(AttributeError):
        x.traceback = None


# ---------------------------------------------------------------- jit of callable objects

class _Scaler:
    def __init__(self, post):
        self.post = post

    def __call__(self, x):
        return self.post(x * 2)

    def shift(self, x):
        return self.post(x + 1)


def _add(x, y, post):
    return post(x + y)


def _callables(post):
    """An instance with __call__, partials (nested too), a bound method, a lambda; `post`
    makes their results (a valid one, or one holding no JAX value)."""
    return [_Scaler(post), functools.partial(_add, y=1.0, post=post),
            functools.partial(functools.partial(_add, post=post), y=2.0), _Scaler(post).shift,
            lambda x: post(x)]


def _names_seen(lib, np_, f, bad):
    """What a user sees of jit(f)'s name: its __name__, its printed jaxpr, and the errors
    naming it (bad: f returning no JAX value; a retrace under no_tracing)."""
    x, y = np_.ones(2), np_.ones(3)
    jaxpr = str(lib.make_jaxpr(lambda a: lib.jit(f)(a))(x))
    errors = [_outcome(lambda: lib.jit(bad)(x))]
    errors.append(_cache_miss(lib, lambda: lib.jit(f)(np_.ones(5))))
    with lib.no_tracing(True):
        errors.append(_error_text(lambda: lib.jit(f)(y)))
    return lib.jit(f).__name__, jaxpr, errors


def _cache_miss(lib, call):
    """The function line of jax_explain_cache_misses' report of call (both libraries log it
    under JAX's logger), ids aside."""
    import logging
    import re
    seen = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    logger = logging.getLogger("jax._src.interpreters.partial_eval")
    logger.addHandler(handler)
    try:
        with lib.explain_cache_misses(True):
            call()
    finally:
        logger.removeHandler(handler)
    return [re.sub(r"id=\d+", "id=", m.splitlines()[1]) for m in seen]


def _error_text(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e)


@pytest.mark.backends("numpy_ref")
def test_jit_of_callable_objects_named_as_jax():
    """JAX's names: an object's __name__, a partial's function's, else '<unnamed function>';
    errors name the function and where it is defined (a partial's), else '<unknown>'."""
    def bad(r):
        return r, object()

    def pairs():
        return zip(_callables(lambda r: r), _callables(bad))
    seen = [_names_seen(refjax, rnp, *mine) for mine in pairs()]
    assert seen == [_names_seen(jax, jnp, *real) for real in pairs()]
    assert "re-tracing function <unknown> for" in seen[0][2][2]
    assert seen[0][2][1] == ["  for <unknown>"] and seen[1][2][1][0].startswith("  for _add defined at")
    assert "function _add at " in seen[1][2][0] and "name=_add" in seen[2][1]
    assert refjax.jit(_Scaler(bad)).__name__ == "<unnamed function>"


@pytest.mark.backends("xla")
def test_lowered_module_named_as_jax():
    import re
    def names(lib, np_, f):
        text = lib.jit(f).lower(np_.ones(2)).as_text()
        return re.findall(r"module @(\S+)", text)
    for mine, real in zip(_callables(lambda r: r), _callables(lambda r: r)):
        assert names(refjax, rnp, mine) == names(jax, jnp, real)


# ---------------------------------------------------------------- lax.pvary

def test_pvary_kept_for_the_seeds_as_pcast_to_varying():
    """JAX 0.10 removed lax.pvary (AttributeError with its pointer to pcast); the seeds'
    shard_map notes use it, so refjax keeps it (README: seeds vs JAX), staged and computed as
    JAX's pcast(..., to='varying')."""
    with pytest.raises(AttributeError, match=r"jax.lax.pvary was deprecated in JAX v0.8.2 and "
                       r"removed in JAX v0.10.0; use `jax.lax.pcast\(..., to='varying'\)"):
        jax.lax.pvary  # noqa: B018

    def program(lib, np_, vary):
        mesh = lib.make_mesh((4,), ("i",), axis_types=(lib.sharding.AxisType.Auto,))
        f = lib.shard_map(lambda x, y: vary(lib, y) * x, mesh=mesh,
                          in_specs=(lib.P("i"), lib.P()), out_specs=lib.P("i"))
        args = np_.arange(8.0), np_.ones(2)
        return str(lib.make_jaxpr(f)(*args)), np.asarray(f(*args)).tolist()

    def pcast(lib, y):
        return lib.lax.pcast(y, "i", to="varying")
    theirs = program(jax, jnp, pcast)
    assert program(refjax, rnp, lambda lib, y: lib.lax.pvary(y, "i")) == theirs
    assert program(refjax, rnp, pcast) == theirs
