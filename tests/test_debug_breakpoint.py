"""jax.debug.breakpoint: the cli debugger's sessions (commands fed through a patched sys.stdin)
print exactly what real JAX's print on the same programs (same source lines, so file names and
line numbers agree without normalizing), eagerly and at run time under jit, vmap and grad, on
both backends; and where JAX is poor, refjax does better."""
import contextlib
import io
from unittest import mock

import jax as real_jax
import numpy as np
import pytest

import refjax
from refjax.api import debugger

pytestmark = [
    pytest.mark.backends(),  # the comparison loops over both backends itself
    # JAX's warning on flattening the generators among pytest's frames' locals (whole stacks)
    pytest.mark.filterwarnings("ignore:Python iterable type"),
]

foo = "a global: the debugger does not see globals, as in JAX"


def _session(jx, program, commands, *args):
    """(what the debugger prints, program's result) for `program(*args)` with `commands` as
    sys.stdin. Both modules' sessions run from this line, so their outer frames agree."""
    out = io.StringIO()
    with mock.patch("sys.stdin", io.StringIO("".join(c + "\n" for c in commands))), \
            contextlib.redirect_stdout(out):
        result = program(*args)
        jx.effects_barrier()
    return out.getvalue(), result


def _programs(jx):
    """name -> (program, commands, args), written once against a jax-like module."""
    jnp = jx.numpy

    def f(x):
        y = jnp.sin(x)
        jx.debug.breakpoint(num_frames=2)
        return y

    def g(x):
        return jnp.exp(f(x) * 2)

    def inner(x):
        y = x * 3.0
        jx.debug.breakpoint(num_frames=2)
        return y

    def outer(x):
        w = x + 100.0
        return jx.jit(inner)(x) + w

    def twice(x):
        y = x + 1.0
        jx.debug.breakpoint(num_frames=1, ordered=True)
        z = y * 2.0
        jx.debug.breakpoint(num_frames=1, ordered=True)
        return z

    def statics(x):
        weird = {(lambda a: a): 2.0, (lambda a: a * 2): 3}
        nested = {"w": weird, "n": 1, "s": "text", "arr": x}
        jx.debug.breakpoint(num_frames=1, backend="no such debugger")
        del nested  # read in the session only
        return x

    def tokened(x):
        return jx.debug.breakpoint(token={"a": x, "b": [x * 2]}, num_frames=1)

    def own_streams(x, stdin, stdout):
        jx.debug.breakpoint(stdin=stdin, stdout=stdout, num_frames=1)
        return stdout

    def step(c, x):
        c = c + x
        jx.debug.breakpoint(num_frames=1)
        return c, x

    # the example of JAX's docs/debugging/print_breakpoint.md: a breakpoint in a cond branch
    def breakpoint_if_nonfinite(x):
        is_finite = jnp.isfinite(x).all()

        def true_fn(x):
            pass

        def false_fn(x):
            jx.debug.breakpoint()
        jx.lax.cond(is_finite, true_fn, false_fn, x)

    @jx.jit
    def divide(x, y):
        z = x / y
        breakpoint_if_nonfinite(z)
        return z

    generated = {"jx": jx}  # a function Python has no source for
    exec(compile("def nosrc(x):\n    jx.debug.breakpoint(num_frames=2)\n    return x\n",
                 "<generated>", "exec"), generated)

    jf = jx.jit(f)
    f32 = np.float32
    commands = ["p x", "p x, y", "x * 2", "pp {'y': [y] * 2, 'x': x}", "", "c"]
    return {
        "eager": (f, commands, f32(2.0)),
        "eager_python_scalar": (f, ["p x", "p y", "c"], 2.0),
        "jit_runs_each_call": (lambda x: (jf(x), jf(x + 1)), commands * 2, f32(0.5)),
        "vmap_per_element": (jx.vmap(f), ["p x", "c", "p x", "p y", "c"], np.arange(2, dtype=f32)),
        # the outer frame's locals are vmap's tracers, the inner one's jit's: both per element
        "vmap_of_jit": (jx.vmap(outer), ["p x, y", "u", "p x, w", "c"] * 2,
                        np.arange(2, dtype=f32)),
        "jit_vmap_ordered": (jx.jit(jx.vmap(twice)), ["p y", "c"] * 2 + ["p z", "c"] * 2,
                             np.arange(2, dtype=f32)),
        "jit_scan_each_step": (jx.jit(lambda xs: jx.lax.scan(step, 0.0, xs)), ["p c, x", "c"] * 2,
                               np.arange(2, dtype=f32)),
        # entered only when the branch runs: for 2 / 0, not for 2 / 1
        "doc_cond_nonfinite": (lambda x: (divide(x, 1.0), divide(x, 0.0)),
                               ["p x", "u", "p is_finite", "u", "p x, y, z", "c"], f32(2.0)),
        "pmap_per_device": (jx.pmap(f), ["p x", "c"] * 2, np.arange(2, dtype=f32)),
        "no_source": (generated["nosrc"], ["l", "w", "u", "d", "p x", "c"], f32(1.0)),
        "grad": (jx.grad(f), ["p x", "p y", "c"], f32(2.0)),
        "jit_grad_frames": (jx.jit(jx.grad(g)), ["l", "u", "p x", "u", "d", "d", "w", "bt", "c"],
                            f32(2.0)),
        "help": (f, ["help", "help p", "help quit", "help where", "help ll", "c"], f32(1.0)),
        "errors": (f, ["ll", "p 1 / 0", "p (", "p foo", "nope.x", "c"], f32(1.0)),
        "statics": (statics, ["p weird", "p nested", "pp sorted(nested)", "c"],
                    f32(3.0)),
        "token": (jx.jit(tokened), ["p x", "c"], f32(3.0)),
        "own_streams": (lambda x: own_streams(x, io.StringIO("p x\nc\n"), io.StringIO())
                        .getvalue(), [], f32(4.0)),
    }


