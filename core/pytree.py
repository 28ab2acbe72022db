"""Pytrees: flatten nested containers into leaves plus a PyTreeDef, as jax.tree_util does."""

from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, Hashable, Iterable, Sequence

from . import errors

__all__ = [
    "PyTreeDef", "DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey", "Partial",
    "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
    "tree_reduce", "tree_all", "tree_transpose", "treedef_is_leaf", "treedef_children",
    "treedef_tuple", "all_leaves", "keystr", "tree_flatten_with_path",
    "tree_leaves_with_path", "tree_map_with_path", "register_pytree_node",
    "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_dataclass", "register_static",
]


# ---------------------------------------------------------------------------
# Key path entries
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """Key path entry for a child of a mapping; prints as ``['a']``."""
    key: Hashable

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """Key path entry for a child of a tuple or list; prints as ``[0]``."""
    idx: int

    def __str__(self):
        return f"[{self.idx}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Key path entry for an attribute (namedtuple field, dataclass field); prints as ``.name``."""
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Key path entry for the i-th child of a custom node registered without keys."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys: Sequence[Any], *, simple: bool = False, separator: str = "") -> str:
    """Join the string forms of a key path, e.g. ``['a'][0].x`` (or ``a/0/x`` when simple)."""
    return separator.join(map(_simple_entrystr if simple else str, keys))


def _simple_entrystr(key: Any) -> str:
    """The bare key of a key entry: ``a`` for DictKey('a'), ``0`` for SequenceKey(0)."""
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, (DictKey, FlattenedIndexKey)):
        return str(key.key)
    if isinstance(key, GetAttrKey):
        return str(key.name)
    return str(key)


# ---------------------------------------------------------------------------
# Node handlers: how each kind of node flattens, unflattens and prints
# ---------------------------------------------------------------------------

class _NodeHandler:
    """How one kind of pytree node is flattened, rebuilt and printed.

    flatten(x) -> (children, data); flatten_with_keys(x) -> ((key, child) pairs, data);
    unflatten(node_type, data, children) -> node; format(node_type, data, child_strs) -> str.
    `kind` names the node in structure-mismatch messages.
    """
    __slots__ = ("kind", "flatten", "flatten_with_keys", "unflatten", "format")

    def __init__(self, kind, flatten, flatten_with_keys, unflatten, format):
        self.kind = kind
        self.flatten = flatten
        self.flatten_with_keys = flatten_with_keys
        self.unflatten = unflatten
        self.format = format


def _sequence_with_keys(x):
    return [(SequenceKey(i), c) for i, c in enumerate(x)], None


def _sorted_keys(d) -> list:
    try:
        return sorted(d)
    except TypeError as e:
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], tuple(keys)


def _flatten_dict_with_keys(d):
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], tuple(keys)


def _format_tuple(_t, _data, cs):
    return "(" + ", ".join(cs) + (",)" if len(cs) == 1 else ")")


def _format_dict(_t, keys, cs):
    return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(keys, cs)) + "}"


def _format_custom(node_type, data, cs):
    return f"CustomNode({node_type.__name__}[{data}], [{', '.join(cs)}])"


def _format_namedtuple(node_type, _data, cs):
    return f"CustomNode(namedtuple[{node_type.__name__}], [{', '.join(cs)}])"


_TUPLE = _NodeHandler(
    "tuple", lambda x: (x, None), _sequence_with_keys,
    lambda _t, _d, cs: tuple(cs), _format_tuple)
_LIST = _NodeHandler(
    "list", lambda x: (x, None), _sequence_with_keys,
    lambda _t, _d, cs: cs, lambda _t, _d, cs: "[" + ", ".join(cs) + "]")
_DICT = _NodeHandler(
    "dict", _flatten_dict, _flatten_dict_with_keys,
    lambda _t, keys, cs: dict(zip(keys, cs)), _format_dict)
_NONE = _NodeHandler(
    "None", lambda x: ((), None), lambda x: ((), None),
    lambda _t, _d, _cs: None, lambda _t, _d, _cs: "None")
_NAMEDTUPLE = _NodeHandler(
    "named tuple", lambda x: (x, None),
    lambda x: ([(GetAttrKey(f), c) for f, c in zip(type(x)._fields, x)], None),
    lambda t, _d, cs: t(*cs), _format_namedtuple)


def _checked_flatten(flatten_func):
    """flatten_func, checked to return a (children, aux_data) pair, as JAX checks it."""
    def flatten(x):
        out = flatten_func(x)
        if not (isinstance(out, tuple) and len(out) == 2 and hasattr(out[0], "__iter__")):
            raise ValueError(errors.bad_to_iterable(out))
        return out
    return flatten


