"""Differential tests of refjax.core.pytree against real jax.tree_util."""

import collections
import copy
import dataclasses
import functools
import operator

import pytest
from hypothesis import given, settings, strategies as st

import jax.tree_util as jtu
from refjax.core import pytree as pt

# Pytree cases are cheap: ten times the loaded profile's budget (a per-test setting, so the
# profile other modules see is left alone).
cheap = settings(max_examples=10 * settings.default.max_examples)

Pair = collections.namedtuple("Pair", "a b")
Single = collections.namedtuple("Single", "x")


# ---------------------------------------------------------------------------
# Custom node types, registered identically in both registries
# ---------------------------------------------------------------------------

class Box:
    """Custom node without keys: children (value, extra), aux data = label."""

    def __init__(self, value, extra, label):
        self.value, self.extra, self.label = value, extra, label

    def __eq__(self, other):
        return (type(other) is type(self) and
                (self.value, self.extra, self.label) == (other.value, other.extra, other.label))

    def __repr__(self):
        return f"Box({self.value!r}, {self.extra!r}, {self.label!r})"


def _box_flatten(b):
    return (b.value, b.extra), b.label


def _box_unflatten(label, children):
    assert isinstance(children, tuple)
    return Box(children[0], children[1], label)


class KeyedBox(Box):
    """Custom node registered with keys."""


def _keyed_flatten_with_keys(b):
    return ((jtu.GetAttrKey("value"), b.value), (jtu.DictKey("extra"), b.extra)), b.label


def _keyed_flatten_with_keys_ref(b):
    return ((pt.GetAttrKey("value"), b.value), (pt.DictKey("extra"), b.extra)), b.label


def _keyed_unflatten(label, children):
    return KeyedBox(children[0], children[1], label)


for _mod in (jtu, pt):
    _mod.register_pytree_node(Box, _box_flatten, _box_unflatten)
jtu.register_pytree_with_keys(KeyedBox, _keyed_flatten_with_keys, _keyed_unflatten)
pt.register_pytree_with_keys(KeyedBox, _keyed_flatten_with_keys_ref, _keyed_unflatten)


class Point:
    """Registered via register_pytree_node_class in both registries."""

    def __init__(self, x, y, tag="p"):
        self.x, self.y, self.tag = x, y, tag

    def tree_flatten(self):
        return (self.x, self.y), self.tag

    @classmethod
    def tree_unflatten(cls, tag, children):
        return cls(*children, tag=tag)

    def __eq__(self, other):
        return type(other) is Point and vars(self) == vars(other)


assert jtu.register_pytree_node_class(Point) is Point
assert pt.register_pytree_node_class(Point) is Point


@dataclasses.dataclass
class Params:
    w: object
    b: object = None
    name: str = dataclasses.field(default="layer", metadata=dict(static=True))


assert jtu.register_dataclass(Params) is Params
assert pt.register_dataclass(Params) is Params


class Attrs:
    """Non-dataclass registered with explicit data/meta fields."""

    def __init__(self, a, b, m):
        self.a, self.b, self.m = a, b, m

    def __eq__(self, other):
        return type(other) is Attrs and vars(self) == vars(other)


for _mod in (jtu, pt):
    _mod.register_dataclass(Attrs, data_fields=["b", "a"], meta_fields=["m"])


class Color(str):
    """Static node type."""


for _mod in (jtu, pt):
    _mod.register_static(Color)


# ---------------------------------------------------------------------------
# Helpers and strategies
# ---------------------------------------------------------------------------

def paths_str(mod, tree, simple=False, separator="", **flatten_kw):
    """keystr of every leaf path of `tree`, using module `mod` (pt or jtu)."""
    return [mod.keystr(p, simple=simple, separator=separator)
            for p, _ in mod.tree_leaves_with_path(tree, **flatten_kw)]


