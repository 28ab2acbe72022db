"""RuleTable: a dict-like registry of JAX's (`ad.primitive_jvps[p] = rule`) whose entries are
set on the primitive itself as one of refjax's rules (core/primitive.py's RULES)."""
from collections.abc import MutableMapping


class RuleTable(MutableMapping):
    """`table[prim] = fn` sets prim's `rule` to adapt(fn); reading gives fn back. It holds the
    rules set through it only (refjax's own primitives keep theirs as attributes)."""

    def __init__(self, rule, adapt=lambda fn: fn):
        self.rule, self.adapt, self.entries = rule, adapt, {}

    def __setitem__(self, prim, fn):
        prim.set_rule(self.rule, self.adapt(fn))
        self.entries[prim] = fn

    def __getitem__(self, prim):
        return self.entries[prim]

    def __delitem__(self, prim):
        del self.entries[prim]
        setattr(prim, self.rule, None)

    def __iter__(self):
        return iter(self.entries)

    def __len__(self):
        return len(self.entries)

    def __repr__(self):
        return f"RuleTable({self.rule}: {self.entries!r})"
