"""jax.stages against real JAX 0.10.2: jit(f).trace / .lower / .compile, their trees, argument
and output info, the compiled program's argument checks (JAX's TypeErrors); on the xla
backend the texts (StableHLO, HLO, XLA's optimized HLO), IR, cost and memory analyses of the
program that runs the jaxpr, as JAX's, and JAX's AOT pages example by example; numpy_ref,
without a compiler, shows the jaxpr and has no analyses."""
import re

import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax
from jax_compare import assert_same_error, outcome
from test_jax_doc_pages import DOCS, differing_cells

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _f(jax):
    jnp = jax.numpy
    return lambda x, y: {"s": jnp.sin(x) @ y, "n": x.sum()}


def _stages(jax):
    jnp = jax.numpy
    traced = jax.jit(_f(jax)).trace(jnp.ones((2, 3)), jnp.ones((3,)))
    lowered = traced.lower()
    return traced, lowered, lowered.compile()


def test_stage_classes_and_info_as_jax():
    ours, theirs = _stages(refjax), _stages(real_jax)
    for mine, jax_stage, cls in zip(ours, theirs, ("Traced", "Lowered", "Compiled")):
        assert isinstance(mine, getattr(refjax.stages, cls))
        # refjax has no memory layouts (jax.experimental.layout), nor JAX's internal lojax
        assert _public(mine) == _public(jax_stage) - {"lojax", "input_formats", "output_formats"}
        assert type(mine).__name__ == type(jax_stage).__name__
        for attr in ("in_tree", "out_tree", "args_info", "donate_argnums"):
            assert repr(getattr(mine, attr)) == repr(getattr(jax_stage, attr)), attr
        # JAX's Compiled.out_info also holds each output's sharding and memory layout
        assert refjax.tree.map(lambda s: (s.shape, s.dtype), mine.out_info) == \
            real_jax.tree.map(lambda s: (s.shape, s.dtype), jax_stage.out_info)
    assert repr(ours[1].out_info) == repr(theirs[1].out_info)
    assert ours[0].fun_name == theirs[0].fun_name == "<lambda>"
    assert str(ours[0].jaxpr) == str(refjax.make_jaxpr(_f(refjax))(np.ones((2, 3), np.float32),
                                                                   np.ones(3, np.float32)))


def _public(obj):
    return {name for name in dir(obj) if not name.startswith("_")}


def test_donations_as_jax():
    """Which argument leaves each stage says are donated (args_info, the flat donate_argnums):
    by position among all parameters (static ones counted) or by name, passed either way."""
    def run(jax):
        ones = jax.numpy.ones(3)
        calls = [
            (jax.jit(lambda x, n, y: x * n + y, static_argnums=1, donate_argnums=2),
             (ones, 2, ones), {}),
            (jax.jit(lambda x, *, k: x * k, donate_argnames="k"), (ones,), {"k": ones}),
            (jax.jit(lambda x, y: x * y, donate_argnums=1), (ones,), {"y": ones}),
            (jax.jit(lambda x, y: x[0] * y, donate_argnames="x"), ((ones, ones),), {"y": ones})]
        stages = [fun.trace(*args, **kwargs) for fun, args, kwargs in calls]
        stages += [s.lower() for s in stages[:4]]
        return [(repr(s.args_info), s.donate_argnums) for s in stages + [stages[-1].compile()]]
    assert run(refjax) == on_jax(run)


