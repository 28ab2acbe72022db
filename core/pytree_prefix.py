"""The rest of jax.tree_util: one-level flattening, node tests, broadcasting a prefix tree
over a full one (with JAX's structure-error messages), associative reductions, and
jax.tree.static for dataclass fields."""
import dataclasses
import difflib
import textwrap
from typing import Any, Callable, Hashable, Iterable, TypeVar

from . import pytree

KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyLeafPair = tuple[KeyEntry, Any]
KeyPath = tuple[KeyEntry, ...]
T = TypeVar("T")


class _Registry:
    """jax.tree_util.default_registry: the registry every pytree function uses."""

    def is_node(self, typ):
        """Whether instances of `typ` are pytree nodes (not leaves)."""
        if not isinstance(typ, type):
            raise TypeError(f"is_node(): expected a type, got {typ!r}")
        return typ in pytree._registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))

    def __repr__(self):
        return "<PyTreeRegistry (refjax)>"


default_registry = _Registry()


def is_tree_node(typ) -> bool:
    """Whether instances of the type `typ` are pytree nodes (tuple, dict, registered classes)."""
    return default_registry.is_node(typ)


def _handler(tree):
    handler = pytree._handler_for(tree)
    if handler is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return handler


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """(children, node data) of the node `tree`, one level deep; ValueError for a leaf."""
    children, data = _handler(tree).flatten(tree)
    return (list if isinstance(tree, list) else tuple)(children), data


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[KeyLeafPair], Hashable]:
    """((key, child) pairs, node data) of the node `tree`, one level deep."""
    pairs, data = _handler(tree).flatten_with_keys(tree)
    return tuple(pairs), data


def _child_keys(tree):
    return tuple(k for k, _ in flatten_one_level_with_keys(tree)[0])


def _prefix_error(path, prefix, full, is_leaf):
    """JAX's message for the first place where `prefix` is not a tree prefix of `full`, or
    None."""
    if pytree.tree_structure(prefix, is_leaf=is_leaf).num_nodes == 1 and \
            pytree.tree_structure(prefix, is_leaf=is_leaf).num_leaves == 1:
        return None  # a leaf (not None, which is a node) is a prefix of anything
    where = f"    broadcast_prefix prefix_tree{pytree.keystr(path)}\n"
    if type(prefix) is not type(full):
        return ("pytree structure error: different types at key path\n" + where +
                "At that key path, the prefix pytree broadcast_prefix prefix_tree has a "
                f"subtree of type\n    {type(prefix)}\nbut at the same key path the full "
                f"pytree has a subtree of different type\n    {type(full)}.")
    (p_children, p_meta), (f_children, f_meta) = flatten_one_level(prefix), \
        flatten_one_level(full)
    if isinstance(prefix, (list, tuple)) and len(prefix) != len(full):
        kind = type(prefix).__name__
        return (f"pytree structure error: different lengths of {kind} at key path\n" + where +
                "At that key path, the prefix pytree broadcast_prefix prefix_tree has a "
                f"subtree of type {kind} of length {len(prefix)}, but the full pytree has a "
                f"subtree of the same type but of length {len(full)}.")
    if len(p_children) != len(f_children):
        return _count_error(where, prefix, full)
    if p_meta != f_meta:
        return _metadata_error(where, type(prefix), str(p_meta), str(f_meta))
    for key, p, f in zip(_child_keys(prefix), p_children, f_children):
        error = _prefix_error((*path, key), p, f, is_leaf)
        if error:
            return error
    return None


def _count_error(where, prefix, full):
    p_keys, f_keys = _child_keys(prefix), _child_keys(full)
    try:
        diff = set(p_keys).symmetric_difference(set(f_keys))
    except TypeError:
        diff = None
    names = lambda keys: " ".join(str(k.key) for k in keys)  # noqa: E731
    return ("pytree structure error: different numbers of pytree children at key path\n" +
            where + "At that key path, the prefix pytree broadcast_prefix prefix_tree has a "
            f"subtree of type\n    {type(prefix)}\nwith {len(p_keys)} child keys\n    "
            f"{names(p_keys)}\nbut at the same key path the full pytree has a subtree of the "
            f"same type but with {len(f_keys)} child keys\n    {names(f_keys)}\n" +
            ("" if diff is None else
             f"so the symmetric difference on key sets is\n    {names(diff)}"))