def assert_same_flatten(tree, is_leaf=None):
    """Everything observable about flattening `tree` agrees with JAX."""
    leaves, treedef = pt.tree_flatten(tree, is_leaf)
    j_leaves, j_treedef = jtu.tree_flatten(tree, is_leaf)
    assert leaves == j_leaves
    assert all(a is b for a, b in zip(leaves, j_leaves))
    assert repr(treedef) == repr(j_treedef)
    assert treedef.num_leaves == j_treedef.num_leaves
    assert treedef.num_nodes == j_treedef.num_nodes
    assert pt.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(j_treedef)
    assert [repr(c) for c in pt.treedef_children(treedef)] == \
        [repr(c) for c in jtu.treedef_children(j_treedef)]
    # Round trip; unflattening builds a new tree equal to the original.
    assert treedef.unflatten(leaves) == jtu.tree_unflatten(j_treedef, j_leaves)
    assert pt.tree_unflatten(treedef, iter(leaves)) == tree
    # Key paths.
    kw = dict(is_leaf=is_leaf)
    assert paths_str(pt, tree, **kw) == paths_str(jtu, tree, **kw)
    assert (paths_str(pt, tree, simple=True, separator="/", **kw)
            == paths_str(jtu, tree, simple=True, separator="/", **kw))
    path_leaves, path_def = pt.tree_flatten_with_path(tree, is_leaf)
    assert [x for _, x in path_leaves] == leaves and path_def == treedef


int_leaves = st.integers(-9, 9)


def _extend(children):
    small = dict(max_size=3)
    return st.one_of(
        st.lists(children, **small),
        st.lists(children, **small).map(tuple),
        st.dictionaries(st.sampled_from("dcba"), children, **small),
        st.builds(Pair, children, children),
        st.builds(Single, children),
        st.lists(st.tuples(st.sampled_from("zyx"), children), **small)
          .map(collections.OrderedDict),
        st.dictionaries(st.sampled_from("qp"), children, **small)
          .map(lambda d: collections.defaultdict(list, d)),
        st.builds(Box, children, children, st.sampled_from(["l1", "l2"])),
        st.builds(Params, children, children, st.sampled_from(["n1", "n2"])),
    )


trees = st.recursive(st.one_of(st.none(), int_leaves), _extend, max_leaves=10)
plain_trees = st.recursive(  # builtin containers only
    st.one_of(st.none(), int_leaves),
    lambda c: st.one_of(st.lists(c, max_size=3), st.lists(c, max_size=3).map(tuple),
                        st.dictionaries(st.sampled_from("ab"), c, max_size=2),
                        st.builds(Pair, c, c)),
    max_leaves=8)


# ---------------------------------------------------------------------------
# Property tests against JAX
# ---------------------------------------------------------------------------

@cheap
@given(trees)
def test_flatten_matches_jax(tree):
    assert_same_flatten(tree)


@cheap
@given(trees)
def test_is_leaf_matches_jax(tree):
    assert_same_flatten(tree, is_leaf=lambda x: x is None)
    assert_same_flatten(tree, is_leaf=lambda x: isinstance(x, list))
    assert pt.all_leaves(pt.tree_leaves(tree)) == jtu.all_leaves(jtu.tree_leaves(tree))
    assert pt.all_leaves([tree]) == jtu.all_leaves([tree])


@cheap
@given(trees)
def test_tree_map_matches_jax(tree):
    inc = lambda x: x + 1
    assert pt.tree_map(inc, tree) == jtu.tree_map(inc, tree)
    with_path = lambda p, x: (pt.keystr(p), x)
    j_with_path = lambda p, x: (jtu.keystr(p), x)
    assert pt.tree_map_with_path(with_path, tree) == jtu.tree_map_with_path(j_with_path, tree)
    assert pt.tree_reduce(operator.add, tree, 0) == jtu.tree_reduce(operator.add, tree, 0)
    assert pt.tree_all(tree) == jtu.tree_all(tree)


@cheap
@given(plain_trees, plain_trees)
def test_multi_tree_map_and_equality_match_jax(a, b):
    f = lambda x, y: (x, y)
    try:
        expected = jtu.tree_map(f, a, b)
    except ValueError:
        with pytest.raises(ValueError, match="tree_map"):
            pt.tree_map(f, a, b)
    else:
        assert pt.tree_map(f, a, b) == expected
    same = pt.tree_structure(a) == pt.tree_structure(b)
    assert same == (jtu.tree_structure(a) == jtu.tree_structure(b))
    if same:
        assert hash(pt.tree_structure(a)) == hash(pt.tree_structure(b))


@cheap
@given(trees)
def test_prefix_map_matches_jax(tree):
    """A leaf of the first tree pairs with a whole subtree of the second."""
    bigger = jtu.tree_map(lambda x: {"k": [x, None]}, tree)
    f = lambda x, y: (x, y)
    assert pt.tree_map(f, tree, bigger) == jtu.tree_map(f, tree, bigger)
    treedef = pt.tree_structure(tree)
    assert treedef.flatten_up_to(bigger) == jtu.tree_structure(tree).flatten_up_to(bigger)
    assert treedef == pt.tree_structure(pt.tree_map(lambda x: -x, tree))
    assert hash(treedef) == hash(pt.tree_structure(pt.tree_map(lambda x: -x, tree)))


