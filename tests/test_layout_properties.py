"""Layout properties over random meshes, on both backends.

Random meshes (1-3 axes, at most 8 devices, random device orders, built with `Mesh` or
`make_mesh`) and random partition specs; every property is checked on numpy_ref and on xla
and against a truth that does not come from the code under test:

(a) device_put: each addressable shard's device and index (the layout) and replica id
    equal between the backends, equal to `sharding.devices_indices_map(shape)` and to real
    JAX's for the same mesh and spec; shard data equal to the global array sliced; resharding
    to another mesh or a single device too.
(b) jit programs over two meshes (elementwise ops, sums over an axis, dot, transpose,
    reshape, sharding constraints, in_shardings/out_shardings): values equal across
    backends, eager and jit, and to NumPy; layouts equal shard by shard between the backends
    (xla places outputs as core/sharding_propagation.py says) and between eager and jit;
    each eager op's layout as DESIGN.md's rules (restated here) give it; a pinned output
    layout (out_shardings or a final constraint) equal to real JAX's; a program over meshes
    on different device sets is refused (or run) eagerly and under jit as JAX does. Single-device
    placement (device_put to a device, SingleDeviceSharding constraints and out_shardings)
    is compared with real JAX's eager and jit placement.
(c) random shard_map bodies with collectives: values equal across backends, eager and jit,
    and to real JAX's jax.shard_map; gradients equal across backends and to real JAX's; vmap
    equal to a Python loop; output layouts equal to the out specs' and to real JAX's.
"""
import math
from typing import NamedTuple

import jax as real_jax
import jax.sharding as jsh
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax_recordings import fingerprint, recorded

import refjax
import refjax.numpy as rnp
from refjax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding

BACKENDS = ("numpy_ref", "xla")
NAMES = ("x", "y", "z")
RDEVS = refjax.devices()
JDEVS = sorted(real_jax.devices("cpu"), key=lambda d: d.id)
assert len(JDEVS) == len(RDEVS) == 8, "tests/conftest.py sets 8 CPU devices for real JAX"


def at_least(n):
    """At least n examples (the ci profile's 8 leave random meshes too thin), or the loaded
    profile's budget if larger (a per-test setting: other modules' profile is untouched)."""
    return settings(max_examples=max(n, settings.default.max_examples))


# ---------------------------------------------------------------- layouts

def layout(a):
    """device id -> per-dimension (start, stop) of its shard's global index."""
    return {s.device.id: _norm(s.index, a.shape) for s in a.addressable_shards}


def _norm(index, shape):
    return tuple(sl.indices(n)[:2] for sl, n in zip(index, shape))


def expected_layout(sharding, shape):
    """The layout a sharding prescribes, from devices_indices_map alone."""
    return {d.id: _norm(idx, shape) for d, idx in sharding.devices_indices_map(shape).items()}


def check_shards(a, value=None):
    """Every shard holds the global value sliced at its index."""
    value = np.asarray(a) if value is None else value
    for s in a.addressable_shards:
        np.testing.assert_array_equal(np.asarray(s.data), value[s.index])


def check_self_consistent(a):
    """The layout is the one the array's own sharding prescribes, and the data fits it."""
    assert layout(a) == expected_layout(a.sharding, a.shape), a.sharding
    check_shards(a)


def close(a, b, tol=1e-4):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale)


# ---------------------------------------------------------------- meshes and specs

class MeshDesc(NamedTuple):
    ids: tuple      # device ids in mesh order (row-major)
    sizes: tuple
    names: tuple
    how: str        # "Mesh" or "make_mesh"


@st.composite
def meshes(draw, max_axes=3):
    ndim = draw(st.integers(1, max_axes))
    sizes = []
    for _ in range(ndim):
        used = math.prod(sizes)
        sizes.append(draw(st.sampled_from([s for s in (1, 2, 3, 4, 8) if used * s <= 8])))
    ids = draw(st.permutations(range(8)))[:math.prod(sizes)]
    names = tuple(draw(st.permutations(NAMES))[:ndim])
    return MeshDesc(tuple(ids), tuple(sizes), names, draw(st.sampled_from(["Mesh", "make_mesh"])))


def ref_mesh(desc):
    devs = [RDEVS[i] for i in desc.ids]
    if desc.how == "make_mesh":
        return refjax.make_mesh(desc.sizes, desc.names, devices=devs)
    return Mesh(np.array(devs, dtype=object).reshape(desc.sizes), desc.names)


def real_mesh(mesh):
    """Real JAX's mesh over the same device ids in the same order (Auto axes, as refjax's)."""
    devs = np.array([JDEVS[i] for i in np.asarray(mesh.device_ids).flat], dtype=object)
    return jsh.Mesh(devs.reshape(mesh.devices.shape), mesh.axis_names,
                    axis_types=(jsh.AxisType.Auto,) * len(mesh.axis_names))


