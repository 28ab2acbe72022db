"""The Backend: buffers are arrays of one Array API namespace on one device; jaxprs are run by
refjax's interpreter with this package's rules (rules.py)."""
import numpy as np

from refjax.backends import Backend, eval_jaxpr, make_cpu_devices
from refjax.sharding import SingleDeviceSharding

from . import rules


class ArrayApiBackend(Backend):
    """A refjax backend on the Array API namespace `xp` (array_api_compat's wrapper of NumPy,
    array-api-strict, PyTorch, CuPy...). Dtypes the namespace lacks (float16 and bfloat16 in
    the standard) and primitives the standard cannot express raise NotImplementedError naming
    the backend and the reason."""

    name = "array_api"

    def __init__(self, xp):
        self.xp = xp
        self._device = make_cpu_devices(1)[0]

    # -------------------------------------------------------- values in and out

    def devices(self):
        return [self._device]

    def put(self, value, aval, sharding=None):
        value = np.array(value, dtype=aval.dtype)  # a private copy: Arrays are immutable
        if value.dtype.names:  # float0 (integer tangents): no such dtype in the standard
            return value
        return self.xp.asarray(value, dtype=rules.xp_dtype(self, value.dtype))

    def to_numpy(self, buf, aval):
        if isinstance(buf, np.ndarray):
            return buf
        out = np.array(np.from_dlpack(buf))
        out.flags.writeable = False
        return out

    def shards(self, buf, aval):
        # (device, index, data): refjax wraps each piece in a refjax.Shard
        return [(self._device, tuple(slice(None) for _ in aval.shape), self.to_numpy(buf, aval))]

    def sharding_of(self, buf, aval):
        return SingleDeviceSharding(self._device)

    # -------------------------------------------------------- running primitives

    def execute(self, prim, bufs, params, out_avals):
        out = self.rule(prim)(self, *bufs, **params)
        outs = out if prim.multiple_results else [out]
        return [self.cast(o, a) for o, a in zip(outs, out_avals)]

    def cast(self, value, aval):
        """A rule's result as a buffer of the aval's dtype (Python scalars, NumPy values
        from literals and the NumPy scalars NumPy's namespace returns for 0-d results become
        arrays of the namespace)."""
        if isinstance(value, np.ndarray) and value.dtype.names:
            return value
        dtype = rules.xp_dtype(self, aval.dtype)
        value = value if hasattr(value, "__dlpack__") else self.xp.asarray(value)
        return value if value.dtype == dtype else self.xp.astype(value, dtype)

    def compile(self, closed_jaxpr, in_shardings=None, out_shardings=None):
        return lambda bufs: self.interpret(closed_jaxpr, bufs)

    def interpret(self, closed, args):
        """A ClosedJaxpr evaluated on this backend's buffers (call-like rules use it too)."""
        consts = [self.xp.asarray(np.asarray(c)) for c in closed.consts]
        outs = eval_jaxpr(closed.jaxpr, consts, *args, read_literal=self._literal,
                          apply=self._apply)
        return [self.cast(o, a) for o, a in zip(outs, closed.out_avals)]

    def _literal(self, lit):
        return self.put(np.asarray(lit.val), lit.aval)

    def _apply(self, eqn, ins):
        return self.execute(eqn.primitive, ins, eqn.params, [v.aval for v in eqn.outvars])

    def rule(self, prim):
        """This backend's rule of `prim`; NotImplementedError naming the reason if none."""
        reason = rules.UNEXPRESSIBLE.get(prim.name)
        if reason is None:
            try:
                return super().rule(prim)
            except NotImplementedError:
                reason = "not written yet (the standard could express it)"
        raise NotImplementedError(
            f"primitive '{prim.name}' has no rule on the {self.name} backend: {reason}")


class ArrayApiStrictBackend(ArrayApiBackend):
    """The backend on array-api-strict: only what the standard guarantees."""

    name = "array_api"

    def __init__(self):
        import array_api_strict
        super().__init__(array_api_strict)


class ArrayApiNumpyBackend(ArrayApiBackend):
    """The backend on NumPy through array-api-compat."""

    name = "array_api_numpy"

    def __init__(self):
        import array_api_compat.numpy
        super().__init__(array_api_compat.numpy)


rules.register_all(ArrayApiBackend)