# ---------------------------------------------------------------------------
# Fixed examples
# ---------------------------------------------------------------------------

EXAMPLES = [
    1, None, (), [], {}, (1,), [None], {"b": 1, "a": (2, 3)}, {2: "x", 1: "y"},
    [1, None, {"x": ()}], Pair(1, Single(None)),
    collections.OrderedDict([("b", 1), ("a", 2)]), collections.OrderedDict(),
    collections.defaultdict(list, {"b": 1, "a": [2]}), collections.defaultdict(int),
    Box([1, 2], None, "lbl"), KeyedBox(1, {"z": 2}, None), Point(1, (2, 3)),
    Params(1, [2, 3], "dense"), Attrs(1, 2, "meta"), [Color("red"), 5],
    {"nested": {"deep": [Pair(1, 2), Box(3, 4, 0)]}},
]


@pytest.mark.parametrize("tree", EXAMPLES, ids=repr)
def test_examples_match_jax(tree):
    assert_same_flatten(tree)


def test_treedef_api():
    treedef = pt.tree_structure({"a": 1, "b": (2, 3)})
    assert repr(treedef) == "PyTreeDef({'a': *, 'b': (*, *)})"
    assert (treedef.num_leaves, treedef.num_nodes) == (3, 5)
    assert treedef.node_data() == (dict, ["a", "b"])
    assert pt.tree_structure(1).node_data() is None
    j = jtu.tree_structure
    for tree in EXAMPLES:
        assert pt.tree_structure(tree).node_data() == j(tree).node_data()
    with pytest.raises(AttributeError):
        treedef.num_leaves = 7
    assert copy.deepcopy(treedef) is treedef
    assert {treedef: 1}[pt.tree_structure({"b": (0, 0), "a": 0})] == 1
    assert treedef != pt.tree_structure({"a": 1, "b": [2, 3]})
    assert treedef != "PyTreeDef({'a': *, 'b': (*, *)})"
    # Aux data takes part in equality.
    assert pt.tree_structure(Box(1, 2, "x")) != pt.tree_structure(Box(1, 2, "y"))
    assert pt.tree_structure(Params(1, 2, "a")) != pt.tree_structure(Params(1, 2, "b"))
    # Same keys, different order: OrderedDicts differ, dicts do not.
    od = collections.OrderedDict
    assert pt.tree_structure(od(a=1, b=2)) != pt.tree_structure(od(b=1, a=2))
    assert pt.tree_structure(dict(a=1, b=2)) == pt.tree_structure(dict(b=1, a=2))
    assert pt.tree_structure((1, 2)) != pt.tree_structure([1, 2])
    assert pt.tree_structure((1, 2)) != pt.tree_structure(Pair(1, 2))
    # compose and treedef_tuple.
    outer, inner = pt.tree_structure([0, 0]), pt.tree_structure((0, {"a": 0}))
    assert repr(outer.compose(inner)) == repr(j([0, 0]).compose(j((0, {"a": 0}))))
    assert pt.treedef_tuple([outer, inner]) == pt.tree_structure(([0, 0], (0, {"a": 0})))


def test_unflatten_wrong_leaf_count():
    treedef = pt.tree_structure({"a": 1, "b": (2, 3)})
    with pytest.raises(ValueError, match="expected 3, got 2"):
        treedef.unflatten([1, 2])
    with pytest.raises(ValueError, match="expected 3, got 4"):
        pt.tree_unflatten(treedef, iter([1, 2, 3, 4]))
    assert pt.tree_unflatten(pt.tree_structure(None), []) is None


def test_dict_and_special_containers():
    d = pt.tree_unflatten(pt.tree_structure({"b": 1, "a": 2}), [10, 20])
    assert list(d) == ["a", "b"] and d == {"a": 10, "b": 20}
    od = pt.tree_map(lambda x: x * 2, collections.OrderedDict([("b", 1), ("a", 2)]))
    assert type(od) is collections.OrderedDict and list(od.items()) == [("b", 2), ("a", 4)]
    dd = pt.tree_map(str, collections.defaultdict(list, {"b": 1}))
    assert type(dd) is collections.defaultdict and dd.default_factory is list
    assert dd == {"b": "1"}
    # Subclasses of builtin containers are leaves (exact type dispatch), as in JAX.
    class MyDict(dict):
        pass
    assert pt.tree_leaves([MyDict(a=1)]) == jtu.tree_leaves([MyDict(a=1)]) == [MyDict(a=1)]
    # Unsortable dict keys are an error in both.
    for mod in (pt, jtu):
        with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
            mod.tree_leaves({1: 1, "a": 2})