def test_compiled_places_its_arguments_as_jax():
    """A compiled program runs on the shardings it was compiled for: values placed by default
    move there; committed arrays laid out otherwise are JAX's ValueError listing each."""
    def run(jax):
        jnp, sharding = jax.numpy, jax.sharding
        mesh = jax.make_mesh((8,), ("a",), axis_types=(sharding.AxisType.Auto,))
        split = sharding.NamedSharding(mesh, sharding.PartitionSpec("a"))
        spec = jax.ShapeDtypeStruct((8,), jnp.float32, sharding=split)
        on_mesh = jax.jit(lambda x, y: x * 2 + y).lower(spec, spec).compile()
        on_default = jax.jit(lambda x: x * 2).lower(jnp.ones(8)).compile()
        elsewhere = [jax.device_put(jnp.ones(8), jax.devices()[1]),
                     jax.device_put(jnp.ones(8), sharding.NamedSharding(mesh, sharding.PartitionSpec()))]
        calls = [(on_mesh, (jnp.ones(8), np.ones(8, np.float32))),
                 (on_mesh, (jax.device_put(jnp.ones(8), split), jnp.ones(8))),
                 (on_mesh, elsewhere), (on_default, (jax.device_put(jnp.ones(8), split),)),
                 (on_default, (jnp.ones(8),))]
        return [outcome(lambda: compiled(*args), lambda r: (repr(r.sharding), r.tolist()))
                for compiled, args in calls]
    assert run(refjax) == on_jax(run)


def test_out_info_as_jax():
    """Each stage's out_info: weak types until lowered, jit's out_shardings, and the compiled
    program's output shardings (JAX's Compiled also gives memory layouts, which refjax has
    not)."""
    def run(jax):
        mesh = jax.make_mesh((8,), ("a",), axis_types=(jax.sharding.AxisType.Auto,))
        split = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("a"))
        traced = jax.jit(lambda x: (x * 2, 1.0), out_shardings=(split, None)).trace(
            jax.numpy.ones(8))
        lowered = traced.lower()
        return [repr(traced.out_info), repr(lowered.out_info),
                re.sub(r", format=Layout\(major_to_minor=\([^)]*\), tiling=\([^)]*\), "
                       r"sub_byte_element_size_in_bits=\d+\)", "", repr(lowered.compile().out_info))]
    assert run(refjax) == on_jax(run)


@pytest.mark.parametrize("args", [
    lambda jnp: (jnp.ones((2, 3)), jnp.ones((3,))),
    lambda jnp: (np.ones((2, 3)), np.ones(3)),  # float64 NumPy canonicalised, as JAX
])
def test_compiled_runs_as_jax(args):
    got = _stages(refjax)[2](*args(refjax.numpy))
    want = _stages(real_jax)[2](*args(real_jax.numpy))
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-6)


@pytest.mark.parametrize("args", [
    lambda jnp: (jnp.ones((2, 4)), jnp.ones((3,))),
    lambda jnp: (jnp.ones((2, 3), jnp.int32), jnp.ones((3,))),
    lambda jnp: (jnp.ones((2, 3)), jnp.ones((2,))),
])
def test_compiled_rejects_other_types_as_jax(args):
    assert_same_error(lambda jax: _stages(jax)[2](*args(jax.numpy)), refjax, real_jax,
                      TypeError)


def test_compiled_names_nested_and_keyword_arguments_as_jax():
    def run(jax):
        compiled = jax.jit(lambda a, b: a["k"] * b).lower({"k": jax.numpy.ones(2)},
                                                           b=2.0).compile()
        outs = [np.asarray(compiled({"k": jax.numpy.ones(2)}, b=3.0)).tolist()]
        for args, kwargs in [(({"k": jax.numpy.ones(3)},), {"b": 3.0}),
                             (({"k": jax.numpy.ones(2)},), {"b": jax.numpy.ones(2)})]:
            try:
                compiled(*args, **kwargs)
            except TypeError as e:
                outs.append(str(e))
        return outs
    assert run(refjax) == on_jax(run)


def test_compiled_rejects_another_structure_as_jax():
    """JAX's TypeError listing each structural mismatch: a missing argument, a dict without a
    key, a longer list, a tuple for a list, an unexpected keyword, a leaf for a node."""
    def run(jax):
        ones = jax.numpy.ones(2)
        compiled = jax.jit(lambda x, y: x).lower(ones, {"a": 1.0, "b": [1.0, 2.0]}).compile()
        calls = [((ones,), {}), ((ones, {"a": 1.0}), {}),
                 ((ones, {"a": 1.0, "b": [1.0, 2.0, 3.0]}), {}),
                 ((ones, {"a": 1.0, "b": (1.0, 2.0)}), {}), ((ones,), {"y": 1.0}),
                 ((ones, 1.0), {})]
        return [outcome(lambda: compiled(*args, **kwargs)) for args, kwargs in calls]
    ours = run(refjax)
    assert ours == run(real_jax) and all(o.startswith("TypeError: Function compiled with")
                                         for o in ours)


