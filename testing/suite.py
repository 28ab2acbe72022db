"""The conformance suite: every check by name, and running one (primitive, check) pair under
hypothesis to an Outcome (pass, fail with a shrunk reproducer, not implemented, not applicable)."""
import importlib
import re
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.reporting import with_reporter

from . import checks, derivative_checks
from ..spec.base import diff_dtype
from .checks import JAX, NotApplicable

# name -> (check function, what it compares)
CHECKS = {
    "eager": (checks.check_eager, "eager (and jit) results vs the oracle: values, dtypes, weak "
              "types, layouts"),
    "jit": (checks.check_jit, "jit vs eager, bit for bit, same layouts"),
    "jvp": (derivative_checks.check_jvp, "JVP vs central finite differences (float64)"),
    "transpose": (derivative_checks.check_transpose, "transpose rules by the dot-product test"),
    "vjp": (derivative_checks.check_vjp, "vjp as the adjoint of the JVP"),
    "vmap": (derivative_checks.check_vmap, "vmap vs a Python loop"),
    "grad": (derivative_checks.check_grad, "jit commutes with vmap and grad"),
    "oracle-transforms": (derivative_checks.check_batched_and_vjp_vs_oracle,
                          "jit(vmap) and the jitted pullback vs the oracle's"),
    "dtypes": (checks.check_rejected_dtypes, "rejected dtypes raise TypeError naming the "
               "primitive"),
    "invalid": (checks.check_invalid, "declared invalid inputs raise their error class"),
    "layouts": (checks.check_layouts, "results on a 2-device mesh vs the oracle, shard by shard"),
}
# What `--target jax` runs: the spec's eager checks, pointed at real jax.lax.
JAX_CHECKS = ("eager", "dtypes", "invalid")

PASS, FAIL, NOT_IMPLEMENTED, NOT_APPLICABLE = "pass", "fail", "not implemented", "n/a"
_NO_RULE = re.compile(r"primitive '([^']+)' has no rule on the (\S+) backend")
# A backend without arrays of some dtype (the Array API standard has no float16) says so with
# this phrase; the examples of that dtype are skipped, the others checked.
# ("has no complex64 atan2": no such operation on that dtype).
_NO_DTYPE = re.compile(r"the (\S+) backend has no (\w+) (?:arrays|\w+)")


@dataclass
class Outcome:
    """The result of one check of one primitive: `status` is pass / fail / not implemented /
    n/a; `detail` the error or reason; `example` the shrunk falsifying example of a failure."""
    primitive: str
    check: str
    status: str
    detail: str = ""
    example: str = ""
    params: dict = field(default_factory=dict)
    seconds: float = 0.0


def run_check(spec, check, target, max_examples=8, seed=0, max_ulps=None, x64=None,
              dtypes=None):
    """Run check `check` of `spec`'s primitive on `target` (a backend name or "jax") for
    `max_examples` hypothesis examples (seeded: reproducible); returns an Outcome. `max_ulps`
    and `x64` (None: drawn) apply to the eager check; `dtypes` (names) limits the samples'
    dtypes (see DtypeFilter)."""
    fn = CHECKS[check][0]
    spec = DtypeFilter(spec, dtypes) if dtypes else spec
    if target != JAX and _needs_mesh(spec) and _device_count(target) < 2:
        return Outcome(spec.name, check, NOT_APPLICABLE, f"{spec.name} runs over a mesh of "
                       f"several devices; the {target} backend has one")
    extra = {"max_ulps": max_ulps, "x64": x64} if check == "eager" else {}
    lines, skipped = [], []

    @settings(max_examples=max_examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), print_blob=False, report_multiple_bugs=False)
    @given(data=st.data())
    def prop(data):
        try:
            fn(spec, data, target, **extra)
        except (NotApplicable, NotImplementedError) as e:
            if isinstance(e, NotApplicable) or _missing_rule(e, target):
                skipped.append(e)  # not shrunk: the example does not matter
                return
            raise
        skipped.append(None)

    try:
        with with_reporter(lines.append):
            _seeded(prop, seed)()
    except Exception as e:  # a failure of the target: reported, never a crash of the run
        return _failure(spec, check, e, lines)
    return _skipped_or_passed(spec, check, skipped)