def test_is_leaf_none_and_call_order():
    assert pt.tree_leaves([1, None, 2]) == [1, 2]
    assert pt.tree_leaves([1, None, 2], is_leaf=lambda x: x is None) == [1, None, 2]
    calls, j_calls = [], []
    tree = [1, None, (2,), {"a": Pair(3, [])}]
    pt.tree_leaves(tree, is_leaf=lambda x: calls.append(x) or False)
    jtu.tree_leaves(tree, is_leaf=lambda x: j_calls.append(x) or False)
    assert calls == j_calls
    by_path = lambda path, x: len(path) == 1
    assert paths_str(pt, tree, is_leaf=by_path, is_leaf_takes_path=True) == \
        paths_str(jtu, tree, is_leaf=by_path, is_leaf_takes_path=True)


def test_structure_mismatch_errors():
    cases = [((1, 2), [1, 2]), ((1, 2), (1, 2, 3)), ({"a": 1}, {"b": 1}), ((None, 1), (3, 2)),
             (Pair(1, 2), (1, 2)), ([1], 5), (Box(1, 2, "x"), Box(1, 2, "y")),
             ({"a": [1, 2]}, {"a": [1, 2, 3]}), (Params(1, 2), Params(1, [2], "other"))]
    f = lambda *xs: xs
    for first, second in cases:
        with pytest.raises(ValueError):
            jtu.tree_map(f, first, second)  # the independent truth: JAX rejects these too
        with pytest.raises(ValueError) as info:
            pt.tree_map(f, first, second)
        msg = str(info.value)
        assert repr(pt.tree_structure(first)) in msg
        assert repr(pt.tree_structure(second)) in msg
        with pytest.raises(ValueError):
            pt.tree_structure(first).flatten_up_to(second)
    with pytest.raises(ValueError, match=r"mismatch at \['a'\]: List arity mismatch"):
        pt.tree_map(f, {"a": [1, 2]}, {"a": [1, 2, 3]})
    with pytest.raises(ValueError, match=r"mismatch at \[0\]: Expected None, got 3"):
        pt.tree_map_with_path(f, (None, 1), (3, 2))
    with pytest.raises(ValueError, match="Dict key mismatch"):
        pt.tree_structure({"a": 1}).flatten_up_to({"b": 1})


def test_key_entries_match_jax():
    pairs = [(pt.DictKey("a"), jtu.DictKey("a")), (pt.DictKey(1), jtu.DictKey(1)),
             (pt.SequenceKey(3), jtu.SequenceKey(3)), (pt.GetAttrKey("w"), jtu.GetAttrKey("w")),
             (pt.FlattenedIndexKey(0), jtu.FlattenedIndexKey(0))]
    for ours, theirs in pairs:
        assert str(ours) == str(theirs)
        assert repr(ours) == repr(theirs)
        assert pt.keystr((ours,), simple=True) == jtu.keystr((theirs,), simple=True)
    assert pt.DictKey("a") == pt.DictKey("a") and hash(pt.DictKey("a")) == hash(pt.DictKey("a"))
    assert pt.DictKey(0) != pt.SequenceKey(0)
    with pytest.raises(AttributeError):
        pt.DictKey("a").key = "b"
    path = (pt.DictKey("a"), pt.SequenceKey(0), pt.GetAttrKey("x"), pt.FlattenedIndexKey(1))
    assert pt.keystr(path) == "['a'][0].x[<flat index 1>]"
    assert pt.keystr(path, simple=True, separator="/") == "a/0/x/1"
    assert pt.keystr(()) == ""


def test_registration_errors():
    for nodetype in (tuple, dict, collections.OrderedDict, Box, Params, pt.Partial):
        with pytest.raises(ValueError, match="Duplicate"):
            pt.register_pytree_node(nodetype, _box_flatten, _box_unflatten)

    @dataclasses.dataclass
    class Missing:
        x: int
        y: int

    with pytest.raises(ValueError, match="Missing fields"):
        pt.register_dataclass(Missing, data_fields=["x"], meta_fields=[])
    with pytest.raises(ValueError, match="must not overlap"):
        pt.register_dataclass(Missing, data_fields=["x", "y"], meta_fields=["y"])
    with pytest.raises(TypeError, match="both be specified"):
        pt.register_dataclass(Missing, data_fields=["x", "y"])
    class Plain:
        pass

    with pytest.raises(TypeError, match="not a dataclass"):
        pt.register_dataclass(Plain)


