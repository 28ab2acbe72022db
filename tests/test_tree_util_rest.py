"""The rest of jax.tree_util / jax.tree against real JAX 0.10.2: flatten_one_level(_with_keys),
is_tree_node, tree_broadcast (and JAX's prefix-structure messages), tree_reduce_associative's
balanced order, jax.tree.static with register_dataclass, treedef_children."""
import collections
import dataclasses
import operator

import jax as real_jax
import pytest

import refjax
from jax_compare import outcome as _outcome

Pt = collections.namedtuple("Pt", "x y")


def _cases(jax):
    tu = jax.tree_util

    @tu.register_dataclass
    @dataclasses.dataclass
    class MyOp:
        x: object
        y: object
        op: str = jax.tree.static(default="add")
    concat = lambda a, b: f"({a}+{b})"  # noqa: E731
    return {
        "one_level_dict": lambda: tu.flatten_one_level({"a": 1, "b": (2, 3)}),
        "one_level_list": lambda: tu.flatten_one_level([1, [2]]),
        "one_level_none": lambda: tu.flatten_one_level(None),
        "one_level_leaf": lambda: tu.flatten_one_level(1.0),
        "one_level_keys": lambda: tu.flatten_one_level_with_keys({"a": 1, "b": (2, 3)}),
        "is_tree_node": lambda: [tu.is_tree_node(t) for t in (
            int, tuple, type(None), dict, list, Pt, jax.numpy.ndarray, float, MyOp)],
        "broadcast": lambda: tu.tree_broadcast((1, 2), ((3, 4), {"a": 5})),
        "broadcast_nested": lambda: tu.tree_broadcast([1, {"k": 2}], [[3, 4], {"k": (5, 6)}]),
        "broadcast_short": lambda: tu.tree_broadcast([1, (2,)], [[3], (4, 5)]),
        "broadcast_types": lambda: tu.tree_broadcast([1, 2], (3, 4)),
        "broadcast_lengths": lambda: tu.tree_broadcast([1, 2], [3]),
        "broadcast_keys": lambda: tu.tree_broadcast({"a": 1}, {"b": 2}),
        "broadcast_counts": lambda: tu.tree_broadcast({"a": 1, "c": 3}, {"a": 2}),
        "broadcast_none": lambda: tu.tree_broadcast(None, [1, 2]),
        "tree_broadcast": lambda: jax.tree.broadcast(0, {"a": [1, 2]}),
        "reduce_associative": lambda: tu.tree_reduce_associative(operator.add, [1, 2, 3, 4, 5]),
        "reduce_order": lambda: tu.tree_reduce_associative(concat, list("abcde")),
        "reduce_tree": lambda: jax.tree.reduce_associative(concat, {"x": "a", "y": ("b", "c")}),
        "reduce_empty": lambda: tu.tree_reduce_associative(operator.add, []),
        "reduce_identity": lambda: tu.tree_reduce_associative(operator.add, [], identity=0),
        "static_field": lambda: (jax.tree.leaves(MyOp(x=1.0, y=2.0)),
                                 dict(dataclasses.fields(MyOp)[2].metadata)),
        "static_unflatten": lambda: jax.tree.unflatten(
            jax.tree.structure(MyOp(1.0, 2.0, op="mul")), [3.0, 4.0]).op,
        "treedef_children": lambda: tu.treedef_children(
            jax.tree.structure({"a": (1, 2), "b": 3})),
    }


@pytest.mark.parametrize("name", sorted(_cases(real_jax)))
def test_as_jax(name):
    assert _outcome(_cases(refjax)[name]) == _outcome(_cases(real_jax)[name])


def test_namedtuple_keys_name_each_field():
    """JAX 0.10.2's flatten_one_level_with_keys names both fields of a namedtuple 'x' (and
    gives the class as node data); refjax gives each child its own field name."""
    pairs, _ = refjax.tree_util.flatten_one_level_with_keys(Pt(1, [2]))
    assert [str(k) for k, _ in pairs] == [".x", ".y"]
    jax_pairs, _ = real_jax.tree_util.flatten_one_level_with_keys(Pt(1, [2]))
    assert [str(k) for k, _ in jax_pairs] == [".x", ".x"]  # JAX's slip, documented here


def test_key_path_types():
    assert refjax.tree_util.KeyPath == tuple[refjax.tree_util.KeyEntry, ...]
    assert refjax.tree_util.default_registry.is_node(dict)
