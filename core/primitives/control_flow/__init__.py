"""Control-flow primitives (cond in cond.py; while and scan in loops.py, scan's partial
evaluation and transpose in scan_ad.py) with all of their
rules, and the lax functions binding them; common.py holds what they share, iterations.py
their step-by-step evaluation (reverse mode through them when they use references)."""
from .cond import cond, cond_p, switch
from .loops import fori_loop, map, scan, scan_p, while_loop, while_p  # noqa: A004
from . import scan_ad  # noqa: F401 - registers scan's partial evaluation and transpose
from . import iterations  # noqa: F401 - registers reverse mode through loops using references

__all__ = ["cond", "cond_p", "switch", "fori_loop", "map", "scan", "scan_p", "while_loop",
           "while_p"]