def _custom_handler(flatten_func, unflatten_func, flatten_with_keys_func=None) -> _NodeHandler:
    """Handler for a user-registered node type; keys default to FlattenedIndexKey(i)."""
    flatten_func = _checked_flatten(flatten_func)
    if flatten_with_keys_func is None:
        def flatten_with_keys_func(x):
            children, aux = flatten_func(x)
            return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
    return _NodeHandler(
        "custom", flatten_func, flatten_with_keys_func,
        lambda _t, aux, cs: unflatten_func(aux, tuple(cs)), _format_custom)


# The registry: exact type -> handler. Subclasses of registered types are leaves,
# except tuple subclasses with `_fields` (namedtuples), handled by _NAMEDTUPLE.
_registry: dict[type, _NodeHandler] = {
    tuple: _TUPLE, list: _LIST, dict: _DICT, type(None): _NONE,
}


def _handler_for(x) -> _NodeHandler | None:
    """The handler for node `x`, or None if `x` is a leaf."""
    handler = _registry.get(type(x))
    if handler is None and isinstance(x, tuple) and hasattr(x, "_fields"):
        return _NAMEDTUPLE
    return handler


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------

class PyTreeDef:
    """Immutable, hashable description of a pytree's structure (everything but the leaves).

    A node holds its handler, Python type, static node data (dict keys, custom aux data)
    and child PyTreeDefs; a leaf has no handler (all leaves share one instance). Build
    them with tree_structure / tree_flatten; the constructor is internal.
    """
    __slots__ = ("_handler", "_type", "_data", "_children", "_num_leaves", "_num_nodes",
                 "_hash")

    def __init__(self, handler: _NodeHandler | None, node_type: type | None, data: Any,
                 children: tuple[PyTreeDef, ...]):
        self._handler = handler
        self._type = node_type
        self._data = data
        self._children = children
        self._hash = None
        if handler is None:
            self._num_leaves = self._num_nodes = 1
            return
        num_leaves, num_nodes = 0, 1
        for c in children:
            num_leaves += c._num_leaves
            num_nodes += c._num_nodes
        self._num_leaves, self._num_nodes = num_leaves, num_nodes

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # -- inspection --------------------------------------------------------

    @property
    def num_leaves(self) -> int:
        """Number of leaves."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes, counting leaves, None and empty containers."""
        return self._num_nodes

    def children(self) -> list[PyTreeDef]:
        """The PyTreeDefs of this node's immediate children (empty for a leaf)."""
        return list(self._children)

    def node_data(self):
        """``(type, data)`` of the root node as in JAX (dict data: key list); None for a leaf."""
        if self._handler is None:
            return None
        if self._handler is _DICT:
            return (dict, list(self._data))
        return (self._type, self._data)

    # -- (un)flattening ----------------------------------------------------

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build the pytree of this structure with the given leaves (in flattening order)."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self._num_leaves:
            few_or_many = "few" if len(leaves) < self._num_leaves else "many"
            raise ValueError(f"Too {few_or_many} leaves for PyTreeDef; expected "
                             f"{self._num_leaves}, got {len(leaves)}.")
        return _unflatten(self, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten `tree` down to this structure: the subtrees at this treedef's leaves.

        Raises ValueError if this treedef is not a prefix of `tree`'s structure.
        """
        try:
            return _flatten_up_to(self, tree)
        except _PrefixMismatch as e:
            where = f" (at key path {keystr(e.path())})" if e.reversed_path else ""
            raise ValueError(e.detail + where) from None

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The structure obtained by putting `inner` at every leaf of this structure."""
        if self._handler is None:
            return inner
        return PyTreeDef(self._handler, self._type, self._data,
                         tuple([c.compose(inner) for c in self._children]))

    # -- equality, hashing, printing ----------------------------------------

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if (self._type is not other._type or self._num_nodes != other._num_nodes
                or self._num_leaves != other._num_leaves):
            return False
        return bool(self._data == other._data) and self._children == other._children

    def __hash__(self):
        if self._hash is None:
            # Custom node data may be unhashable, so (like JAX) only dict keys are hashed.
            keys = self._data if self._handler is _DICT else None
            self._hash = hash((self._type, keys, self._children))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._format()})"

    def _format(self) -> str:
        if self._handler is None:
            return "*"
        return self._handler.format(self._type, self._data, [c._format() for c in self._children])


_LEAF = PyTreeDef(None, None, None, ())


