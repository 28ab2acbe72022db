"""refjax.conformance: run the spec's generic checks on a backend (or real JAX) against the oracle.

`python -m refjax.conformance --backend NAME` (or the `refjax-conformance` console script); see
`python -m refjax.conformance --help` and README "Check your backend"."""
from .cli import main, run_suite
from .report import write_report

__all__ = ["main", "run_suite", "write_report"]
