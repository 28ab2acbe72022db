"""JAX's own documentation pages (docs/*.md and docs/notebooks/*.md of JAX's source, as
runnable notebooks) run cell by cell on refjax and on real JAX: every cell must show the same
thing (printed text, the repr of its last expression, or the error class; numbers within
float32 rounding), but for the cells listed with the reason they differ. A cell that starts
to agree, or a new difference, fails the test. (The sharding pages: test_doc_sharding.py.)

Plain pages (```python snippets, not notebooks: PLAIN) run snippet by snippet after a preamble
giving the names the snippets assume (`x`, `f`). Pages not run, and why:
- new_docs/501/data-loading, docs/distributed_data_loading's plain twin: tf.data pipelines
  over several processes (tensorflow is not installed: both raise ModuleNotFoundError);
- notebooks/neural_network_with_tfds_data: tensorflow_datasets is not installed;
- notebooks/layout: layouts XLA's compiler chooses (jit's Format(Layout.AUTO) in/out
  shardings, Compiled.input_formats, device_put to a Format, with_layout_constraint: refjax
  has Layout, Format and Array.format only; on JAX's CPU the page's own layout assertions
  fail);
- notebooks/colocated-python: JAX's colocated Python runtime (its cells fail on JAX too);
- new_docs/201/gpu-memory, profiling, 501/multiprocess, 501/compilation-cache, 501/export,
  501/shape-polymorphism, 401/pallas, 401/ffi, ffi, 401/cute-dsl, notebooks/cute_dsl_jax,
  persistent_compilation_cache, multi_process, gpu_performance_tips, device_memory_profiling:
  GPU/TPU memory, the profiler, several processes, the persistent compilation cache,
  jax.export, kernels compiled for accelerators or C++ FFI targets;
- xla_flags, benchmarking: XLA_FLAGS set in the environment, %timeit cells.
- new_docs/201/aot, aot: jit's stages (tests/test_stages.py).
"""
import contextlib
import io
import os
import sys

import jax
import pytest
from doc_cells import cells, jax_cells, python_blocks, run_page
from test_doc_examples import _same

import refjax

DOCS = "/work/jaxsrc/docs"

_FD = "a finite difference of float32 losses (eps=1e-4) amplifies 1-ulp differences of the loss"
_UNSEEDED = "inputs drawn from NumPy's unseeded global random generator"
_IDS = "jaxpr variables print with their Python ids in JAX"
_CLASS = "type(x) names the implementation's class (jaxlib._jax.ArrayImpl in JAX)"
_TRACED = ("the page's printer abbreviates tracers by JAX's internal class paths "
           "(ad.JVPTracer, batching.BatchTracer, partial_eval.JaxprTracer) as Traced<...>; "
           "refjax's tracers print as themselves (JVPTracer, VmapTracer, JitTracer)")
_LOWERING = ("the lowering rule's printed context: JAX's LoweringRuleContext holds MLIR "
             "objects, refjax's the operand and result types; refjax evaluates the abstract "
             "rule again on the backend's (strong) types when it traces the lowering, and "
             "traces it once per primitive and types where JAX lowers once per jit")
_HIJAX = ("jax.experimental.hijax (VJPHiPrimitive, HiType): refjax has none "
          "(ModuleNotFoundError), so the cell or the definitions it uses fail")

_PULLBACK_INTO_REF = (
    "the jaxpr of a pullback accumulating into a reference: JAX passes the reference into the "
    "transposed jit and adds the slice there (b[c:c+1] += j); refjax transposes to the whole "
    "cotangent and adds it to the reference after the call")
_MEMORY = ("prints XLA's memory analysis of the compiled program (temp and argument bytes): "
           "the numpy_ref backend's Compiled has no memory_analysis (AttributeError)")
_LAX_MAP_PRINTS = ("jax.debug.print's order within a lax.map body: JAX's compiled program runs "
                   "the two unordered prints in the other order; refjax in program order")

_AUTO = ("make_mesh gives Auto axes (the seeds' default; JAX 0.10.2's is Explicit): the "
         "mesh's repr, jax.typeof's `float32[8@x]` and the sharding's axis_types; every cell "
         "agrees with refjax_make_mesh_axis_types='explicit' (test_device_sets.py)")

_NO_HLO = ("numpy_ref compiles to no StableHLO: Lowered.as_text() is the jaxpr it runs (on the "
           "xla backend every cell agrees: test_stages.py)")
_NO_COST = "numpy_ref has no cost model: cost_analysis() is None (TypeError subscripting it)"
_NO_MEMORY = "numpy_ref has no memory analysis: memory_analysis() is None (AttributeError)"