def _unflatten(treedef: PyTreeDef, leaves):
    """Rebuild a tree from a leaf iterator (its length was checked by the caller)."""
    handler = treedef._handler
    if handler is None:
        return next(leaves)
    children = [_unflatten(c, leaves) for c in treedef._children]
    return handler.unflatten(treedef._type, treedef._data, children)


# ---------------------------------------------------------------------------
# flatten_up_to and its structure-mismatch errors
# ---------------------------------------------------------------------------

class _PrefixMismatch(Exception):
    """Internal: a tree does not match a treedef; collects the key path while unwinding."""

    def __init__(self, detail: str, kind: str = "different types"):
        super().__init__(detail)
        self.detail, self.kind = detail, kind  # kind: JAX's name for the mismatch
        self.reversed_path: list[Any] = []

    def path(self) -> tuple:
        return tuple(reversed(self.reversed_path))


def _flatten_up_to(treedef: PyTreeDef, tree) -> list:
    out: list = []
    _flatten_up_to_into(treedef, tree, out)
    return out


def _flatten_up_to_into(treedef: PyTreeDef, x, out: list) -> None:
    if treedef._handler is None:
        out.append(x)
        return
    children = _matching_children(treedef, x)
    for i, child_def in enumerate(treedef._children):
        try:
            _flatten_up_to_into(child_def, children[i], out)
        except _PrefixMismatch as e:
            keyed_children, _ = treedef._handler.flatten_with_keys(x)
            e.reversed_path.append(list(keyed_children)[i][0])
            raise


def _matching_children(treedef: PyTreeDef, x) -> Sequence[Any]:
    """The children of node `x`, after checking its type, node data and arity match `treedef`."""
    handler, node_type = treedef._handler, treedef._type
    if type(x) is not node_type:
        raise _PrefixMismatch(_type_mismatch_message(treedef, x))
    children, data = handler.flatten(x)
    if not isinstance(children, (list, tuple)):
        children = tuple(children)
    if handler is _DICT and data != treedef._data:
        raise _PrefixMismatch(f"Dict key mismatch; expected keys: {list(treedef._data)}; "
                              f"present keys: {list(data)}.", "different keys")
    if handler.kind == "custom" and not bool(data == treedef._data):
        raise _PrefixMismatch(f"Mismatch custom node data: {treedef._data} != {data}; "
                              f"value: {x!r}.", "different pytree metadata")
    if len(children) != len(treedef._children):
        name, what = {"tuple": ("Tuple", "tuple"), "list": ("List", "list")}.get(
            handler.kind, ("Custom type", "value"))
        raise _PrefixMismatch(f"{name} arity mismatch: {len(children)} != "
                              f"{len(treedef._children)}; {what}: {x!r}.", "different lengths")
    return children


def _type_mismatch_message(treedef: PyTreeDef, x) -> str:
    kind = treedef._handler.kind
    if kind == "custom":
        return f"Custom node type mismatch; expected type: {treedef._type}; value: {x!r}."
    if kind == "named tuple" and _handler_for(x) is _NAMEDTUPLE:
        return f"Named tuple type mismatch: expected type: {treedef._type}, tuple: {x!r}."
    return f"Expected {kind}, got {x!r}."


def _flatten_rest(treedef: PyTreeDef, rest: tuple, fn_name: str) -> list[list]:
    """flatten_up_to of every tree in `rest`, with a tree_map style error naming both structures."""
    out = []
    for i, tree in enumerate(rest):
        try:
            out.append(_flatten_up_to(treedef, tree))
        except _PrefixMismatch as e:
            raise ValueError(_rest_mismatch_message(fn_name, treedef, tree, i, e)) from None
    return out


def _rest_mismatch_message(fn_name, treedef, tree, i, e: _PrefixMismatch) -> str:
    try:
        other = repr(tree_structure(tree))
    except Exception as err:  # the other tree might not even be flattenable
        other = f"<unflattenable: {err}>"
    where = keystr(e.path()) or "the root"
    return (f"{fn_name}: the structure of rest[{i}] does not match the first tree "
            f"(the first tree's structure must be a prefix of it).\n"
            f"  tree structure:    {treedef!r}\n"
            f"  rest[{i}] structure: {other}\n"
            f"  mismatch at {where}: {e.detail}\n  (pytree structure error: {e.kind})")


# ---------------------------------------------------------------------------
# Flattening
# ---------------------------------------------------------------------------