def test_lower_from_shape_dtype_structs():
    spec = refjax.ShapeDtypeStruct((2,), np.float32)
    compiled = refjax.jit(lambda x: x + 1).lower(spec).compile()
    np.testing.assert_array_equal(compiled(refjax.numpy.zeros(2)), [1.0, 1.0])


def _programs(jax):
    """Lowered stages of programs whose texts JAX names: a dict of results, jit's in and out
    shardings, a static argument before a donated one, a closed-over constant, named scopes
    and a nested jit."""
    jnp = jax.numpy

    @jax.jit
    def inner(x):
        with jax.named_scope("in"):
            return jnp.cos(x)

    def scoped(x):
        with jax.named_scope("layer1"):
            y = inner(jnp.sin(x * 2))
        return y + jnp.arange(3.0)

    mesh = jax.make_mesh((8,), ("a",), axis_types=(jax.sharding.AxisType.Auto,))
    split = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("a"))
    return [jax.jit(_f(jax)).lower(jnp.ones((2, 3)), jnp.ones((3,))),
            jax.jit(lambda x, y: (x * 2, y + 1), in_shardings=(split, None),
                    out_shardings=(split, None)).lower(jnp.ones(8), jnp.ones(8)),
            jax.jit(lambda x, y, z: y * x + z, static_argnums=0, donate_argnums=2).lower(
                2.0, jnp.ones(3), jnp.ones(3)),
            jax.jit(scoped).lower(jnp.ones(3))]


def _boxed(jax):
    @jax.tree_util.register_pytree_node_class
    class Box:
        def __init__(self, v):
            self.v = v

        def tree_flatten(self):
            return (self.v,), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)
    return jax.jit(lambda b: {"y": b.v * 2}).lower(Box(jax.numpy.ones(3)))


def _without_locations(hlo):
    """An HLO module's text without its source locations (JAX's name the user's lines,
    refjax's its own frames, which trace the program JAX compiles)."""
    if "\nFileNames\n" in hlo:
        head, rest = hlo.split("\nFileNames\n", 1)
        hlo = head + rest.split("\n\n\n", 1)[1]
    return re.sub(r" stack_frame_id=\d+", "", hlo)


def _shown(lowered, renumbered=False):
    compiled = lowered.compile()
    hlo = _without_locations(compiled.as_text())
    if renumbered:
        hlo = re.sub(r"(%\w+)\.\d+", r"\1", hlo)
    memory = compiled.memory_analysis()
    return [lowered.as_text(), lowered.as_text("hlo"), str(lowered.compiler_ir()),
            lowered.compiler_ir("hlo").as_hlo_text(), lowered.cost_analysis(),
            hlo, compiled.cost_analysis(),
            [getattr(memory, k) for k in ("argument_size_in_bytes", "output_size_in_bytes",
                                          "alias_size_in_bytes", "temp_size_in_bytes")]]


@pytest.mark.backends("xla")
def test_texts_and_analyses_on_xla():
    """JAX's StableHLO and HLO texts and IR of the program that runs the jaxpr, named as JAX
    names the user's function (module, arguments, results, ops with their named scopes and
    nested jits), XLA's optimized HLO (but for source locations), cost and memory analyses,
    all as JAX's; compiler options checked by XLA at compile()."""
    ours = _programs(refjax)
    with pytest.raises(refjax.errors.JaxRuntimeError,
                       match="INVALID_ARGUMENT: No such compile option: 'no_such'"):
        ours[0].compile({"no_such": True})
    assert ours[0].compile({"xla_cpu_enable_fast_math": True})._options
    # arguments of a user's pytree class: JAX's program takes them flat, and so does refjax's
    assert _boxed(refjax).as_text() == _boxed(real_jax).as_text()
    for mine, theirs in zip(ours, _programs(real_jax)):
        # a nested jit is inlined (JAX's StableHLO calls a function of its own, so its HLO
        # numbers instructions after one more computation)
        nested = "inner" in theirs.as_text()
        assert _shown(mine, nested)[4 * nested:] == _shown(theirs, nested)[4 * nested:]