KNOWN = {
    "key-concepts": {},
    "automatic-differentiation": {9: _FD},
    "automatic-vectorization": {},
    "control-flow": {},
    "custom_pytrees": {},
    "external-callbacks": {},
    "jit-compilation": {},
    "pytrees": {},
    "random-numbers": {},
    "stateful-computations": {},
    "tracing": {0: _UNSEEDED, 1: _UNSEEDED},
    "notebooks/thinking_in_jax": {4: _CLASS},
    "notebooks/Common_Gotchas_in_JAX": {},
    "notebooks/autodiff_cookbook": {7: _FD},
    "notebooks/Custom_derivative_rules_for_Python_code": {},
    "jaxpr": {},
    "higher-order": {},
    "complex-differentiation": {},
    "jacobian-vector-products": {},
    "gradient-checkpointing": {
        23: "from jax._src import test_util: JAX's fails to import (its test dependency absl "
            "is not installed: ModuleNotFoundError); refjax._src has no test_util "
            "(ImportError)"},
    "notebooks/convolutions": {},
    "notebooks/vmapped_log_probs": {},
    "notebooks/autodiff_remat": {},
    "notebooks/Writing_custom_interpreters_in_Jax": {2: _IDS},
    "autodidax": {
        44: "JAX's MLIR internals (jax.extend.mlir, jax._src.lib): refjax has no MLIR "
            "(ModuleNotFoundError); on JAX 0.10.2 the cell fails too (TypeError)"},
    "jax-primitives": {
        11: _LOWERING, 12: _LOWERING, 13: _TRACED, 15: _TRACED, 16: _TRACED + "; " + _LOWERING,
        17: _TRACED + "; JAX evaluates the abstract rule twice more when it partially "
                      "evaluates the jvp",
        19: _TRACED, 20: _TRACED + "; in refjax's jit(grad) the output cotangent 1.0 and "
                                   "lax.full_like's zero are constants, in JAX tracers; "
                                   + _LOWERING,
        21: _TRACED, 23: _TRACED, 24: _TRACED + "; " + _LOWERING},
    "autodidax2_part1": {},
    "distributed_data_loading": {},
    "notebooks/Neural_Network_and_Data_Loading": {},
    "new_docs/101/arrays": {},
    "new_docs/101/random": {},
    "new_docs/101/state": {
        13: "a batched value written to an unbatched reference under vmap: JAX raises a bare "
            "Exception, refjax a ValueError with the same message (test_refs.py)"},
    "new_docs/201/callbacks": {},
    "new_docs/201/control-flow": {},
    "new_docs/201/debugging": {
        3: _LAX_MAP_PRINTS,
        11: "the traceback's last note: JAX's api_boundary adds 'For simplicity, JAX has "
            "removed its internal frames...'; refjax filters no frames"},
    "new_docs/201/jit": {},
    "new_docs/301/custom-derivatives": {i: _HIJAX for i in (
        0, 1, 6, 7, 9, 12, 13, 14, 17, 22, 24, 26, 27, 28, 32, 33, 34, 35, 36, 37, 38, 39, 40,
        41, 42, 43, 44, 45, 46, 48, 49)},
    "new_docs/301/custom-jvp-vjp": {},
    "new_docs/301/vjp-objects": {},
    "new_docs/301/remat": {},
    "new_docs/301/refs": {12: _PULLBACK_INTO_REF},
    "new_docs/301/hijax-types": {i: _HIJAX for i in (
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 22, 24, 25, 26, 27, 28, 29, 30, 31,
        32, 33, 34, 35, 36, 37, 38, 39, 40, 41)},
    "new_docs/201/placement": {2: _AUTO, 5: _AUTO, 7: _AUTO},
    "aot": {7: _NO_HLO, 9: _NO_COST, 18: _NO_HLO},
    "new_docs/201/aot": {7: _NO_HLO, 9: _NO_COST, 12: _NO_MEMORY, 21: _NO_HLO},
    "debugging": {3: _LAX_MAP_PRINTS},
    "notebooks/host-offloading": {i: _MEMORY for i in (5, 8, 9)},
}
# what a page's jax.debug.breakpoint reads (each side its own copy): print a value, continue
DEBUGGER_INPUT = {"debugging": "p y\nc\n" * 4}
# 9-35 s each under load (JAX compiling the page's programs): the thorough profile's
SLOW = {
    "new_docs/301/cookbook": {},
    "new_docs/101/pytrees": {9: _UNSEEDED},
    "new_docs/101/transformations": {7: _FD},
    "array_refs": {
        2: "jnp.sin of a reference inside jit: JAX's TypeError names its internal tracer class "
           "(DynamicJaxprTracer at position 0); refjax's says `got Ref`",
        23: _PULLBACK_INTO_REF,
        28: "prints buffer addresses (Ref.unsafe_buffer_pointer, which refjax's Ref lacks: "
            "AttributeError)"},
    # the earlier versions of new_docs/301/hijax-types and custom-derivatives
    "hijax_types": {i: _HIJAX for i in (
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 22, 24, 25, 26, 27, 28, 29, 30, 31,
        32, 33, 34, 35, 36, 37, 38, 39, 40, 41)},
    "hijax_custom_derivatives": {i: _HIJAX for i in (
        0, 1, 6, 7, 9, 12, 13, 14, 17, 22, 24, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38)},
}