def _flatten(x, is_leaf, leaves: list) -> PyTreeDef:
    """Append the leaves of `x` to `leaves` and return its PyTreeDef (the hot path)."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    node_type = type(x)
    handler = _registry.get(node_type)
    if handler is None:
        if not (isinstance(x, tuple) and hasattr(x, "_fields")):
            leaves.append(x)
            return _LEAF
        handler = _NAMEDTUPLE
    children, data = handler.flatten(x)
    return PyTreeDef(handler, node_type, data,
                     tuple([_flatten(c, is_leaf, leaves) for c in children]))


def _flatten_with_path(x, is_leaf, path: tuple, out: list) -> PyTreeDef:
    """Like _flatten, appending (key path, leaf) pairs; `is_leaf` takes (path, x)."""
    if is_leaf is not None and is_leaf(path, x):
        out.append((path, x))
        return _LEAF
    handler = _handler_for(x)
    if handler is None:
        out.append((path, x))
        return _LEAF
    keyed_children, data = handler.flatten_with_keys(x)
    return PyTreeDef(handler, type(x), data, tuple(
        [_flatten_with_path(c, is_leaf, (*path, k), out) for k, c in keyed_children]))


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """Flatten `tree` into its list of leaves and its PyTreeDef.

    `is_leaf(x)` returning True stops the recursion at `x` (making it a leaf, even None).
    """
    leaves: list = []
    treedef = _flatten(tree, is_leaf, leaves)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from its structure and leaves (inverse of tree_flatten)."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of `tree`, in flattening order."""
    leaves: list = []
    _flatten(tree, is_leaf, leaves)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The PyTreeDef of `tree`."""
    return _flatten(tree, is_leaf, [])


def _path_predicate(is_leaf, is_leaf_takes_path: bool):
    if is_leaf is None or is_leaf_takes_path:
        return is_leaf
    return lambda _path, x: is_leaf(x)


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    """Flatten `tree` into ``[(key_path, leaf), ...]`` and its PyTreeDef.

    `is_leaf` takes the node (or ``(key_path, node)`` if `is_leaf_takes_path`).
    """
    out: list = []
    treedef = _flatten_with_path(tree, _path_predicate(is_leaf, is_leaf_takes_path), (), out)
    return out, treedef


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[tuple, Any]]:
    """The ``(key_path, leaf)`` pairs of `tree`, in flattening order."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


# ---------------------------------------------------------------------------
# Mapping and reducing
# ---------------------------------------------------------------------------

def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply `f` to corresponding leaves of `tree` and `rest`, returning a tree like `tree`.

    The structure of `tree` must be a prefix of each tree in `rest` (a leaf of `tree`
    pairs with a whole subtree of the others); otherwise ValueError.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves, *_flatten_rest(treedef, rest, "tree_map")]
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like tree_map, but calls ``f(key_path, leaf, *rest_leaves)``."""
    path_leaves, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    rest_leaves = _flatten_rest(treedef, rest, "tree_map_with_path")
    return treedef.unflatten(
        [f(p, x, *xs) for (p, x), *xs in zip(path_leaves, *rest_leaves)])


class _Unspecified:
    """Sentinel type: no initializer given to tree_reduce."""


_NO_INITIALIZER = _Unspecified()


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any,
                initializer: Any = _NO_INITIALIZER,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """functools.reduce of `function` over the leaves of `tree`."""
    leaves = tree_leaves(tree, is_leaf)
    if isinstance(initializer, _Unspecified):
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every leaf of `tree` is truthy (True for a tree with no leaves)."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn an outer-of-inner tree into an inner-of-outer tree.

    `inner_treedef` None means: infer it from the first outer subtree.
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    subtrees = [outer_treedef.unflatten(column) for column in zip(*rows)]
    return inner_treedef.unflatten(subtrees)


# ---------------------------------------------------------------------------
# Treedef helpers
# ---------------------------------------------------------------------------

def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True if `treedef` has a single node (a leaf, None, or an empty container)."""
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The PyTreeDefs of the root's immediate children."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The PyTreeDef of a tuple whose children have the given structures."""
    return PyTreeDef(_TUPLE, tuple, None, tuple(treedefs))