def _metadata_error(where, kind, p_meta, f_meta):
    diff = textwrap.indent("\n".join(difflib.ndiff(p_meta.splitlines(), f_meta.splitlines())),
                           prefix="    ")
    return ("pytree structure error: different pytree metadata at key path\n" + where +
            "At that key path, the prefix pytree broadcast_prefix prefix_tree has a subtree "
            f"of type\n    {kind}\nwith metadata\n    {p_meta}\nbut at the same key path the "
            "full pytree has a subtree of the same type but with metadata\n    "
            f"{f_meta}\nso the diff in the metadata at these pytree nodes is\n{diff}")


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """full_tree's structure with each leaf of prefix_tree repeated over the subtree of
    full_tree it stands for (ValueError with JAX's message when it is not a tree prefix)."""
    error = _prefix_error((), prefix_tree, full_tree, is_leaf)
    if error:
        raise ValueError(error)
    full_def = pytree.tree_structure(full_tree)
    leaves = []
    for leaf, sub in zip(pytree.tree_leaves(prefix_tree, is_leaf=is_leaf),
                         pytree.tree_structure(prefix_tree, is_leaf=is_leaf)
                         .flatten_up_to(full_tree)):
        leaves.extend([leaf] * pytree.tree_structure(sub).num_leaves)
    return pytree.tree_unflatten(full_def, leaves)


def _parallel_reduce(sequence, operation, identity):
    if not sequence:
        if isinstance(identity, pytree._Unspecified):
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    if len(sequence) == 1:
        return sequence[0]
    half = len(sequence) // 2
    return operation(_parallel_reduce(sequence[:half], operation, identity),
                     _parallel_reduce(sequence[half:], operation, identity))


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity=pytree._NO_INITIALIZER,
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduce the leaves of `tree` with the associative `operation` as a balanced tree of
    calls (halves first, as JAX's); an empty tree needs `identity`."""
    return _parallel_reduce(pytree.tree_leaves(tree, is_leaf=is_leaf), operation, identity)


def static(**kwargs):
    """A dataclasses.field marked static (metadata static=True): register_dataclass keeps it
    in the tree's structure rather than among its leaves."""
    metadata = {**kwargs.pop("metadata", {}), "static": True}
    return dataclasses.field(metadata=metadata, **kwargs)


__all__ = ["KeyEntry", "KeyPath", "default_registry", "is_tree_node", "flatten_one_level",
           "flatten_one_level_with_keys", "tree_broadcast", "tree_reduce_associative",
           "static"]


def structure_differences(tree1, tree2, name1, name2):
    """Where two PyTreeDefs differ, in JAX's words (its equality_errors): for each difference,
    "<name1> output at path P is ... but <name2> output at path P is ..., so ..."."""
    return list(_differences(tree1, tree2, (), name1, name2))


def _differences(t1, t2, path, name1, name2):
    at = f" at path {pytree.keystr(path)}" if path else ""
    first, second = f"{name1} output{at} is", f"{name2} output{at} is"
    leaf1, leaf2 = t1._handler is None, t2._handler is None
    if leaf1 != leaf2 or t1._type is not t2._type:
        what = lambda t: "a pytree leaf" if t._handler is None else f"a {t._type}"  # noqa: E731
        yield f"{first} {what(t1)} but {second} {what(t2)}, so their Python types differ."
    elif leaf1:
        return
    elif len(t1._children) != len(t2._children):
        kind = t1._type.__name__ if t1._type in (tuple, list) else str(t1._type)
        yield (f"{first} a {kind} of length {len(t1._children)} but {second} a {kind} of "
               f"length {len(t2._children)}, so the lengths do not match.")
    elif t1._data != t2._data:
        yield (f"{first} a {t1._type} with pytree metadata {_metadata(t1)} but {second} a "
               f"{t2._type} with pytree metadata {_metadata(t2)}, so the pytree node metadata "
               "does not match.")
    else:
        for i, (c1, c2) in enumerate(zip(t1._children, t2._children)):
            yield from _differences(c1, c2, path + (_child_key(t1, i),), name1, name2)


def _metadata(t):
    return tuple(t._data) if isinstance(t._data, list) else t._data


def _child_key(t, i):
    if t._type is dict:
        return pytree.DictKey(t._data[i])
    if t._type in (tuple, list):
        return pytree.SequenceKey(i)
    if hasattr(t._type, "_fields"):
        return pytree.GetAttrKey(t._type._fields[i])
    return pytree.FlattenedIndexKey(i)
