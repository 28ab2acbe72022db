"""jax.debug.print and jax.debug.callback run with runtime values wherever they are staged
(eagerly, under jit, vmap, grad/jvp, scan/while/cond bodies, shard_map), and print exactly
what JAX prints (compared with real JAX's output through capsys), on both backends."""
import jax as real_jax
import numpy as np
import pytest

import refjax
import refjax.numpy as jnp

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _programs(jax, np_):
    """Programs written once against a jax-like module (refjax or real JAX)."""
    def scan_body(c, x):
        jax.debug.print("s {} {}", c, x)
        return c + x, x

    def while_body(c):
        jax.debug.print("w {}", c)
        return c + 1

    return {
        "jit": lambda: jax.jit(lambda x: (jax.debug.print("x={x} y={}", x * 2, x=x), x + 1)[1])(
            np_.arange(3.0)),
        "eager": lambda: jax.debug.print("{} and {b}", np_.float32(1.5), b=np_.arange(2)),
        "format_spec": lambda: jax.debug.print("{x:.3f}|{y:>6}", x=np_.float32(1.5), y=np_.int32(7)),
        "no_placeholders": lambda: jax.debug.print("just text"),
        "vmap": lambda: jax.vmap(lambda x: jax.debug.print("v {}", x))(np_.arange(3.0)),
        "jit_vmap": lambda: jax.jit(jax.vmap(lambda x: jax.debug.print("jv {}", x)))(
            np_.arange(2.0)),
        "vmap_unbatched_args": lambda: jax.vmap(lambda x, y: jax.debug.print("{} {}", x, y),
                                                in_axes=(0, None))(np_.arange(2.0), 5.0),
        "grad": lambda: jax.grad(lambda x: (jax.debug.print("g {}", x), x ** 2)[1])(3.0),
        "jvp": lambda: jax.jvp(lambda x: (jax.debug.print("j {x}", x=x), x ** 2)[1], (3.0,), (1.0,)),
        "jit_grad": lambda: jax.jit(jax.grad(lambda x: (jax.debug.print("jg {}", x),
                                                        jax.numpy.sin(x))[1]))(0.5),
        "scan": lambda: jax.lax.scan(scan_body, 0.0, np_.arange(3.0)),
        "jit_scan": lambda: jax.jit(lambda c: jax.lax.scan(scan_body, c, np_.arange(3.0)))(1.0),
        "cond": lambda: jax.lax.cond(True, lambda x: jax.debug.print("c {}", x),
                                     lambda x: None, 2.0),
        "while": lambda: jax.jit(lambda x: jax.lax.while_loop(lambda c: c < 3, while_body, x))(0),
        "printoptions": lambda: _with_printoptions(jax, np_),
        "callback": lambda: jax.jit(lambda x: jax.debug.callback(
            lambda a, k: print("cb", np.asarray(a).tolist(), np.asarray(k["y"]).tolist()),
            x, {"y": x + 1}))(np_.arange(2.0)),
        "ordered": lambda: jax.jit(lambda x: [jax.debug.print("o{} {}", i, x * i, ordered=True)
                                              for i in range(3)])(2.0),
        "two_call_form": lambda: jax.debug.print(ordered=True)("two {x}", x=np_.arange(2)),
    }


def _with_printoptions(jax, np_):
    with np.printoptions(precision=2):
        jax.jit(lambda x: jax.debug.print("p {}", x))(np_.float32(1.0) / 3)


def _captured(capsys, fn, flush=lambda: None):
    capsys.readouterr()
    fn()
    flush()
    return capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(_programs(real_jax, real_jax.numpy)))
def test_prints_what_jax_prints(name, capsys):
    expected = _captured(capsys, _programs(real_jax, real_jax.numpy)[name],
                         real_jax.effects_barrier)
    actual = _captured(capsys, _programs(refjax, jnp)[name], refjax.effects_barrier)
    assert actual == expected
    assert actual  # every program prints something


def test_shard_map_prints_each_devices_block(capsys):
    """One line per device with its block (unordered in JAX, so compared as a multiset)."""
    def run(jax, np_):
        mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
        body = lambda b: (jax.debug.print("blk {}", b), b * 2)[1]  # noqa: E731
        P = jax.sharding.PartitionSpec
        return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(
            np_.arange(8.0))

    expected = _captured(capsys, lambda: run(real_jax, real_jax.numpy), real_jax.effects_barrier)
    actual = _captured(capsys, lambda: run(refjax, jnp), refjax.effects_barrier)
    assert sorted(actual.splitlines()) == sorted(expected.splitlines())
    assert len(actual.splitlines()) == 4


def test_values_are_runtime_values_not_tracers(capsys):
    f = refjax.jit(lambda x: (refjax.debug.print("{}", x), x)[1])
    out = _captured(capsys, lambda: f(jnp.float32(2.5)))
    assert out == "2.5\n" and "Traced" not in out
    out = _captured(capsys, lambda: f(jnp.float32(-1.0)))  # a cached trace prints again
    assert out == "-1.0\n"


def test_callback_receives_arrays(capsys):
    seen = []
    refjax.jit(lambda x: refjax.debug.callback(lambda a: seen.append(a), x))(jnp.arange(3))
    assert isinstance(seen[0], refjax.Array) and seen[0].dtype == np.int32
    np.testing.assert_array_equal(np.asarray(seen[0]), [0, 1, 2])


def test_staged_as_jax_stages_it():
    text = str(refjax.make_jaxpr(lambda x: refjax.debug.print("hi {}", x))(1.0))
    expected = str(real_jax.make_jaxpr(lambda x: real_jax.debug.print("hi {}", x))(1.0))
    assert text == expected


@pytest.mark.parametrize("call", [
    lambda jax: jax.debug.print("{} {}", 1.0),
    lambda jax: jax.debug.print("{}", 1.0, 2.0),
    lambda jax: jax.debug.print("{x}", y=1.0),
    lambda jax: jax.debug.callback(3, 1.0),
    lambda jax: jax.debug.print(ordered=True)("{}", 1.0, ordered=False),
])
def test_errors_as_jax(call):
    with pytest.raises(Exception) as expected:
        call(real_jax)
    with pytest.raises(type(expected.value)) as actual:
        call(refjax)
    assert str(actual.value) == str(expected.value)