def test_dataclass_decorator_and_drop_fields():
    @pt.register_dataclass
    @dataclasses.dataclass
    class State:
        step: int
        params: dict
        mode: str = dataclasses.field(default="train", metadata=dict(static=True))
        cache: object = dataclasses.field(default=None)

    s = State(1, {"w": 2}, "eval")
    leaves, treedef = pt.tree_flatten(s)
    assert leaves == [1, 2]
    assert repr(treedef) == "PyTreeDef(CustomNode(State[('eval',)], [*, {'w': *}, None]))"
    assert pt.tree_unflatten(treedef, [5, 6]) == State(5, {"w": 6}, "eval")
    assert paths_str(pt, s) == [".step", ".params['w']"]

    @functools.partial(pt.register_dataclass, data_fields=["x"], meta_fields=[],
                       drop_fields=["derived"])
    @dataclasses.dataclass
    class Dropped:
        x: int
        derived: int = 0

    assert pt.tree_leaves(Dropped(3, 4)) == [3]
    assert pt.tree_map(lambda v: v + 1, Dropped(3, 4)) == Dropped(4, 0)


def test_register_pytree_with_keys_class():
    @pt.register_pytree_with_keys_class
    class Special:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return ((pt.GetAttrKey("x"), self.x), (pt.GetAttrKey("y"), self.y)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    s = Special(1, [2])
    assert pt.tree_leaves(s) == [1, 2]
    assert paths_str(pt, s) == [".x", ".y[0]"]
    assert repr(pt.tree_structure(s)) == "PyTreeDef(CustomNode(Special[None], [*, [*]]))"
    back = pt.tree_map(lambda v: v * 10, s)
    assert (back.x, back.y) == (10, [20])


def test_partial_matches_jax():
    p = pt.Partial(max, 1, key=abs)
    jp = jtu.Partial(max, 1, key=abs)
    assert pt.tree_leaves(p) == jtu.tree_leaves(jp) == [1, abs]
    assert repr(pt.tree_structure(p)) == repr(jtu.tree_structure(jp))
    assert paths_str(pt, p) == paths_str(jtu, jp)
    doubled = pt.tree_map(lambda v: v * 2 if isinstance(v, int) else v, p)
    assert isinstance(doubled, pt.Partial) and doubled(-1) == 2 and doubled(-3) == -3
    assert pt.tree_structure(pt.Partial(max)) == pt.tree_structure(pt.Partial(max))
    # A nested Partial stays static: only the outer args are children.
    nested = pt.Partial(pt.Partial(max, 7), 2)
    assert nested.args == (2,) and pt.tree_leaves(nested) == [2] and nested(3) == 7


def test_transpose_reduce_all_leaves():
    tree = [(1, 2), (3, 4), (5, 6)]
    outer, inner = pt.tree_structure([0, 0, 0]), pt.tree_structure((0, 0))
    expected = jtu.tree_transpose(jtu.tree_structure([0, 0, 0]), jtu.tree_structure((0, 0)), tree)
    assert pt.tree_transpose(outer, inner, tree) == expected == ([1, 3, 5], [2, 4, 6])
    assert pt.tree_transpose(outer, None, tree) == expected
    with pytest.raises(TypeError, match="Mismatch"):
        pt.tree_transpose(outer, inner, [(1, 2), (3, 4), (5, 6, 7)])
    assert pt.tree_reduce(operator.add, [1, (2, 3)]) == 6
    with pytest.raises(TypeError):
        pt.tree_reduce(operator.add, [None, ()])
    assert pt.tree_all([]) and not pt.tree_all([1, (0,)])
    for items in ([1, 2], [None], [(1,)], [Pair(1, 2)], [Color("c")], []):
        assert pt.all_leaves(items) == jtu.all_leaves(items)
        is_none = lambda x: x is None
        assert pt.all_leaves(items, is_none) == jtu.all_leaves(items, is_none)


def test_treedef_is_leaf_cases():
    for tree in (1, None, (), [], {}, [1], (None,)):
        assert pt.treedef_is_leaf(pt.tree_structure(tree)) == \
            jtu.treedef_is_leaf(jtu.tree_structure(tree))
