"""Measures how many of JAX's regex-checked error messages (tests/jax_error_table.py) refjax
reproduces: per check, whether real JAX raises and matches (sanity), whether refjax raises the
same class and whether its message matches JAX's regex.
Run: python benchmarks/jax_error_messages.py [--backend=xla] [--verbose]"""
import builtins
import os
import re
import sys
import warnings
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests"))

from error_cases import namespaces  # noqa: E402
from jax_error_table import CHECKS  # noqa: E402


def raised(check, ns):
    """The exception check.fn(ns) raises, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            check.fn(ns)
        except Exception as e:  # noqa: BLE001 - the exception is what is measured
            return e
    return None


def expected_class(check, ns):
    """The class check.cls names: a builtin, or one of ns.jax.errors."""
    return getattr(builtins, check.cls, None) or getattr(ns.jax.errors, check.cls)


def outcome(check, ns, regex):
    """'match', 'wording' (right class, other message), 'class' (other class) or 'none'."""
    err = raised(check, ns)
    if err is None:
        return "none"
    if not isinstance(err, expected_class(check, ns)):
        return "class"
    return "match" if re.search(regex, str(err), check.flags) else "wording"


def main(argv):
    real, ours = namespaces()
    for arg in argv:
        if arg.startswith("--backend="):
            ours.jax.set_backend(arg.split("=", 1)[1])
    counts = Counter()
    for check in CHECKS:
        theirs, mine = outcome(check, real, check.regex), outcome(check, ours, check.regex)
        counts["jax " + theirs] += 1
        counts["refjax " + mine] += 1
        if check.ours is not None:
            counts["refjax keeps a clearer message: " + outcome(check, ours, check.ours)] += 1
        if "--verbose" in argv and (mine != "match" or theirs != "match"):
            print(f"{check.where}: jax {theirs}, refjax {mine}: {check.regex!r}")
    print(f"{len(CHECKS)} checks of JAX's tests")
    for key, n in sorted(counts.items()):
        print(f"  {key}: {n}")


if __name__ == "__main__":
    main(sys.argv[1:])