def real_sharding(s):
    if isinstance(s, SingleDeviceSharding):
        return jsh.SingleDeviceSharding(JDEVS[s._device.id])
    return jsh.NamedSharding(real_mesh(s.mesh), jsh.PartitionSpec(*s.spec))


@st.composite
def placements(draw, desc, shape):
    """Per dimension, the mesh axes sharding it (each axis at most once, every dimension
    divisible by the product of its axes' sizes), in a random order."""
    dims = [[] for _ in shape]
    for name, size in zip(desc.names, desc.sizes):
        fits = [d for d in range(len(shape))
                if (shape[d] // math.prod(desc.sizes[desc.names.index(a)] for a in dims[d]))
                % size == 0]
        where = draw(st.sampled_from([None] + fits))
        if where is not None:
            dims[where].append(name)
    return [draw(st.permutations(axes)) for axes in dims]


@st.composite
def specs_for(draw, desc, shape):
    """A random PartitionSpec for `shape` on the mesh: None, a name or a tuple of names per
    dimension, trailing Nones sometimes left out."""
    entries = []
    for axes in draw(placements(desc, shape)):
        if not axes:
            entries.append(None)
        elif len(axes) == 1 and draw(st.booleans()):
            entries.append(axes[0])
        else:
            entries.append(tuple(axes))
    while entries and entries[-1] is None and draw(st.booleans()):
        entries.pop()
    return P(*entries)


@st.composite
def shapes_for(draw, desc, rank):
    """A shape of the given rank whose dimensions the mesh's axes can split."""
    return tuple(draw(st.sampled_from([1, 2, 3])) * draw(st.sampled_from(
        [1] + sorted({math.prod(c) for c in _subsets(desc.sizes)}))) for _ in range(rank))


def _subsets(sizes):
    out = [()]
    for s in sizes:
        out += [c + (s,) for c in out]
    return out


def values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


# ---------------------------------------------------------------- (a) device_put

@at_least(50)
@given(st.data())
def test_device_put_layouts_match_devices_indices_map_and_jax(data):
    desc = data.draw(meshes(), "mesh")
    shape = data.draw(shapes_for(desc, data.draw(st.integers(0, 3))), "shape")
    spec = data.draw(specs_for(desc, shape), "spec")
    dtype = data.draw(st.sampled_from([np.float32, np.int32, np.bool_]))
    x = values(shape, dtype, len(shape))
    sharding = NamedSharding(ref_mesh(desc), spec)
    # a second target, to reshard to: another random mesh and spec, or one device
    desc2 = data.draw(meshes(), "mesh2")
    target = data.draw(st.one_of(
        specs_for(desc2, shape).map(lambda s: NamedSharding(ref_mesh(desc2), s)),
        st.sampled_from(RDEVS).map(SingleDeviceSharding)), "target")

    want = expected_layout(sharding, shape)
    real = real_jax.device_put(x, real_sharding(sharding))
    assert layout(real) == want, (sharding, shape)
    real_replicas = {s.device.id: s.replica_id for s in real.addressable_shards}
    for name in BACKENDS:
        with refjax.backend(name):
            a = refjax.device_put(x, sharding)
            assert a.sharding == sharding and a.dtype == dtype and a.shape == shape
            assert layout(a) == want, name
            assert {s.device.id: s.replica_id for s in a.addressable_shards} == real_replicas
            check_shards(a, x)
            np.testing.assert_array_equal(np.asarray(a), x)
            b = refjax.device_put(a, target)
            assert b.sharding == target
            assert layout(b) == expected_layout(target, shape), name
            check_shards(b, x)


# ---------------------------------------------------------------- (b) jit programs

class Program(NamedTuple):
    """A chain of ops on x. Every sharding is (k, spec): spec on the program's mesh k (0 or
    1), or None (unsharded); x_put places x before the call."""
    x_shape: tuple
    x_put: object
    in_sharding: object  # jit in_shardings for x
    ops: tuple           # ("sin",) ("custom_sin",) ("affine",) ("add", s) ("sum", axis)
                         # ("dot", k, s) ("transpose",) ("flatten",) ("constrain", s)
    out_sharding: object  # jit out_shardings


@st.composite
def mesh_pairs(draw):
    """The program's two meshes: the second over the same devices in the same order
    reshaped (as JAX allows within one computation), or in another order, or any other mesh
    (refjax, unlike JAX, moves values between them)."""
    first = draw(meshes())
    n = len(first.ids)
    same = draw(st.booleans())
    if not same:
        return first, draw(meshes())
    sizes = []
    for _ in range(draw(st.integers(1, 3)) - 1):
        sizes.append(draw(st.sampled_from([d for d in (1, 2, 4, 8)
                                           if (n // math.prod(sizes)) % d == 0])))
    sizes.append(n // math.prod(sizes))
    ids = first.ids if draw(st.booleans()) else tuple(draw(st.permutations(first.ids)))
    names = tuple(draw(st.permutations(NAMES))[:len(sizes)])
    return first, MeshDesc(ids, tuple(sizes), names, draw(st.sampled_from(["Mesh", "make_mesh"])))


def _sharding_desc(draw, descs, shape, optional=True):
    k = draw(st.sampled_from([0, 0, 1]))
    spec = draw(specs_for(descs[k], shape))
    return None if optional and draw(st.integers(0, 2)) == 0 else (k, spec)


@st.composite
def programs(draw, descs):
    shape = draw(shapes_for(descs[0], 2))
    x_put, in_sharding = _sharding_desc(draw, descs, shape), _sharding_desc(draw, descs, shape)
    ops, cur = [], shape
    for _ in range(draw(st.integers(1, 4))):
        kinds = ["sin", "custom_sin", "affine", "add", "constrain"]
        kinds += ["sum", "dot"] if cur else []
        kinds += ["transpose", "flatten"] if len(cur) == 2 else []
        kind = draw(st.sampled_from(kinds))
        if kind == "add":
            op = (kind, _sharding_desc(draw, descs, cur))
        elif kind == "constrain":
            op = (kind, _sharding_desc(draw, descs, cur, optional=False))
        elif kind == "sum":
            op = (kind, draw(st.integers(0, len(cur) - 1)))
        elif kind == "dot":
            k = draw(shapes_for(descs[0], 1))[0]
            op = (kind, k, _sharding_desc(draw, descs, (cur[-1], k)))
        else:
            op = (kind,)
        ops.append(op)
        cur = _shape_after(op, cur)
    return Program(shape, x_put, in_sharding, tuple(ops), _sharding_desc(draw, descs, cur))


def _shape_after(op, shape):
    kind = op[0]
    if kind == "sum":
        return shape[:op[1]] + shape[op[1] + 1:]
    if kind == "dot":
        return shape[:-1] + (op[1],)
    if kind == "transpose":
        return shape[::-1]
    if kind == "flatten":
        return (math.prod(shape),)
    return shape


def program_args(prog, seed):
    """x, then one operand per add/dot op (NumPy values)."""
    rng = np.random.default_rng(seed)
    args, cur = [rng.normal(size=prog.x_shape).astype(np.float32)], prog.x_shape
    for op in prog.ops:
        if op[0] == "add":
            args.append(rng.normal(size=cur).astype(np.float32))
        elif op[0] == "dot":
            args.append(rng.normal(size=(cur[-1], op[1])).astype(np.float32))
        cur = _shape_after(op, cur)
    return args


def operand_puts(prog):
    return [prog.x_put] + [op[-1] for op in prog.ops if op[0] in ("add", "dot")]


def program_shardings(prog):
    return operand_puts(prog) + [prog.in_sharding, prog.out_sharding] + [
        op[1] for op in prog.ops if op[0] == "constrain"]


def program_numpy(prog, args):
    """The program's value, by NumPy in float64 (the independent truth for values)."""
    v, rest = np.asarray(args[0], np.float64), iter(args[1:])
    for op in prog.ops:
        kind = op[0]
        if kind in ("sin", "custom_sin"):
            v = np.sin(v)
        elif kind == "affine":
            v = 2 * v + 1
        elif kind == "add":
            v = v + next(rest)
        elif kind == "sum":
            v = v.sum(op[1])
        elif kind == "dot":
            v = v @ next(rest)
        elif kind == "transpose":
            v = v.T
        elif kind == "flatten":
            v = v.reshape(-1)
    return v


def program_fn(prog, lib, named, check=None):
    """The program written against `lib` (refjax or real jax); named(desc) builds that
    library's sharding from a sharding description; check(op, before, operand, after) is
    called after each op."""
    np_, lax = lib.numpy, lib.lax

    def fn(x, *operands):
        v, rest = x, iter(operands)
        for op in prog.ops:
            kind, before = op[0], v
            operand = next(rest) if kind in ("add", "dot") else None
            if kind == "sin":
                v = np_.sin(v)
            elif kind == "custom_sin":
                v = custom_sin(lib)(v)
            elif kind == "affine":
                v = 2 * v + 1
            elif kind == "add":
                v = v + operand
            elif kind == "sum":
                v = v.sum(axis=op[1])
            elif kind == "dot":
                v = v @ operand
            elif kind == "transpose":
                v = v.T
            elif kind == "flatten":
                v = v.reshape(-1)
            else:
                v = lax.with_sharding_constraint(v, named(op[1]))
            if check is not None:
                check(op, before, operand, v)
        return v
    return fn


def custom_sin(lib):
    """sin as a custom_jvp function: a call primitive whose layout is its jaxpr's."""
    @lib.custom_jvp
    def f(v):
        return lib.numpy.sin(v)
    f.defjvp(lambda primals, tangents: (f(primals[0]), lib.numpy.cos(primals[0]) * tangents[0]))
    return f


def _entries(sharding, ndim):
    """Per-dimension entries of a NamedSharding's spec, or None (not on a mesh)."""
    if not isinstance(sharding, NamedSharding):
        return None
    parts = tuple(sharding.spec)
    return parts + (None,) * (ndim - len(parts))


def _axes(entry):
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def expected_sharding(op, before, operand, named):
    """The output sharding DESIGN.md's rules give one op, from its operands' actual
    shardings (written out here independently of core/sharding_propagation.py)."""
    kind, s, shape = op[0], before.sharding, before.shape
    if kind == "constrain":
        return named(op[1])
    if kind in ("sin", "custom_sin", "affine"):
        return s  # elementwise with scalars (a custom_jvp call of one too): the operand's
    if kind == "add":  # the first mesh wins; consensus of the sharded operands on it
        t = operand.sharding
        mesh = s.mesh if isinstance(s, NamedSharding) else getattr(t, "mesh", None)
        if mesh is None:
            return s if isinstance(s, SingleDeviceSharding) and s._device.id else t
        specs = [_entries(x, len(shape)) for x in (s, t) if getattr(x, "mesh", None) == mesh]
        return NamedSharding(mesh, P(*_merged(specs)) if shape else P())
    if not isinstance(s, NamedSharding) and not (
            kind == "dot" and isinstance(operand.sharding, NamedSharding)):
        return s
    mesh = s.mesh if isinstance(s, NamedSharding) else operand.sharding.mesh
    e = _entries(s, len(shape)) if getattr(s, "mesh", None) == mesh else (None,) * len(shape)
    if kind == "sum":  # the reduced dimension's axes are dropped
        return NamedSharding(mesh, P(*(e[:op[1]] + e[op[1] + 1:])))
    if kind == "transpose":
        return NamedSharding(mesh, P(*e[::-1]))
    if kind == "flatten":  # only an unsplit dimension keeps its axes
        m, n = shape
        return NamedSharding(mesh, P(e[1] if m == 1 else e[0] if n == 1 else None))
    # dot: v's free dimensions then w's; a mesh axis used twice is dropped the second time
    w = operand.sharding
    f = _entries(w, 2) if getattr(w, "mesh", None) == mesh else (None, None)
    out, seen = [], set()
    for entry in e[:-1] + (f[1],):
        out.append(None if seen & set(_axes(entry)) else entry)
        seen |= set(_axes(entry))
    return NamedSharding(mesh, P(*out))


def _merged(specs):
    """JAX's merge of two operands' layouts (seen in JAX: test_sharding_jit.py's cases): a
    dimension whose entries clash is replicated; an axis left in two dimensions stays where
    the first operand has it."""
    if len(specs) == 1:
        return list(specs[0])
    a, b = specs
    agreed = [x if y is None or x == y else y if x is None else None for x, y in zip(a, b)]
    firsts = {ax for e, x in zip(agreed, a) if e is not None and e == x for ax in _axes(e)}
    return [e if e is None or e == x or not firsts & set(_axes(e)) else None
            for e, x in zip(agreed, a)]


def _jit_kwargs(prog, nargs, named):
    kwargs = {}
    if prog.in_sharding is not None:
        kwargs["in_shardings"] = (named(prog.in_sharding),) + (None,) * (nargs - 1)
    if prog.out_sharding is not None:
        kwargs["out_shardings"] = named(prog.out_sharding)
    return kwargs


def _refjax_run(prog, meshes_, args, eager, puts=None):
    """Run the program on the current backend; eagerly, in/out shardings are the
    constraints jit applies."""
    def named(d):
        return NamedSharding(meshes_[d[0]], d[1])

    def check(op, before, operand, after):
        want = expected_sharding(op, before, operand, named)
        assert layout(after) == expected_layout(want, after.shape), (op, after.sharding, want)

    return _run(refjax, prog, args, eager, named, check if eager else None,
                operand_puts(prog) if puts is None else puts)


def _run(lib, prog, args, eager, named, check, puts):
    ins = [lib.device_put(a, None if d is None else named(d)) for a, d in zip(args, puts)]
    fn = program_fn(prog, lib, named, check)
    if not eager:
        return lib.jit(fn, **_jit_kwargs(prog, len(args), named))(*ins)
    wsc = lib.lax.with_sharding_constraint
    if prog.in_sharding is not None:
        ins[0] = wsc(ins[0], named(prog.in_sharding))
    out = fn(*ins)
    return out if prog.out_sharding is None else wsc(out, named(prog.out_sharding))


def _real_run(prog, meshes_, args, eager=False):
    jms = [real_mesh(m) for m in meshes_]

    def named(d):
        return jsh.NamedSharding(jms[d[0]], jsh.PartitionSpec(*d[1]))

    return _run(real_jax, prog, args, eager, named, None, _real_puts(prog))


def _real_puts(prog):
    puts = operand_puts(prog)
    if prog.in_sharding is not None:
        puts[0] = None  # JAX crashes when a jit with in_shardings is called twice on an
        # argument committed elsewhere (see test_device_sets.py)
    return puts


def _outcome(run):
    try:
        return "ok", run()
    except ValueError as e:
        return "ValueError", str(e)


def _as_jax_over_device_sets(prog, meshes_, args, want):
    """A program over several device assignments: JAX refuses it (or runs it), eagerly and
    under jit, and refjax on both backends does the same: the same message, or the same
    values and layout."""
    for eager in (True, False):
        theirs = _outcome(lambda: _real_run(prog, meshes_, args, eager))
        for name in BACKENDS:
            with refjax.backend(name):
                ours = _outcome(lambda: _refjax_run(prog, meshes_, args, eager, _real_puts(prog)))
            assert ours[0] == theirs[0], (name, eager, ours, theirs)
            if ours[0] == "ok":
                close(ours[1], want)
                assert layout(ours[1]) == layout(theirs[1]), (name, eager)
            elif "ARG_SHARDING" in theirs[1]:
                # an explicit in_sharding on devices no argument is on: JAX prints its
                # internal enum (and, next to a named argument, that argument's devices
                # again); refjax names the in_sharding and its devices
                assert "explicit input sharding with device ids" in ours[1]
            else:
                assert ours[1] == theirs[1]


def _pinned(prog):
    """The output's sharding when the program fixes it (out_shardings or a final constraint)."""
    if prog.out_sharding is not None:
        return prog.out_sharding
    return prog.ops[-1][1] if prog.ops[-1][0] == "constrain" else None


@at_least(30)
@given(st.data())
def test_jit_programs_layouts_and_values_agree(data):
    descs = data.draw(mesh_pairs(), "meshes")
    prog = data.draw(programs(descs), "program")
    meshes_ = [ref_mesh(d) for d in descs]
    args = program_args(prog, len(prog.ops))
    want = program_numpy(prog, args)
    used = {d[0] for d in program_shardings(prog) if d is not None}
    if len({descs[k].ids for k in used}) > 1:
        return _as_jax_over_device_sets(prog, meshes_, args, want)
    results = {}
    for name in BACKENDS:
        with refjax.backend(name):
            for eager in (True, False):
                out = results[name, eager] = _refjax_run(prog, meshes_, args, eager)
                close(out, want)
                check_self_consistent(out)
    ref = results["numpy_ref", False]
    for (name, eager), out in results.items():
        # the backends name a result alike; eager and jit may name one layout differently,
        # as JAX's do (an eager op's result is named by its operand, a jit's by its argument)
        mine = results["numpy_ref", eager]
        assert out.sharding == mine.sharding, (name, eager, out.sharding, mine.sharding)
        assert layout(out) == layout(ref), (name, eager)
    close(results["xla", True], results["xla", False], tol=1e-5)
    pinned = _pinned(prog)
    if pinned is not None:
        # the pinned layout, named as JAX names a jit result (test_sharding_jit.py)
        pin = NamedSharding(meshes_[pinned[0]], pinned[1])
        assert ref.sharding.mesh == pin.mesh and ref.sharding.is_equivalent_to(pin, ref.ndim)
    real = _real_run(prog, meshes_, args)
    close(real, want)
    if pinned is not None:
        assert layout(ref) == layout(real)


# ---------------------------------------------------------------- (b) single devices

class DeviceProgram(NamedTuple):
    device: int           # the one device explicit placements name (JAX rejects two)
    put_x: bool           # device_put x there first
    constrain_at: tuple   # after which ops (0-based) to constrain to SingleDeviceSharding
    ops: tuple            # "sin", "affine", "sum0"
    out_sharding: bool    # jit out_shardings=SingleDeviceSharding(device)


@st.composite
def device_programs(draw):
    ops = tuple(draw(st.lists(st.sampled_from(["sin", "affine", "sum0"]), min_size=1,
                              max_size=3).filter(lambda ops: ops.count("sum0") <= 2)))
    constrain_at = tuple(draw(st.sets(st.integers(0, len(ops) - 1))))
    return DeviceProgram(draw(st.integers(0, 7)), draw(st.booleans()), constrain_at, ops,
                         draw(st.booleans()))


def device_program_fn(prog, lib, sds):
    def fn(x):
        v = x
        for i, op in enumerate(prog.ops):
            v = lib.numpy.sin(v) if op == "sin" else 2 * v + 1 if op == "affine" else v.sum(0)
            if i in prog.constrain_at:
                v = lib.lax.with_sharding_constraint(v, sds)
        return v, x + 1   # x + 1 depends on no placement but the computation's
    return fn


def _run_device_program(prog, lib, x, jit):
    is_ref = lib is refjax
    dev = (RDEVS if is_ref else JDEVS)[prog.device]
    sds = (SingleDeviceSharding if is_ref else jsh.SingleDeviceSharding)(dev)
    fn = device_program_fn(prog, lib, sds)
    x = lib.device_put(x, dev) if prog.put_x else lib.numpy.asarray(x)
    if not jit:
        out, aux = fn(x)
        return (lib.lax.with_sharding_constraint(out, sds) if prog.out_sharding else out), aux
    return lib.jit(fn, out_shardings=(sds, None) if prog.out_sharding else None)(x)


@at_least(16)
@given(device_programs())
def test_single_device_placement_matches_jax(prog):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    for jit in (False, True):
        real = _run_device_program(prog, real_jax, x, jit)
        for name in BACKENDS:
            with refjax.backend(name):
                outs = _run_device_program(prog, refjax, x, jit)
            for o, r in zip(outs, real):
                close(o, r)
                assert {d.id for d in o.devices()} == {d.id for d in r.devices()}, (name, jit)
                assert type(o.sharding) is SingleDeviceSharding
                check_shards(o)


@pytest.mark.backends("numpy_ref", "xla")
def test_jit_keeps_single_device_constraint_and_out_shardings():
    """Regression: jit used to drop a SingleDeviceSharding constraint (device 0, not 3)."""
    x = np.arange(8, dtype=np.float32)
    s3 = SingleDeviceSharding(refjax.devices()[3])
    wsc = refjax.lax.with_sharding_constraint
    outs = [wsc(rnp.asarray(x) * 2, s3),
            refjax.jit(lambda v: wsc(v * 2, s3))(x),
            refjax.jit(lambda v: v * 2, out_shardings=s3)(x),
            refjax.jit(lambda v: wsc(v * 2, s3) + 1)(x),
            refjax.jit(lambda v: v + 1)(refjax.device_put(x, refjax.devices()[3])),
            refjax.device_put(x, refjax.devices()[3]) + rnp.ones(8)]
    for out in outs:
        assert out.sharding == s3 and out.devices() == {refjax.devices()[3]}
        check_self_consistent(out)
    np.testing.assert_array_equal(np.asarray(outs[1]), x * 2)


def _between_meshes(lib):
    """A value constrained to a mesh over other devices than its own, then combined with
    itself: refused eagerly and under jit (JAX's message, naming the constraint)."""
    d = lib.devices()
    a_mesh = lib.sharding.Mesh(np.array(d[:4], dtype=object), ("x",))
    b_mesh = lib.sharding.Mesh(np.array(d[4:], dtype=object).reshape(2, 2), ("x", "y"))
    x = lib.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4),
                       lib.NamedSharding(a_mesh, lib.P("x")))
    to_b = lib.NamedSharding(b_mesh, lib.P("y", "x"))

    def f(v):
        w = lib.lax.with_sharding_constraint(v, to_b)
        return w * 2, v + 1, (w + v).sum(0)
    return [_outcome(lambda: f(x)), _outcome(lambda: lib.jit(f)(x))]


@pytest.mark.backends("numpy_ref", "xla")
def test_values_do_not_move_between_meshes_as_jax():
    """Regression (refjax used to move values between device sets, which JAX refuses)."""
    theirs = _between_meshes(real_jax)
    assert [c for c, _ in theirs] == ["ValueError"] * 2
    assert _between_meshes(refjax) == theirs


# ---------------------------------------------------------------- (c) shard_map

class SmapCase(NamedTuple):
    mesh: MeshDesc
    in_dims: tuple     # per input dimension, the mesh axes splitting it (in order)
    local: tuple       # the per-device input block's shape
    ops: tuple         # the body, see _body
    out_dims: tuple    # per output dimension, the mesh axes the out spec names
    put: str           # how the input arrives: "numpy", "in_spec" or "other" (a reshard)


def _n(desc, a):
    return desc.sizes[desc.names.index(a)]


@st.composite
def smap_ops(draw, desc, local, vma):
    """1-3 collectives and local ops, each feasible on the block shape at its point; tracks
    the block shape and the varying axes (as JAX's check_vma does: all_gather, psum_scatter,
    ppermute and axis_index make a value vary over their axis)."""
    ops, shape, vma = [], tuple(local), set(vma)
    for _ in range(draw(st.integers(1, 3))):
        gathers = [(a, d, t) for a in desc.names for t in (True, False)
                   for d in range(len(shape) + (0 if t else 1))
                   if math.prod(shape) * _n(desc, a) <= 64 and (t or len(shape) < 3)]
        scatters = [(a, d, t) for a in desc.names for t in (True, False)
                    for d in range(len(shape))
                    if (shape[d] % _n(desc, a) == 0 if t
                        else shape[d] == _n(desc, a) and len(shape) > 1)]
        kinds = ["psum_scatter"] * bool(scatters) + ["all_gather"] * bool(gathers) + [
            "ppermute", "axis_index", "psum", "pmean", "pmax", "sum", "sin"]
        kind = draw(st.sampled_from(kinds))
        if kind == "sin":
            op = (kind,)
        elif kind == "sum":
            op = (kind, draw(st.integers(0, len(shape) - 1)))
        elif kind in ("psum", "pmean", "pmax"):
            # JAX reduces over axes the value varies over, or over axes it is invariant
            # over (each lane counts once), never a mix (both reject a mix)
            group = draw(st.sampled_from([g for g in (
                sorted(vma), sorted(set(desc.names) - vma)) if g]))
            op = (kind, tuple(draw(st.permutations(group))[:draw(st.integers(1, len(group)))]))
        elif kind in ("all_gather", "psum_scatter"):
            op = (kind,) + draw(st.sampled_from(gathers if kind == "all_gather" else scatters))
        elif kind == "ppermute":  # preferably along the longest axis (more permutations)
            a = draw(st.sampled_from(sorted(desc.names, key=lambda a: -_n(desc, a))))
            n = _n(desc, a)
            shift = draw(st.integers(0, n - 1))  # a shift, or (0) a random permutation
            dst = [(i + shift) % n for i in range(n)] if shift else \
                draw(st.permutations(range(n)))
            drop = draw(st.sampled_from([None] + list(range(n))))  # sources sending nothing
            op = (kind, a, tuple((i, d) for i, d in enumerate(dst) if i != drop))
        else:
            op = (kind, draw(st.sampled_from(desc.names)))
        ops.append(op)
        shape, vma = _local_after(op, shape, vma, desc)
    return tuple(ops), shape, vma


def _local_after(op, shape, vma, desc):
    kind = op[0]
    if kind == "sum":
        return shape[:op[1]] + (1,) + shape[op[1] + 1:], vma
    if kind in ("psum", "pmean", "pmax"):
        return shape, vma - set(op[1])
    if kind == "sin":
        return shape, vma
    vma = vma | {op[1]}
    if kind == "all_gather":
        _, a, dim, tiled = op
        n = _n(desc, a)
        return (shape[:dim] + (shape[dim] * n,) + shape[dim + 1:] if tiled
                else shape[:dim] + (n,) + shape[dim:]), vma
    if kind == "psum_scatter":
        _, a, dim, tiled = op
        n = _n(desc, a)
        return (shape[:dim] + (shape[dim] // n,) + shape[dim + 1:] if tiled
                else shape[:dim] + shape[dim + 1:]), vma
    return shape, vma


@st.composite
def smap_cases(draw):
    desc = draw(meshes())
    where = [draw(st.sampled_from([0, 1, None])) for _ in desc.names]
    in_dims = tuple(tuple(draw(st.permutations([a for a, w in zip(desc.names, where)
                                                 if w == d]))) for d in (0, 1))
    local = (draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from([1, 2, 3])))
    ops, out_local, vma = draw(smap_ops(desc, local, {a for d in in_dims for a in d}))
    # every varying axis must be named by the out spec; invariant ones may be
    named = sorted(vma | set(draw(st.sets(st.sampled_from(desc.names)))))
    out_where = [draw(st.integers(0, len(out_local) - 1)) for _ in named]
    out_dims = tuple(tuple(draw(st.permutations([a for a, w in zip(named, out_where) if w == d])))
                     for d in range(len(out_local)))
    return SmapCase(desc, in_dims, local, ops, out_dims,
                    draw(st.sampled_from(["numpy", "in_spec", "other"])))


def _entry(axes):
    return None if not axes else axes[0] if len(axes) == 1 else tuple(axes)


def _spec(dims):
    return P(*map(_entry, dims))


def _global(desc, local, dims):
    return tuple(n * math.prod(_n(desc, a) for a in axes) for n, axes in zip(local, dims))


def _body(case, lib):
    lax, np_ = lib.lax, lib.numpy

    def body(v):
        for op in case.ops:
            kind = op[0]
            if kind == "sin":
                v = np_.sin(v)
            elif kind == "sum":
                v = v.sum(axis=op[1], keepdims=True)
            elif kind in ("psum", "pmean", "pmax"):
                v = getattr(lax, kind)(v, op[1])
            elif kind == "all_gather":
                v = lax.all_gather(v, op[1], axis=op[2], tiled=op[3])
            elif kind == "psum_scatter":
                v = lax.psum_scatter(v, op[1], scatter_dimension=op[2], tiled=op[3])
            elif kind == "ppermute":
                v = lax.ppermute(v, op[1], list(op[2]))
            else:
                v = v + lax.axis_index(op[1]).astype(np_.float32)
        return v
    return body


def _ref_smap(case, mesh):
    return refjax.shard_map(_body(case, refjax), mesh=mesh, in_specs=_spec(case.in_dims),
                            out_specs=_spec(case.out_dims))


def _real_smap(case, mesh):
    return real_jax.shard_map(_body(case, real_jax), mesh=real_mesh(mesh),
                              in_specs=jsh.PartitionSpec(*_spec(case.in_dims)),
                              out_specs=jsh.PartitionSpec(*_spec(case.out_dims)))


def _smap_input(case, mesh, x, data):
    if case.put == "numpy":
        return x
    spec = _spec(case.in_dims) if case.put == "in_spec" else data
    return refjax.device_put(x, NamedSharding(mesh, spec))


def _value_and_layout(a):
    return np.asarray(a), layout(a)


def _grad_fn(f, ct):
    return lambda x: (f(x) * ct).sum()


@at_least(16)
@given(st.data())
def test_random_shard_maps_agree_across_backends_and_with_jax(data):
    case = data.draw(smap_cases(), "case")
    mesh = ref_mesh(case.mesh)
    shape = _global(case.mesh, case.local, case.in_dims)
    other = data.draw(specs_for(case.mesh, shape), "other spec")
    rng = np.random.default_rng(len(case.ops))
    x = rng.normal(size=shape).astype(np.float32)
    xs = rng.normal(size=(2,) + shape).astype(np.float32)

    jf = _real_smap(case, mesh)
    want, want_layout = recorded("out", lambda: _value_and_layout(jf(x)), fingerprint(case, x))
    out_sharding = NamedSharding(mesh, _spec(case.out_dims))
    assert want_layout == expected_layout(out_sharding, want.shape)
    differentiable = not any(op[0] == "pmax" for op in case.ops)  # JAX: no pmax JVP
    ct = rng.normal(size=want.shape).astype(np.float32)
    want_grad = recorded("grad", lambda: np.asarray(real_jax.grad(_grad_fn(jf, ct))(x)),
                         fingerprint(case, x, ct)) if differentiable else None

    results = {}
    for name in BACKENDS:
        with refjax.backend(name):
            f = _ref_smap(case, mesh)
            arg = _smap_input(case, mesh, x, other)
            outs = {"eager": f(arg), "jit": refjax.jit(f)(arg)}
            grad = refjax.grad(_grad_fn(f, ct))
            outs["grad"] = (refjax.jit(grad) if name == "xla" else grad)(arg)
            vf = refjax.vmap(f)
            outs["vmap"] = (refjax.jit(vf) if name == "xla" else vf)(xs)
            results[name] = outs
        for kind in ("eager", "jit"):
            out = outs[kind]
            close(out, want)
            assert out.sharding.is_equivalent_to(out_sharding, out.ndim), (name, kind)
            assert layout(out) == want_layout, (name, kind)
            check_shards(out)
        if want_grad is not None:
            close(outs["grad"], want_grad, tol=1e-3)
        check_self_consistent(outs["grad"])
        check_self_consistent(outs["vmap"])
        loop = np.stack([np.asarray(f(xs[i])) for i in range(len(xs))]) if name == "numpy_ref" \
            else np.asarray(results["numpy_ref"]["vmap"])
        close(outs["vmap"], loop)
    for kind, ref in results["numpy_ref"].items():
        got = results["xla"][kind]
        close(got, ref, tol=1e-3 if kind == "grad" else 1e-4)
        # grad and vmap run eagerly on numpy_ref and jitted on xla: JAX names a jitted
        # result's layout by its canonical spec (P('x',) for P('x', None)), as refjax does
        same_program = kind in ("eager", "jit")
        assert got.sharding == ref.sharding if same_program else \
            got.sharding.is_equivalent_to(ref.sharding, got.ndim), kind
        assert layout(got) == layout(ref), kind