_JNP = "import jax\nimport jax.numpy as jnp\n"
PLAIN = {
    "new_docs/201/precision": (_JNP + "x = jnp.arange(9.0).reshape(3, 3) / 7\n"
                                      "f = lambda x: jnp.dot(x, x)\n", {}),
    "new_docs/201/controlling-xla": (_JNP, {
        2: "jit's compiler_options: XLA refuses an unknown option when it compiles "
           "(JaxRuntimeError); refjax compiles no XLA program and does not read them",
        7: "lower(...).as_text('hlo'): the numpy_ref backend has no XLA HLO text (ValueError "
           "naming the dialects it has)"}),
    "buffer_donation": (_JNP + "import numpy as np\n", {
        4: "a donated (deleted) array passed again to the jitted function that took it: "
           "JAX's C++ dispatch of a program it ran raises ValueError (INVALID_ARGUMENT: "
           "Invalid buffer passed to Execute()), its Python dispatch RuntimeError (Array has "
           "been deleted), which refjax raises on every call (tests/test_donation.py)"}),
    "migrate_pmap": (_JNP, {}),
    "default_dtypes": (_JNP, {}),
    "new_docs/201/slow-compilation": (_JNP, {
        0: "refjax has no jax_dump_ir_to / jax_dump_ir_modes options (it emits no XLA IR to "
           "dump): AttributeError"}),
}
# the options the pages set process-wide, put back after each page
_OPTIONS = ("jax_enable_x64", "jax_default_matmul_precision", "jax_log_compiles", "jax_explain_cache_misses",
            "jax_dump_ir_to", "jax_dump_ir_modes")


def differing_cells(path, blocks=cells, preamble="", stdin=""):
    """The indices of the cells of a page that show something else on refjax than on JAX."""
    page = open(path).read()
    with _options_kept(refjax), _options_kept(jax):
        with _reading(stdin):
            ours = [shown for _, shown in run_page(page, True, blocks, preamble)]
        theirs = jax_cells(lambda: _on_jax(page, blocks, preamble, stdin),
                           (page, blocks.__name__, preamble, stdin), _same)
    # a cell refjax's imports made unparsable; a plain page's `def f(...)` is neither's
    assert all(a != "<syntax>" or b == a and blocks is python_blocks
               for a, b in zip(ours, theirs))
    return {i for i, (a, b) in enumerate(zip(ours, theirs)) if not _same(a, b)}


def _on_jax(page, blocks, preamble, stdin):
    with _options_kept(jax), _reading(stdin):
        return run_page(page, False, blocks, preamble)


@contextlib.contextmanager
def _reading(text):
    stdin, sys.stdin = sys.stdin, io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = stdin


@contextlib.contextmanager
def _options_kept(module):
    names = [n for n in _OPTIONS if hasattr(module.config, n)]
    kept = {n: getattr(module.config, n) for n in names}
    try:
        yield
    finally:
        for name, value in kept.items():
            module.config.update(name, value)


def _shows_what_jax_shows(page, known, **kw):
    with refjax.set_mesh(None), jax.set_mesh(None):
        assert differing_cells(f"{DOCS}/{page}.md", **kw) == set(known)


_DOCS_HERE = pytest.mark.skipif(not os.path.isdir(DOCS), reason="JAX's docs are not checked out")


@_DOCS_HERE
@pytest.mark.backends("numpy_ref")  # each page compiles many programs in JAX: one backend
@pytest.mark.parametrize("page", sorted(KNOWN))
def test_jax_doc_page_shows_what_jax_shows(page):
    _shows_what_jax_shows(page, KNOWN[page], stdin=DEBUGGER_INPUT.get(page, ""))


@pytest.mark.thorough
@_DOCS_HERE
@pytest.mark.backends("numpy_ref")
@pytest.mark.parametrize("page", sorted(SLOW))
def test_slow_jax_doc_page_shows_what_jax_shows(page):
    _shows_what_jax_shows(page, SLOW[page])


@_DOCS_HERE
@pytest.mark.backends("numpy_ref")
@pytest.mark.parametrize("page", sorted(PLAIN))
def test_plain_jax_doc_page_shows_what_jax_shows(page):
    preamble, known = PLAIN[page]
    _shows_what_jax_shows(page, known, blocks=python_blocks, preamble=preamble)
