"""ARCHITECTURE.md's "add a backend" recipe, followed step by step from outside refjax: a toy
backend holding one NumPy array per value on one device, with rules for a handful of
primitives, enough to run `jit(grad(...))` of a small function."""
import numpy as np

from refjax.backends.base import Backend, register_backend, register_rule
from refjax.core.jaxpr import eval_jaxpr
from refjax.core.primitives import elementwise as ew
from refjax.core.primitives import reductions, structural
from refjax.core.sharding import SingleDeviceSharding, make_cpu_devices
from refjax.core.transforms.jit import jit_p


class ToyBackend(Backend):
    """1. A Backend subclass with a name; its buffers are read-only NumPy arrays."""

    name = "toy"

    def __init__(self):
        self._device = make_cpu_devices(1)[0]

    # 2. devices, moving values in and out, layouts
    def devices(self):
        return [self._device]

    def put(self, value, aval, sharding=None):
        buf = np.array(value, dtype=aval.dtype)  # a private copy: Arrays are immutable
        buf.flags.writeable = False
        return buf

    def to_numpy(self, buf, aval):
        return buf

    def shards(self, buf, aval):
        return [(self._device, tuple(slice(None) for _ in buf.shape), buf)]

    def sharding_of(self, buf, aval):
        return SingleDeviceSharding(self._device)

    # 3. one primitive eagerly
    def execute(self, prim, bufs, params, out_avals):
        out = self.rule(prim)(*bufs, **params)
        outs = out if prim.multiple_results else [out]
        return [self.put(o, a) for o, a in zip(outs, out_avals)]

    # 4. a whole jaxpr: core's interpreter, each equation computed by this backend's rule
    def compile(self, closed_jaxpr, in_shardings=None, out_shardings=None):
        def run(bufs):
            outs = eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *bufs,
                              read_literal=lambda lit: np.asarray(lit.val), apply=self._apply)
            return [self.put(o, a) for o, a in zip(outs, closed_jaxpr.out_avals)]
        return run

    def _apply(self, eqn, ins):
        out = self.rule(eqn.primitive)(*ins, **eqn.params)
        outs = out if eqn.primitive.multiple_results else [out]
        return [np.asarray(o, v.aval.dtype) for v, o in zip(eqn.outvars, outs)]


# 5. rules, one per primitive (a primitive without one raises NotImplementedError naming it)
def rule(*prims):
    return register_rule(ToyBackend, *prims)


for _prim, _fn in ((ew.sin_p, np.sin), (ew.cos_p, np.cos), (ew.neg_p, np.negative),
                   (ew.mul_p, np.multiply), (ew.add_p, np.add), (ew.add_any_p, np.add),
                   (ew.sub_p, np.subtract)):
    rule(_prim)(_fn)


@rule(ew.convert_element_type_p)
def _convert(x, *, new_dtype, **_):
    return np.asarray(x).astype(new_dtype)


@rule(structural.broadcast_in_dim_p)
def _broadcast_in_dim(x, *, shape, broadcast_dimensions, **_):
    expanded = np.expand_dims(x, [d for d in range(len(shape)) if d not in broadcast_dimensions])
    return np.broadcast_to(expanded, shape)


@rule(reductions.reduce_sum_p)
def _reduce_sum(x, *, axes, **_):
    return np.sum(x, axis=tuple(axes))


@rule(jit_p)
def _jit(*args, jaxpr, **_):
    """Call-like primitives reach `execute` too: run their jaxpr with the interpreter."""
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args,
                      read_literal=lambda lit: np.asarray(lit.val),
                      apply=_the_backend()._apply)


def _the_backend():
    from refjax.backends.base import get_backend
    return get_backend("toy")


# 6. registration (a package would use the `refjax.backends` entry point instead)
register_backend("toy", ToyBackend)
