"""The conformance command line: choose a target, filter primitives and checks, run, report."""
import argparse
import contextlib
import io
import sys
import time

from ..testing import suite

_EPILOG = """examples:
  python -m refjax.conformance --backend xla --families elementwise --examples 4
  python -m refjax.conformance --backend mypkg.backend:MyBackend --report report.md
  python -m refjax.conformance --backend xla --dtypes float32,int8 --checks eager,jit
  python -m refjax.conformance --target jax --checks eager --report jax.xml"""


def parser():
    """The argument parser of `python -m refjax.conformance`."""
    p = argparse.ArgumentParser(prog="refjax-conformance", epilog=_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                description="Check a refjax backend (or real jax.lax) against the "
                                            "numpy_ref oracle with refjax's generic checks.")
    p.add_argument("--backend", default="numpy_ref",
                   help="a backend registered by name (entry point `refjax.backends`) or "
                        "MODULE:CLASS (imported and registered under the class's `name`)")
    p.add_argument("--target", choices=("backend", "jax"), default="backend",
                   help="`jax` checks real jax.lax itself (the eager checks) instead of a backend")
    p.add_argument("--primitives", help="comma-separated primitive names (default: all)")
    p.add_argument("--families", help="comma-separated families, e.g. elementwise,reductions")
    p.add_argument("--checks", help=f"comma-separated checks among {', '.join(suite.CHECKS)}")
    p.add_argument("--dtypes", help="comma-separated dtypes the samples are drawn in, e.g. "
                                    "float32,int8 (default: every dtype a primitive accepts), "
                                    "accepted ones and, for the `dtypes` check, rejected ones; "
                                    "derivatives (jvp, transpose, vjp and the second half of "
                                    "grad and oracle-transforms) are checked in float64 or "
                                    "complex128, so only when that is listed; a check left "
                                    "without a dtype is reported n/a, with the reason")
    p.add_argument("--examples", type=int, default=4, help="hypothesis examples per check")
    p.add_argument("--x64", action="store_true", help="run the eager checks with x64 enabled")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed (runs are reproducible)")
    p.add_argument("--max-ulps", type=float, default=None,
                   help="compare floats within this many ulps instead of the spec's tolerances")
    p.add_argument("--report", action="append", default=[],
                   help="write a report: .md, .json or .xml (JUnit); may be repeated")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def select(args):
    """The (spec, check) pairs the arguments ask for, in a stable order."""
    from ..spec import SPECS
    names = _split(args.primitives) or sorted(SPECS)
    unknown = [n for n in names if n not in SPECS]
    if unknown:
        raise SystemExit(f"unknown primitives: {', '.join(unknown)}")
    families = _split(args.families)
    target = suite.JAX if args.target == "jax" else None
    checks = _split(args.checks) or suite.checks_for(target or "backend")
    bad = [c for c in checks if c not in suite.CHECKS]
    if bad:
        raise SystemExit(f"unknown checks: {', '.join(bad)}; choose among {', '.join(suite.CHECKS)}")
    specs = [SPECS[n] for n in names if not families or SPECS[n].family in families]
    return [(s, c) for s in specs for c in checks]


def dtypes(args):
    """The dtype names of --dtypes (None: all); SystemExit naming the valid ones otherwise."""
    from ..spec.base import CANDIDATES_X64
    names = _split(args.dtypes)
    bad = [n for n in names if n not in CANDIDATES_X64]
    if bad:
        raise SystemExit(f"unknown dtypes: {', '.join(bad)}; choose among "
                         f"{', '.join(CANDIDATES_X64)}")
    return names or None


def _split(text):
    return [t.strip() for t in text.split(",") if t.strip()] if text else []


def run_suite(pairs, target, examples=4, seed=0, max_ulps=None, x64=None, progress=True,
              dtypes=None):
    """Run every (spec, check) pair on `target` (samples in `dtypes` only, if given); returns
    the Outcomes, in order."""
    from tqdm import tqdm
    outcomes = []
    bar = tqdm(pairs, desc=f"conformance of {target}", unit="check", disable=not progress,
               file=sys.stderr, dynamic_ncols=True)
    for spec, check in bar:
        bar.set_postfix_str(f"{spec.name}/{check}", refresh=False)
        start = time.perf_counter()
        with _quietly(target):
            outcome = suite.run_check(spec, check, target, examples, seed, max_ulps=max_ulps,
                                      x64=x64, dtypes=dtypes)
        outcome.seconds = time.perf_counter() - start
        outcomes.append(outcome)
    return outcomes


@contextlib.contextmanager
def _quietly(target):
    """What the checked primitives print (debug_print's and debug_callback's samples) goes to a
    discarded buffer, so that the run prints its table alone; callbacks still pending on the
    target's threads are waited for first."""
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            yield
        finally:
            _effects_barrier(target)


def _effects_barrier(target):
    if target == suite.JAX:
        import jax
        return jax.effects_barrier()
    from ..backends import get_backend
    get_backend(target).effects_barrier()


def main(argv=None):
    """Entry point: run the suite, print the summary, write reports; 1 if anything failed."""
    from .report import summary_table, write_report
    args = parser().parse_args(argv)
    target = suite.JAX if args.target == "jax" else suite.load_backend(args.backend)
    outcomes = run_suite(select(args), target, args.examples, args.seed, args.max_ulps,
                         True if args.x64 else None, not args.no_progress, dtypes(args))
    print(summary_table(outcomes, target))
    for path in args.report:
        write_report(path, outcomes, target, vars(args))
    return 1 if any(o.status == suite.FAIL for o in outcomes) else 0
