"""Small fidelity differences settled against real JAX: jit's argnums/argnames checked when jit
is called, a concrete reference's stored weak type after writes, how often eager control
flow's debug callbacks run, Array.traceback's frames."""

import contextlib
import functools
import io

import numpy as np
import pytest
from jax_recordings import on_jax

import refjax


def _outcome(call):
    """What a call gives: 'ok', or the class and message of what it raises."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the error class is what is compared
        return f"{type(e).__name__}: {e}"
    return "ok"


def _positional_only(x, y, /, z):
    return x


def _argnum_checks(jax_mod):
    """jit's argument specifications refused (or not) when jit is called, on functions with
    keyword-only, positional-only, *args and **kwargs parameters and on a builtin."""
    def f(x, y=1, *, z=2):
        return x

    def star(x, *args, **kwargs):
        return x

    cases = [(f, dict(static_argnums=5)), (f, dict(static_argnums=-3)),
             (f, dict(static_argnums=-2)), (f, dict(static_argnames="w")),
             (f, dict(static_argnames="z")), (f, dict(static_argnums=1, static_argnames="y")),
             (f, dict(donate_argnums=2)), (f, dict(donate_argnames=("x", "w"))),
             (f, dict(static_argnums=0, donate_argnums=0)),
             (f, dict(static_argnames="z", donate_argnames="z")),
             (f, dict(static_argnums=0, donate_argnums=(0,), donate_argnames="y")),
             (f, dict(static_argnums="a")), (f, dict(static_argnums=1.5)),
             (f, dict(static_argnames=1)), (f, dict(static_argnames=("x", 2))),
             (star, dict(static_argnums=7, static_argnames="anything")),
             (_positional_only, dict(static_argnames="y")),
             (_positional_only, dict(static_argnums=3)),
             (_positional_only, dict(donate_argnames="z")),
             (max, dict(static_argnums=9)), (max, dict(donate_argnames="x"))]
    return [_outcome(lambda: jax_mod.jit(fun, **kw)) for fun, kw in cases]


def test_jit_checks_argnums_and_argnames_when_called():
    """Out-of-range argnums, unknown or positional-only names and a static argument also
    donated are refused by jit() itself (not at the first call), with JAX's ValueError and
    message; non-integer argnums and non-string names with its TypeError."""
    ours = _argnum_checks(refjax)
    assert ours == on_jax(_argnum_checks)
    assert sum(o.startswith("ValueError") for o in ours) == 10  # the cases are not vacuous


def _negative_static(jax_mod):
    f = jax_mod.jit(lambda x, n: x * n, static_argnums=-1)
    return [float(f(np.float32(2.0), 3)), _outcome(lambda: f(np.float32(1.0), [1]))[:11]]


def test_valid_negative_static_argnum_still_works():
    """static_argnums=-1 names the last positional argument at each call (as JAX's): its
    value is static, an unhashable one refused."""
    assert _negative_static(refjax) == on_jax(_negative_static)


def _written_refs(jax_mod):
    """What a reference made from a weakly typed value prints after each kind of write: JAX
    prints the buffer its discharged write computed (a whole write: the value's weak type;
    adding: weak if both are; dynamic_update_slice: strong; an indexed scatter: kept), through
    jit, a cond (its first branch's types), loops (strong if the body makes it so, even with
    no iterations) and a traced reference argument; reading it keeps the reference's type."""
    jnp, lax = jax_mod.numpy, jax_mod.lax
    one, i32 = jnp.int32(1), np.int32(2)

    def scalar(write):
        r = jax_mod.new_ref(0)
        write(r)
        return repr(r)

    def vector(write):
        r = jax_mod.new_ref(lax.broadcast(1.0, (4,)))
        write(r)
        return repr(r)

    def setitem(idx, value):
        return lambda r: r.__setitem__(idx, value)

    writes = [setitem(Ellipsis, 5), lambda r: r.addupdate(1), lambda r: r.addupdate(one),
              lambda r: jax_mod.jit(lambda x: r.addupdate(x))(2),
              lambda r: jax_mod.jit(lambda x: r.addupdate(x))(i32),
              lambda r: jax_mod.jit(lambda: jax_mod.jit(lambda: r.addupdate(one))())(),
              lambda r: jax_mod.jit(lambda ref: ref.addupdate(one))(r),
              lambda r: lax.cond(True, lambda: None, lambda: r.addupdate(one)),
              lambda r: lax.cond(False, lambda: r.addupdate(one), lambda: None),
              lambda r: lax.scan(lambda c, x: (r.addupdate(x), None), None, jnp.arange(0)),
              lambda r: lax.fori_loop(0, 2, lambda i, c: r.addupdate(1), None),
              lambda r: lax.while_loop(lambda c: c < 0,
                                       lambda c: (r.addupdate(one), c)[1], 0)]
    vector_writes = [setitem(slice(1, 3), jnp.ones(2)), setitem(slice(None, None, 2), jnp.ones(2)),
                     lambda r: r.addupdate(jnp.ones(1), jnp.array([0])),
                     lambda r: r.addupdate(jnp.float32(1), jnp.array(0)),
                     setitem(slice(None), jnp.ones(4))]
    read = jax_mod.new_ref(0)
    read[...] = one
    int16 = jax_mod.new_ref(jnp.int16(0))
    return ([scalar(w) for w in writes] + [vector(w) for w in vector_writes]
            + [repr(read[...]), str(jax_mod.typeof(read)),
               _outcome(lambda: int16.addupdate(1))[:10]])


@pytest.mark.backends("numpy_ref", "xla")
def test_written_reference_prints_the_written_weak_type():
    """refjax prints each reference's buffer with the weak type JAX's has (a whole-value
    write, an addition, slices, scatters, jit, cond, loops), reads it with its own type, and
    refuses an addupdate of another dtype (a Python int into int16) as JAX, uncast."""
    ours = _written_refs(refjax)
    assert ours == on_jax(_written_refs)
    assert sum("weak_type=True" in s for s in ours) >= 5  # both weak types occur


def _callback_counts(jax_mod):
    """How often each debug callback runs when eager control flow runs twice on same-typed
    arguments: inspect_array_sharding's when the program is compiled (so not again when
    JAX's trace cache, keyed by the functions, gives the same program, and once for branches
    XLA merges), jax.debug.callback and jax.debug.print at every run; and how often the
    functions' trace-time Python runs."""
    jnp, lax = jax_mod.numpy, jax_mod.lax
    counts = {}

    def bump(name):
        counts[name] = counts.get(name, 0) + 1

    def inspect(s):
        bump("inspect")

    def body(x):
        jax_mod.debug.inspect_array_sharding(x, callback=inspect)
        jax_mod.debug.callback(lambda v: bump("callback"), x)
        jax_mod.debug.print("{}", x)
        return x + 1

    def other(x):
        jax_mod.debug.inspect_array_sharding(x, callback=inspect)
        return x + 1

    def traced(x):
        bump("traced")
        return x

    def below(c):
        return c < 3

    def step(c, _):
        return other(c), None

    runs = {"cond": lambda x: lax.cond(x > 0, body, lambda x: x, x),
            "cond_same": lambda x: lax.cond(x > 0, body, body, x),
            "switch_alike": lambda x: lax.switch(1, [body, other, body], x),
            "cond_traced": lambda x: lax.cond(x > 0, traced, traced, x),
            "while": lambda x: lax.while_loop(lambda c: c < 3, body, x),
            "while_same": lambda x: lax.while_loop(below, other, x),
            "scan": lambda x: lax.scan(lambda c, _: (body(c), None), x, None, length=2),
            "scan_same": lambda x: lax.scan(step, x, None, length=2),
            "jit_alike": jax_mod.jit(lambda x: lax.cond(x > 0, other, body, x))}
    out = {}
    for name, run in runs.items():
        counts.clear()
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            for v in (1.0, 2.0):
                run(jnp.float32(v))
            jax_mod.effects_barrier()
        out[name] = dict(counts, printed=printed.getvalue().count("\n"))
    return out


@pytest.mark.backends("numpy_ref", "xla")
def test_eager_control_flow_callback_counts():
    """Each callback runs as often as in JAX: eager cond, switch, while_loop and scan trace
    their functions once per function and types (the same program is reused, so its
    sharding inspections do not call back again), identical branches inspect once."""
    ours = _callback_counts(refjax)
    assert ours == on_jax(_callback_counts)
    assert ours["cond_same"]["inspect"] == 1 and ours["cond_traced"]["traced"] == 1


def test_native_and_python_tracebacks_agree(monkeypatch):
    """Array.traceback recorded by jaxlib's native recorder (installed with the xla backend)
    shows exactly what the Python walk shows for the same creation site: the same frames,
    lines and offsets from the array's maker outwards, the same text; the native one is
    resolved only when read."""
    from refjax.core import tracebacks
    refjax.get_backend("xla")  # installs the native recorder
    native, python = tracebacks.record, functools.partial(tracebacks.capture, 2)
    assert not isinstance(native, functools.partial)

    def make():
        return refjax.numpy.ones(2)

    made = []
    for record in (python, native):
        monkeypatch.setattr(tracebacks, "record", record)
        made.append(make())  # one call site: the same stack
    walked, recorded = (a.traceback for a in made)
    assert walked == recorded and str(walked) == str(recorded)
    assert type(made[1]._traceback) is not tracebacks.Traceback
    names = [f.function_name for f in recorded.frames]
    assert names.index("test_native_and_python_tracebacks_agree.<locals>.make") \
        == names.index("test_native_and_python_tracebacks_agree") - 1


def _jacobian_rebuilds(jax_mod):
    """The first leaf types a pytree class's constructor receives under jacfwd and jacrev
    (JAX's input checks rebuild the argument with None leaves; grad's do not), and what a
    class converting its leaf with jnp.asarray raises there (JAX's custom-pytrees page)."""
    made = []

    class Recording:
        def __init__(self, a):
            made.append(type(a).__name__ if a is None else "value")
            self.a = a

    class Converting:
        def __init__(self, a):
            self.a = jax_mod.numpy.asarray(a)

    for cls in (Recording, Converting):
        jax_mod.tree_util.register_pytree_node(cls, lambda t: ((t.a,), None),
                                               lambda _, leaves, cls=cls: cls(*leaves))
    x = jax_mod.numpy.arange(3.0)
    firsts = []
    for transform in (jax_mod.grad, jax_mod.jacfwd, jax_mod.jacrev):
        made.clear()
        transform(lambda t: t.a.sum())(Recording(x))
        firsts.append(made[1])
    return firsts, _outcome(lambda: jax_mod.jacobian(lambda t: t)(Converting(x)))[:10]


def test_jacobian_rebuilds_arguments_with_none_leaves():
    """jacfwd and jacrev call the argument's unflatten with None leaves before differentiating
    (a constructor refusing None raises ValueError there, as JAX's), grad does not."""
    ours = _jacobian_rebuilds(refjax)
    assert ours == on_jax(_jacobian_rebuilds)
    assert ours == (["value", "NoneType", "NoneType"], "ValueError")


def test_eager_cond_traces_again_on_another_backend():
    """The trace cache of eager control flow is per backend: a branch capturing an Array it
    made while traced runs on each backend with that backend's Array (the numpy_ref trace's
    constant would be refused on xla)."""
    def branch(x):
        return x + refjax.device_put(np.arange(3.0, dtype=np.float32))

    for name in ("numpy_ref", "xla", "numpy_ref"):
        with refjax.backend(name):
            y = refjax.lax.cond(True, branch, branch, refjax.numpy.ones(3))
            assert y.tolist() == [1.0, 2.0, 3.0] and y._backend.name == name


def _dtypes_in_and_out_of_x64(jax_mod):
    def f(x):
        return jax_mod.numpy.arange(3)

    kinds = [str(jax_mod.lax.cond(True, f, f, np.float32(1)).dtype)]
    with jax_mod.enable_x64(True):
        kinds.append(str(jax_mod.lax.cond(True, f, f, np.float32(1)).dtype))
    return kinds


def test_eager_cond_traces_again_under_a_scoped_option():
    """A trace made without jax_enable_x64 is not reused inside `enable_x64` (its integers
    are 64-bit there, as JAX's)."""
    assert _dtypes_in_and_out_of_x64(refjax) == on_jax(_dtypes_in_and_out_of_x64) \
        == ["int32", "int64"]
