"""Dead-code elimination (core/transforms/dce.py) as JAX's pe.dce_jaxpr: unused outputs,
carries, operands and equations dropped, effects (io_callback, debug.print, reference writes)
kept; and where partial evaluation applies it (scan and cond bodies under grad, linearize's
tangent jaxpr, checkpoint's known side), compared with real JAX's printed jaxprs (recorded)."""
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax
from refjax.core.transforms.dce import dce_jaxpr

pytestmark = pytest.mark.backends("numpy_ref")  # printing: one backend

# which of the program's 17 outputs are used, per case
USED = [(0,), (3, 10, 11, 13, 16), (1, 6, 9, 14, 15), ()]


def _program(lib):
    """scan (carries needed by other carries, ys), while, io_callback, pure_callback, a
    reference written and read, checkpoint, shard_map and custom_jvp, each with results
    that may go unused."""
    jnp, lax = lib.numpy, lib.lax
    mesh = lib.make_mesh((2,), ("i",), axis_types=(lib.sharding.AxisType.Auto,))
    f32 = lib.ShapeDtypeStruct((), np.float32)

    def f(x, y):
        def body(c, x):
            c1, c2, c3 = c
            return (c1 * c2, c2 + x, c3 - 1.0), (c1 + 1.0, jnp.exp(x))
        (c1, c2, c3), ys = lax.scan(body, (x, y, x), jnp.stack([y, y]))
        w = lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, x)
        io = lib.experimental.io_callback(lambda v: np.float32(v), f32, x)
        pc = lib.pure_callback(lambda v: np.float32(v), f32, y)
        r = lib.new_ref(y)
        r[...] = jnp.sin(x)
        ck = lib.checkpoint(lambda a, b: (jnp.sin(a), jnp.cos(b)))(x, y)
        sm = lib.shard_map(lambda v: (v * 2.0, jnp.sin(v)), mesh=mesh, in_specs=lib.P("i"),
                           out_specs=(lib.P("i"), lib.P("i")))(jnp.stack([x, y]))
        cj = lib.custom_jvp(lambda a, b: (jnp.sin(a), jnp.cos(b)))
        cj.defjvp(lambda p, t: (cj(*p), (jnp.cos(p[0]) * t[0], -jnp.sin(p[1]) * t[1])))
        cv = lib.custom_vjp(lambda a, b: (jnp.sin(a), jnp.cos(b)))
        cv.defvjp(lambda a, b: (cv(a, b), (a, b)), lambda r, g: (g[0] * 2.0, g[1] * 3.0))
        return c1, c2, c3, ys, w, io, pc, r[...], ck, sm, cj(x, y), cv(x, y)
    return lib.make_jaxpr(f)(1.0, 2.0).jaxpr


def _dce_texts(lib, used):
    if lib.__name__ == "jax":
        from jax.interpreters.partial_eval import dce_jaxpr as dce
    else:
        dce = dce_jaxpr
    jaxpr = _program(lib)
    out = []
    for case in used:
        new, used_inputs = dce(jaxpr, [i in case for i in range(len(jaxpr.outvars))])
        out.append(f"{new}\n{used_inputs}")
    return out


def test_dce_jaxpr_prunes_as_jax():
    """The pass on a program of every rule's primitive, with four sets of used outputs, is
    JAX's, printed: scan keeps the carries a kept output needs (a fixpoint) and drops unused
    ys, cond and jit prune their bodies, pure_callback and a reference read go when unused,
    io_callback and the reference write stay even with nothing used, custom_jvp and
    custom_vjp compute only their used outputs but keep every operand (their rules may read
    them)."""
    ours = _dce_texts(refjax, USED)
    assert "io_callback" in ours[-1] and "<-" in ours[-1] and "pure_callback" not in ours[-1]
    assert ours == on_jax(_dce_texts, USED)


