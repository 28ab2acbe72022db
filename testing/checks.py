"""The generic conformance checks of one primitive on one backend (or on real JAX) against the oracle.

Each check is `check(spec, data, target)`: `spec` a PrimitiveSpec, `data` hypothesis' `st.data()`
object (draws are labelled, so a failure's shrunk example names them), `target` the backend under
test (a registered backend name) or `JAX` (real `jax.lax`). A check raises ConformanceError (an
AssertionError) on a failure, NotApplicable when it does not apply to the primitive or target, and
lets NotImplementedError through when the backend lacks a rule. refjax's own test suite and the
conformance CLI run these same functions."""
import contextlib
import re

import numpy as np
from hypothesis import note, strategies as st

from ..backends.base import backend as on_backend
from ..spec.base import UNCHECKED, jax_array, refjax_array
from ..spec.checks import as_list, dtype_name, float0_zeros, is_inexact, tangents_like
from .assertions import ConformanceError, assert_conforms
from .oracle import ORACLE, enable_x64

JAX = "jax"


class NotApplicable(Exception):
    """The check does not apply (no rejected dtypes, a single device for layouts, ...)."""


def applicable(check, spec, data, target):
    """Run `check`; one that does not apply to the primitive (its spec says so) passes."""
    try:
        check(spec, data, target)
    except NotApplicable:
        pass


@contextlib.contextmanager
def raises(error, match=None, what="the call"):
    """Like pytest.raises without pytest: the block must raise `error` (matching `match`)."""
    try:
        yield
    except error as e:
        if match is not None and not re.search(match, str(e)):
            raise ConformanceError(f"{what} raised {type(e).__name__} without {match!r}: {e}")
        return
    raise ConformanceError(f"{what} did not raise {error.__name__}")


def _bound(spec, params):
    return lambda *args: spec.bind(*args, **params)


def _with(args, idx, values):
    full = list(args)
    for i, v in zip(idx, values):
        full[i] = v
    return full


def _partial(spec, args, idx, params):
    """The primitive as a function of the arguments at idx (list out), the others fixed."""
    return lambda *vals: as_list(spec.bind(*_with(args, idx, vals), **params))


def _draw_like(data, values, label):
    return [data.draw(tangents_like(dtype_name(v), tuple(v.shape)), label=label) for v in values]


def _cotangents(data, outs):
    """Random cotangents for inexact outputs, float0 zeros for the others."""
    return [refjax_array(data.draw(tangents_like(dtype_name(o), tuple(o.shape)), label="ct"))
            if is_inexact(o) else float0_zeros(o.shape) for o in outs]


def on_oracle(spec, sample, jit=False):
    """The primitive on the sample, evaluated by the oracle (refjax Arrays)."""
    return run_on(ORACLE, spec, sample, jit)


def run_on(backend, spec, sample, jit=False):
    """The primitive on the sample, on `backend` (values created there), optionally jitted."""
    from refjax import jit as jit_fn
    with on_backend(backend):
        f = _bound(spec, sample.params)
        return as_list((jit_fn(f) if jit else f)(*sample.to_refjax()))


# ---------------------------------------------------------------- eager vs the oracle

def check_eager(spec, data, target, max_ulps=None, x64=None):
    """The primitive's results (eager, and under jit on a backend) equal the oracle's: values
    within the spec's tolerance (or `max_ulps`), dtypes, weak types, layouts shard by shard;
    x64 on or off as given (None: drawn)."""
    x64 = data.draw(st.booleans(), label="x64") if x64 is None else x64
    with enable_x64(x64):
        sample = data.draw(spec.samples(x64), label="sample")
        expected = on_oracle(spec, sample)
        if target == JAX:
            import jax
            actual = as_list(spec.reference(jax, *sample.to_jax(), **sample.params))
            return assert_conforms(actual, expected, spec=spec, max_ulps=max_ulps,
                                   what=f"jax.lax {spec.name}")
        for jit in (False, True):
            what = f"{spec.name} on {target}{' under jit' if jit else ''}"
            assert_conforms(run_on(target, spec, sample, jit), expected, spec=spec,
                            max_ulps=max_ulps, layouts=True, what=what)


def check_rejected_dtypes(spec, data, target):
    """Dtypes the primitive does not accept raise a TypeError naming it (as JAX's do)."""
    rejected = spec.rejected_dtypes()
    if not rejected:
        raise NotApplicable(f"{spec.name} accepts every dtype")
    sample = data.draw(spec.samples(dtypes=rejected), label="sample")
    if target == JAX:
        return _jax_rejects(spec, sample)
    with on_backend(target), raises(TypeError, re.escape(spec.name),
                                    f"{spec.name} on {_main_dtype(sample)}"):
        spec.bind(*sample.to_refjax(), **sample.params)


def _main_dtype(sample):
    """The dtype a sample was drawn for: its first argument's (or its `dtype` param)."""
    return sample.sig.args[0].dtype if sample.sig.args else sample.params.get("dtype")


