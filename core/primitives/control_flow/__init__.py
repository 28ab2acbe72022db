"""Control-flow primitives (cond in cond.py; while and scan in loops.py) with all of their
rules, and the lax functions binding them; common.py holds what they share."""
from .cond import cond, cond_p, switch
from .loops import fori_loop, map, scan, scan_p, while_loop, while_p  # noqa: A004

__all__ = ["cond", "cond_p", "switch", "fori_loop", "map", "scan", "scan_p", "while_loop",
           "while_p"]