def _autodiff_programs(lib):
    """Printed jaxprs of programs whose partial evaluation leaves dead code to drop."""
    jnp, lax = lib.numpy, lib.lax
    xs = np.arange(6, dtype=np.float32).reshape(3, 2) / 5
    w = np.full(2, 0.5, np.float32)
    v = np.arange(4, dtype=np.float32) / 3

    def dead_tangent(x):
        y = jnp.sin(x) * 3.0
        jnp.cos(y) * x  # noqa: B018 - unused: its tangent is dead code of the linear jaxpr
        return y.sum()

    def split_twice(x):  # a multi-output equation recomputed by checkpoint
        a, b = lax.split(jnp.sin(x), (2, 2))
        return (jnp.cos(a) * jnp.cos(b)).sum()

    def scan_printing(c):
        def body(c, x):
            lib.debug.print("c {}", c)
            return jnp.sin(c) * x, jnp.cos(c)
        return lax.scan(body, c, w)[0]

    programs = {
        "linearize dead tangent": lambda x: lib.linearize(dead_tangent, x)[1](x),
        "vjp dead tangent": lambda x: lib.vjp(dead_tangent, x)[1](1.0),
        "scan unused ys": lib.grad(lambda c: lax.scan(
            lambda c, x: (jnp.sin(c) * x, jnp.cos(c)), c, w)[0]),
        "scan debug print": lib.grad(scan_printing),
        "remat split grad": lib.grad(lib.checkpoint(split_twice)),
        "remat split linearize": lambda x: lib.linearize(lib.checkpoint(split_twice), x)[1](x),
        "remat in scan": lib.grad(lambda c, xs: lax.scan(lib.checkpoint(
            lambda c, x: (jnp.sin(c) * x, None)), c, xs)[0].sum()),
        "vjp numpy xs": lambda c: lib.vjp(lambda c: lax.scan(
            lambda c, x: (jnp.sin(c) * x, c), c, xs)[0].sum(), c)[1](1.0),
    }
    args = {"scan unused ys": (1.0,), "scan debug print": (1.0,), "remat in scan": (w, xs)}
    return {name: str(lib.make_jaxpr(f)(*args.get(name, (v if "remat" in name else w,))))
            for name, f in programs.items()}


def test_partial_evaluation_drops_dead_code_as_jax():
    """linearize's and vjp's tangent jaxpr hold only what the output tangents need (a dead
    value's tangent and the residuals it read are gone, as JAX's auto_dce'd tangent trace),
    a scan's unused ys under grad take no residual, a debug.print in a scan body stays in the
    known loop, checkpoint recomputes a multi-output equation once (refjax listed it once per
    output) and its known side computes nothing the recomputation does again, remat in a scan
    body passes its inputs on as residuals without copies, and xs given as a NumPy array are
    stacked as residuals rather than forwarded (JAX's scan linearization forwards no NumPy
    array)."""
    ours = _autodiff_programs(refjax)
    recompute = ours["remat split grad"].split("in {")[0]
    assert recompute.count("= split[") == 2  # the primal's and the cotangent's: once each
    assert "debug_print" in ours["scan debug print"]
    assert ours == on_jax(_autodiff_programs)


def test_values_and_effects_are_kept(capsys):
    """A scan body under grad whose custom_vjp function has an unused output (pruned in the
    known loop) computes JAX's gradient, and its debug.print prints once per iteration, as
    JAX's."""
    def run(lib):
        jnp, lax = lib.numpy, lib.lax
        w = np.full(2, 0.5, np.float32)
        cv = lib.custom_vjp(lambda a, b: (jnp.sin(a), jnp.cos(b)))
        cv.defvjp(lambda a, b: (cv(a, b), (a, b)),
                  lambda r, g: (jnp.cos(r[0]) * g[0], -jnp.sin(r[1]) * g[1]))

        def body(c, x):
            lib.debug.print("c={c}", c=c)
            return cv(c, x)[0] * x, jnp.cos(c)
        g = lib.grad(lambda c: lax.scan(body, c, w)[0] + lax.scan(body, c, w)[1].sum())(0.3)
        return float(g)
    ours = run(refjax)
    printed = capsys.readouterr().out
    theirs = on_jax(run)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert printed.count("c=") == 4  # two scans of two iterations, in the forward pass