# the programs staged by jit, whose callbacks the xla backend runs inside compiled programs
_STAGED = ("jit_runs_each_call", "jit_grad_frames", "jit_vmap_ordered", "jit_scan_each_step",
           "doc_cond_nonfinite", "token")


def _sessions(name, printed):
    """The printed text; for pmap, whose devices enter in no fixed order in JAX, the multiset
    of its sessions."""
    return sorted(printed.split("Entering jdb:")) if name.startswith("pmap") else printed


def _check(jx_result, ref_result):
    wants, gots = real_jax.tree.leaves(jx_result), refjax.tree.leaves(ref_result)
    assert len(gots) == len(wants)
    for want, got in zip(wants, gots):
        if isinstance(want, str):
            assert got == want
        else:
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_sessions_print_what_jax_prints():
    expected = {name: _session(real_jax, *case) for name, case in _programs(real_jax).items()}
    for backend, names in (("numpy_ref", expected), ("xla", _STAGED)):
        with _backend(backend):
            programs = _programs(refjax)  # one set, as JAX's (jit caches traces per function)
            for name in names:
                case = programs[name]
                printed, result = _session(refjax, *case)
                want = _sessions(name, expected[name][0])
                assert _sessions(name, printed) == want, (backend, name)
                _check(expected[name][1], result)


@contextlib.contextmanager
def _backend(name):
    previous = refjax.current_backend_name()
    refjax.set_backend(name)
    try:
        yield
    finally:
        refjax.set_backend(previous)


class _Interrupting(io.StringIO):
    """A stdin whose first read is interrupted (Ctrl-C at the prompt)."""
    interrupted = False

    def readline(self, *args):
        if not self.interrupted:
            self.interrupted = True
            raise KeyboardInterrupt
        return super().readline(*args)


def _both(run):
    """run(jx) for real JAX, then for refjax, from one line (so their outer frames agree)."""
    return [run(jx) for jx in (real_jax, refjax)]