class DtypeFilter:
    """A PrimitiveSpec whose samples have only the given dtypes (their first argument's, or
    their `dtype` param's): accepted dtypes are drawn from those, rejected ones for the
    `dtypes` check too, and the derivative checks, which run in float64 (complex128), apply
    only when it is listed. Where nothing is left the check is not applicable, with the
    reason."""

    def __init__(self, spec, dtypes):
        self._spec, self._dtypes = spec, tuple(dtypes)

    def __getattr__(self, name):
        return getattr(self._spec, name)

    def samples(self, x64=False, dtypes=None):
        """The spec's samples of the listed dtypes among `dtypes` (default: the accepted)."""
        dtypes = dtypes or self._spec.available_dtypes(x64)
        return self._spec.samples(x64, self._keep(dtypes, f"{self._spec.name} accepts"))

    def diff_samples(self):
        """The spec's derivative samples, if their dtype is listed."""
        self._keep((diff_dtype(self._spec.dtypes),), f"the derivatives of {self._spec.name} are "
                   "checked in")
        return self._spec.diff_samples()

    def rejected_dtypes(self):
        """The listed dtypes the primitive rejects."""
        rejected = self._spec.rejected_dtypes()
        return self._keep(rejected, f"{self._spec.name} rejects") if rejected else ()

    def _keep(self, dtypes, what):
        kept = tuple(d for d in dtypes if d in self._dtypes)
        if not kept:
            raise NotApplicable(f"{what} {', '.join(dtypes)}: none of --dtypes "
                                f"{','.join(self._dtypes)}")
        return kept


def _needs_mesh(spec):
    """Collectives and shard_map: their samples run over a mesh of 2 or more devices."""
    return spec.family == "parallel" or spec.name == "shard_map"


def _device_count(target):
    from ..backends.base import get_backend
    return len(get_backend(target).devices())


def _missing_rule(error, target):
    """Whether `error` is the target backend lacking a rule or arrays of a dtype."""
    rule, dtype = _NO_RULE.search(str(error)), _NO_DTYPE.search(str(error))
    backend = rule.group(2) if rule else dtype.group(1) if dtype else None
    return backend is not None and (target == JAX or backend == target)


def _skipped_or_passed(spec, check, skipped):
    """Not implemented if an example met a missing rule (or every one a missing dtype); n/a if
    no example applied; else a pass (naming the dtypes it could not check)."""
    rules = [e for e in skipped if isinstance(e, NotImplementedError) and _NO_RULE.search(str(e))]
    if rules:
        return Outcome(spec.name, check, NOT_IMPLEMENTED, str(rules[0]))
    ran = [e for e in skipped if e is None]
    no_dtype = sorted({_NO_DTYPE.search(str(e)).group(2) for e in skipped
                       if isinstance(e, NotImplementedError)})
    if not ran and no_dtype:
        return Outcome(spec.name, check, NOT_IMPLEMENTED, f"no {', '.join(no_dtype)} arrays")
    if not ran and skipped:
        return Outcome(spec.name, check, NOT_APPLICABLE, str(skipped[0]))
    return Outcome(spec.name, check, PASS, f"not checked: {', '.join(no_dtype)} (no such "
                   "arrays on the backend)" if no_dtype else "")


def _seeded(prop, seed):
    from hypothesis import seed as hseed
    return hseed(seed)(prop)


def _failure(spec, check, error, lines):
    """A failed Outcome: the error, and the shrunk example hypothesis attached to it (as
    exception notes) or reported."""
    notes = "\n".join([str(x) for x in lines] + list(getattr(error, "__notes__", ())))
    example = re.split(r"\n\s*(Explanation:|These lines were always)", notes)[0]
    detail = f"{type(error).__name__}: {error}".strip()
    return Outcome(spec.name, check, FAIL, detail, example)


def load_backend(spec):
    """The name of the backend `spec` names: a registered name (entry point `refjax.backends`)
    passes through; MODULE:CLASS is imported and registered under the class's `name`."""
    from ..backends.base import get_backend, register_backend
    if ":" not in spec:
        get_backend(spec)  # raises ValueError listing the available backends
        return spec
    module, _, attr = spec.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    name = getattr(cls, "name", attr)
    register_backend(name, cls)
    return name


def checks_for(target):
    """The check names that apply to `target`."""
    return JAX_CHECKS if target == JAX else tuple(CHECKS)