def _jax_rejects(spec, sample):
    import jax
    error = spec.jax_dtype_error(sample.sig.args[0].dtype) if sample.sig.args else TypeError
    if error is UNCHECKED:
        raise NotApplicable(f"JAX accepts {sample.sig.args[0].dtype} (refjax rejects it)")
    with raises(error, what=f"jax.lax {spec.name} on {_main_dtype(sample)}"):
        spec.reference(jax, *sample.to_jax(), **sample.params)


def check_invalid(spec, data, target):
    """Each declared invalid input raises its error class naming the primitive, eagerly and
    when traced (on a backend), or the error JAX is declared to raise (real JAX)."""
    cases = spec.invalid_cases()
    if not cases:
        raise NotApplicable(f"{spec.name} declares no invalid inputs")
    for case in cases:
        if target == JAX:
            _jax_invalid(spec, case)
            continue
        with on_backend(target):
            _refjax_invalid(spec, case)


def _refjax_invalid(spec, case):
    import refjax
    args = lambda: [refjax_array(a) for a in case.args]  # noqa: E731
    with raises(case.error, re.escape(spec.name), f"{spec.name} with {case.what}"):
        spec.bind(*args(), **case.params)
    with raises(case.error, what=f"make_jaxpr({spec.name}) with {case.what}"):
        refjax.make_jaxpr(_bound(spec, case.params))(*args())


def _jax_invalid(spec, case):
    import jax
    if not case.jax_raises():
        return
    with raises(Exception, what=f"jax.lax {spec.name} with {case.what}"):
        try:
            spec.reference(jax, *map(jax_array, case.args), **case.params)
        except Exception as e:
            if not isinstance(e, case.jax_error or case.error):
                raise ConformanceError(f"{case.what}: JAX raises {type(e).__name__}: {e}, "
                                       f"declared {(case.jax_error or case.error).__name__}")
            raise


# ---------------------------------------------------------------- jit

def check_jit(spec, data, target):
    """jit of the primitive equals eager bit for bit, with the same layouts; its jaxpr
    typechecks."""
    import refjax
    from refjax.core.jaxpr import typecheck_jaxpr
    with on_backend(target):
        sample = data.draw(spec.samples(), label="sample")
        args, f = sample.to_refjax(), _bound(spec, sample.params)
        closed = refjax.make_jaxpr(f)(*args)
        note(f"jaxpr:\n{closed}")
        typecheck_jaxpr(closed.jaxpr)
        assert_conforms(refjax.jit(f)(*args), f(*args), spec=spec, exact=True, layouts=True,
                        what=f"jit({spec.name})")


# ---------------------------------------------------------------- layouts over a mesh

def check_layouts(spec, data, target):
    """With one argument split along an even dimension over a 2-device mesh, the primitive's
    results (eager and jitted) equal the oracle's, layouts shard by shard."""
    if target == JAX:
        raise NotApplicable("layouts are compared on refjax backends")
    sample = data.draw(spec.samples(), label="sample")
    splits = [(i, d) for i, a in enumerate(sample.sig.args) for d, n in enumerate(a.shape)
              if n and n % 2 == 0]
    if not splits:
        raise NotApplicable(f"this {spec.name} sample has no dimension to split in two")
    split = data.draw(st.sampled_from(splits), label="split (argument, dimension)")
    expected = _refused_or(lambda: _sharded_on(ORACLE, spec, sample, split))
    actual = _refused_or(lambda: _sharded_on(target, spec, sample, split))
    if isinstance(expected, Refused) or isinstance(actual, Refused):
        # a sample whose values meet on other devices than the split argument's (a sharding
        # on other devices, a reference made on the default device): JAX refuses it, and
        # the backend must refuse it as the oracle does
        assert actual == expected, f"{spec.name} on a mesh on {target}: {actual} != {expected}"
        return
    assert_conforms(actual, expected, spec=spec, layouts=True,
                    what=f"{spec.name} on a mesh on {target}")


class Refused(str):
    """The message of JAX's refusal of committed values on different device sets."""


def _refused_or(run):
    try:
        return run()
    except ValueError as e:
        if not hasattr(e, "incompatible_devices"):
            raise
        return Refused(str(e))


def _sharded_on(backend, spec, sample, split):
    """Eager and jitted results with argument split[0] split along dimension split[1] over
    devices 0 and 1."""
    import refjax
    from refjax.sharding import Mesh, NamedSharding, PartitionSpec
    from ..backends.base import get_backend
    devices = get_backend(backend).devices()
    if len(devices) < 2:
        raise NotApplicable(f"the {backend} backend has a single device")
    mesh = Mesh(np.array(devices[:2]), ("x",))
    with on_backend(backend):
        args = [refjax.device_put(a, NamedSharding(mesh, _spec_at(split[1]) if i == split[0]
                                                   else PartitionSpec()))
                for i, a in enumerate(sample.to_refjax())]
        f = _bound(spec, sample.params)
        return as_list(f(*args)) + as_list(refjax.jit(f)(*args))


def _spec_at(dim):
    from refjax.sharding import PartitionSpec
    return PartitionSpec(*([None] * dim + ["x"]))