def all_leaves(iterable: Iterable[Any],
               is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every element of `iterable` is a leaf (None is not: it is an empty node)."""
    if is_leaf is None:
        return all(_handler_for(x) is None for x in iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------

def _register(nodetype: type, handler: _NodeHandler) -> None:
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = handler


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Make `nodetype` a pytree node.

    ``flatten_func(x) -> (children, aux_data)`` and ``unflatten_func(aux_data, children) -> x``;
    aux_data is static and compared with ``==``. Optional
    ``flatten_with_keys_func(x) -> (((key, child), ...), aux_data)`` gives key paths
    (default: FlattenedIndexKey). Registering a type twice raises ValueError.
    """
    _register(nodetype, _custom_handler(flatten_func, unflatten_func, flatten_with_keys_func))


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Make `nodetype` a node flattened by ``flatten_with_keys(x) -> (((key, child), ...), aux)``.

    `flatten_func` (children without keys, same order and aux) is an optional fast path.
    """
    if flatten_func is None:
        def flatten_func(x):
            keyed_children, aux = flatten_with_keys(x)
            return [c for _, c in keyed_children], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register `cls` using its ``tree_flatten`` method and
    ``tree_unflatten(aux, children)`` classmethod."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: register `cls` using its ``tree_flatten_with_keys`` method,
    ``tree_unflatten`` classmethod and (if defined) ``tree_flatten`` method."""
    flatten_func = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flatten_func)
    return cls


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type:
    """Register a dataclass-like type: `data_fields` are children, `meta_fields` static aux data.

    For a dataclass both may be omitted: fields whose metadata has ``static=True`` are
    meta, the rest data. Usable as a decorator; returns `nodetype`.
    """
    data_fields, meta_fields = _dataclass_fields(nodetype, data_fields, meta_fields, drop_fields)

    def flatten(x):
        return (tuple(getattr(x, name) for name in data_fields),
                tuple(getattr(x, name) for name in meta_fields))

    def flatten_with_keys(x):
        return (tuple((GetAttrKey(name), getattr(x, name)) for name in data_fields),
                tuple(getattr(x, name) for name in meta_fields))

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten, flatten)
    return nodetype


def _dataclass_fields(nodetype, data_fields, meta_fields, drop_fields):
    """Infer and validate register_dataclass's (data_fields, meta_fields) as tuples."""
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                            f"specified when either is specified. Got {data_fields=} "
                            f"{meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required "
                            f"when nodetype is not a dataclass. Got {nodetype=}.")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        given = {*meta_fields, *data_fields}
        if given != init_fields:
            msg = ("data_fields and meta_fields must include all dataclass fields with "
                   "``init=True`` and only them.")
            if missing := init_fields - given:
                msg += (f" Missing fields: {missing}. Add them to drop_fields to suppress "
                        "this error.")
            if unexpected := given - init_fields:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError("data_fields and meta_fields must not overlap. Overlapping fields: "
                         f"{overlap}.")
    return data_fields, meta_fields


def register_static(cls: type) -> type:
    """Register `cls` as a node with no children: each instance is its own (hashable) aux data."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _children: x)
    return cls


register_pytree_with_keys(
    collections.OrderedDict,
    lambda x: (tuple((DictKey(k), v) for k, v in x.items()), tuple(x)),
    lambda keys, values: collections.OrderedDict(zip(keys, values)),
    lambda x: (tuple(x.values()), tuple(x)),
)


def _flatten_defaultdict_with_keys(d):
    keys = tuple(_sorted_keys(d))
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


def _flatten_defaultdict(d):
    keys = tuple(_sorted_keys(d))
    return tuple(d[k] for k in keys), (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict,
    _flatten_defaultdict_with_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)),
    _flatten_defaultdict,
)


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------

class _HashableCallableShim:
    """Wraps a partial so functools.partial does not merge it into an outer Partial."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self):
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """A functools.partial that is a pytree: `func` is static aux data, args and keywords
    are children (so they may be traced)."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            # partial.__new__ would merge a partial `func` into this one, changing which
            # arguments are children; box it so the inner partial stays static.
            original = func
            func = _HashableCallableShim(original)
            out = super().__new__(cls, func, *args, **kw)
            func.func, func.args, func.keywords = original.func, original.args, original.keywords
            return out
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)


def broadcast_prefix(what, tree, prefix, is_leaf):
    """The leaf of the pytree `prefix` (leaves as decided by is_leaf) that stands for each leaf
    of `tree`, in order: how in_axes, out_specs, shardings... given for whole subtrees apply to
    their leaves. ValueError naming `what` when prefix is not a tree prefix of tree."""
    prefix_def = tree_structure(prefix, is_leaf=is_leaf)
    try:
        subtrees = _flatten_up_to(prefix_def, tree)
    except _PrefixMismatch as e:  # JAX's wording, with the key path of the first mismatch
        raise ValueError(errors.prefix_mismatch(what, prefix, tree_structure(tree), e.kind,
                                                keystr(e.path()), e.detail)) from None
    out = []
    for spec, sub in zip(tree_leaves(prefix, is_leaf=is_leaf), subtrees):
        out.extend([spec] * len(tree_leaves(sub)))
    return out