@pytest.mark.backends("numpy_ref")
def test_texts_and_analyses_on_numpy_ref():
    """numpy_ref compiles to no compiler IR: its texts are the jaxpr it runs, it has no
    analyses, and other dialects are refused."""
    lowered = _programs(refjax)[0]
    compiled, jaxpr = lowered.compile(), _stages(refjax)[0].jaxpr
    assert lowered.as_text() == compiled.as_text() == str(jaxpr) == lowered.as_text("jaxpr")
    assert lowered.compiler_ir() is lowered._staged.closed and lowered.compiler_ir("hlo") is None
    assert [lowered.cost_analysis(), compiled.cost_analysis(), compiled.memory_analysis(),
            compiled.runtime_executable()] == [None] * 4
    with pytest.raises(ValueError, match="numpy_ref backend has no 'stablehlo' text"):
        lowered.as_text("stablehlo")


@pytest.mark.backends("xla")
def test_compiled_collectives_named_as_jax():
    """The pages' check of a sharded program's compiled text (parallel.md, 201/sharding.md:
    an all-reduce for a sum over a sharded dimension; 301/sharding-ad.md: each all-reduce's
    op_name, here through a scan's body as JAX's name stack has it)."""
    def run(jax):
        jnp, P = jax.numpy, jax.sharding.PartitionSpec
        mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
        x = jax.device_put(jnp.arange(32.0).reshape(8, 4), jax.NamedSharding(mesh, P("x", "y")))

        def step(x):
            return jax.lax.scan(lambda c, w: (c + (x * w).sum(), None), jnp.float32(0),
                                jnp.arange(3.0))[0]
        texts = [jax.jit(lambda x: x.sum(0)).lower(x).compile().as_text(),
                 jax.jit(step).lower(x).compile().as_text()]
        return ["all-reduce(" in texts[0]] + re.findall(
            r'all-reduce(?:-start)?\(.*op_name="([^"]*)"', texts[1])
    ours = run(refjax)
    assert ours == run(real_jax) and ours[0] and len(ours) > 1


# About 3 s (JAX compiling each example): the default run has the texts' test above.
@pytest.mark.thorough
@pytest.mark.backends("xla")
@pytest.mark.parametrize("page", ["new_docs/201/aot", "aot"])
def test_aot_pages_on_xla(page):
    """JAX's ahead-of-time pages, example by example on the xla backend: every one shows what
    JAX shows (texts, cost and memory analyses, errors); on numpy_ref, test_jax_doc_pages.py
    lists the cells that need XLA."""
    assert differing_cells(f"{DOCS}/{page}.md") == set()


def _struct_of_float64(jax):
    """A ShapeDtypeStruct given float64 with x64 off: what it shows, and the types eval_shape
    and an AOT compile give it."""
    s = jax.ShapeDtypeStruct((2,), "float64")
    compiled = jax.jit(lambda x: x * 2).lower(s).compile()
    return [repr(s), str(s.dtype), repr(jax.eval_shape(lambda x: x * 2, s)),
            str(compiled.args_info[0][0]._aval),
            np.asarray(compiled(np.ones(2, np.float32))).tolist()]


def test_shape_dtype_struct_keeps_the_dtype_it_was_given():
    """As JAX's: the struct shows float64 (refjax canonicalized it to float32 when made);
    where it is used, it stands for float32 without x64."""
    assert _struct_of_float64(refjax) == on_jax(_struct_of_float64)
