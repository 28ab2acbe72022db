"""Two backends for the conformance CLI's own test: `CorrectBackend`, the numpy_ref rules run by
a backend of its own (eagerly and as a jaxpr interpreter), and `WrongBackend`, the same with
three deliberate faults the CLI must report, and nothing else:

- `sin` of float32 one ulp above the correctly rounded result (within the spec's float32
  tolerance, so only `--max-ulps 0` sees it);
- `reduce_sum` of float32 returned in a float64 buffer (the wrong dtype);
- `transpose` ignoring its permutation (it reverses the axes)."""
import numpy as np

from refjax.backends.base import get_backend, register_backend
from refjax.backends.numpy_ref.backend import NumpyRefBackend
from refjax.core.avals import ShapedArray
from refjax.core.jaxpr import eval_jaxpr
from refjax.core.transforms.jit import jit_p


class CorrectBackend(NumpyRefBackend):
    """numpy_ref's rules, looked up and run by this backend (so a subclass can change them)."""

    name = "correct"

    def rule(self, prim):
        if prim is jit_p:  # a jit's equations run with this backend's rules too
            return lambda *args, jaxpr, **_: self._interpret(jaxpr, args)
        return get_backend("numpy_ref").rule(prim)

    def _interpret(self, closed, args):
        return eval_jaxpr(closed.jaxpr, [np.asarray(c) for c in closed.consts], *args,
                          read_literal=lambda lit: np.asarray(lit.val), apply=self._apply)

    def compile(self, closed_jaxpr, in_shardings=None, out_shardings=None):
        def run(bufs):
            outs = self._interpret(closed_jaxpr, [b.value for b in bufs])
            return [self.own(o, a) for o, a in zip(outs, closed_jaxpr.out_avals)]
        return run

    def fast_runner(self, closed_jaxpr):
        return None

    def _apply(self, eqn, ins):
        out = self.rule(eqn.primitive)(*ins, **eqn.params)
        outs = out if eqn.primitive.multiple_results else (out,)
        return [np.asarray(o, v.aval.dtype) for v, o in zip(eqn.outvars, outs)]


def _sin_one_ulp_up(rule):
    def sin(x, **params):
        out = np.asarray(rule(x, **params))
        return np.nextafter(out, np.float32(np.inf)) if out.dtype == np.float32 else out
    return sin


def _transpose_reversed(rule):
    return lambda x, *, permutation: np.transpose(x)


_FAULTS = {"sin": _sin_one_ulp_up, "transpose": _transpose_reversed}


class WrongBackend(CorrectBackend):
    """CorrectBackend with the three faults of the module docstring."""

    name = "wrong"

    def rule(self, prim):
        fault = _FAULTS.get(prim.name)
        return fault(super().rule(prim)) if fault else super().rule(prim)

    def execute(self, prim, bufs, params, out_avals):
        outs = super().execute(prim, bufs, params, out_avals)
        if prim.name == "reduce_sum" and out_avals[0].dtype == np.float32:
            wide = ShapedArray(out_avals[0].shape, np.float64)
            return [self.own(np.asarray(outs[0].value, np.float64), wide)]
        return outs


register_backend("correct", CorrectBackend)
register_backend("wrong", WrongBackend)