def test_whole_stack_interrupts_and_eof_as_jax():
    def whole_stack(jx):
        f = jx.jit(lambda x: (jx.debug.breakpoint(), x)[1])
        return _session(jx, f, ["w", "u", "p len(locals()) > 0", "c"], np.float32(1.0))[0]

    def interrupted(jx):
        out = io.StringIO()
        with mock.patch("sys.stdin", _Interrupting("p 1\nc\n")), contextlib.redirect_stdout(out):
            jx.debug.breakpoint(num_frames=1)
        return out.getvalue()

    def eof(jx):  # end of input quits: SystemExit, eagerly in both
        with pytest.raises(SystemExit) as exit_:
            _session(jx, lambda: jx.debug.breakpoint(num_frames=1), [])
        return exit_.value.code

    for run in (whole_stack, interrupted, eof):
        expected, actual = _both(run)
        assert actual == expected, run.__name__
    assert "--KeyboardInterrupt--\nEntering jdb:" in interrupted(refjax)
    assert "test_whole_stack_interrupts_and_eof_as_jax" in whole_stack(refjax)


def test_hides_refjax_frames_unless_asked():
    def frames(filter_frames):
        f = refjax.jit(lambda x: (refjax.debug.breakpoint(filter_frames=filter_frames), x)[1])
        return _session(refjax, f, ["w", "c"], 1.0)[0]

    refjax_src = "/".join(refjax.__file__.split("/")[:-1]) + "/core/"
    assert refjax_src not in frames(True) and refjax_src in frames(False)


def test_ordered_and_token_exclusive_as_jax():
    messages = []
    for jx in (real_jax, refjax):
        with pytest.raises(ValueError) as error:
            jx.debug.breakpoint(token=1.0, ordered=True)
        messages.append(str(error.value))
    assert messages[0] == messages[1] == "`ordered` and `token` are mutually exclusive arguments."


def test_better_than_jax():
    """Where JAX fails, refjax enters the debugger: quitting under jit raises SystemExit (JAX:
    a JaxRuntimeError 'CpuCallback error'), a token under vmap enters once per element as
    without one (JAX: NotImplementedError about pure_callback's vmap_method, which the user
    never chose), a Python scalar token works (JAX: AttributeError, no .shape)."""
    quit_ = lambda jx: _session(jx, jx.jit(lambda x: jx.debug.breakpoint(num_frames=1)), ["q"],
                                np.float32(1.0))
    with pytest.raises(real_jax.errors.JaxRuntimeError, match="CpuCallback error"):
        quit_(real_jax)
    with pytest.raises(SystemExit):
        quit_(refjax)

    vmapped = lambda jx: jx.vmap(lambda x: jx.debug.breakpoint(token=x * 2, num_frames=1))
    with pytest.raises(NotImplementedError, match="vmap_method"):
        vmapped(real_jax)(np.arange(2.0))
    printed, result = _session(refjax, vmapped(refjax), ["p x", "c"] * 2, np.arange(2.0))
    assert printed == ("Entering jdb:\n(jdb) Array(0., dtype=float32)\n(jdb) "
                       "Entering jdb:\n(jdb) Array(1., dtype=float32)\n(jdb) ")
    np.testing.assert_array_equal(result, [0.0, 2.0])

    scalar = lambda jx: jx.grad(lambda x: jx.debug.breakpoint(token=x, num_frames=1) * x)
    with pytest.raises(AttributeError, match="shape"):
        scalar(real_jax)(3.0)
    printed, result = _session(refjax, scalar(refjax), ["c"], 3.0)
    assert printed == "Entering jdb:\n(jdb) "
    assert result == 3.0  # the token is returned under stop_gradient, as JAX's design has it


def test_frames_flatten_what_they_can():
    """A local whose flattening fails shows as <cant_flatten>; traced leaves of the others are
    replaced by their runtime values, the rest kept as they were."""
    stack = [debugger.DebuggerFrame("f.py", {"a": {lambda: 1: 2, lambda: 2: 3}, "b": ("s", 1)},
                                    {}, None, [], 1, None)]
    traced, rebuild = debugger._split(stack)
    assert traced == []
    frame, = rebuild([])
    assert repr(frame.locals["a"]) == "<cant_flatten>" and frame.locals["b"] == ("s", 1)
