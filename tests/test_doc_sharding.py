"""JAX's sharding pages, written for JAX 0.10's Explicit default: the shard_map notebook
(docs/notebooks/shard_map.md of JAX's source) and "Distributed arrays and automatic
parallelization" (docs/parallel.md), run cell by cell on refjax (make_mesh giving Explicit
axes, the documented option) and on real JAX; every cell must show the same thing (text,
repr, or error class; numbers within float32 rounding), but for the cells listed here with
the reason they differ. A cell that starts to agree, or a new difference, fails the test."""
import os

import jax
import pytest
from doc_cells import run_page
from test_doc_examples import _same

import refjax

PAGE = "/work/jaxsrc/docs/notebooks/shard_map.md"
PARALLEL = "/work/jaxsrc/docs/parallel.md"

KNOWN = {
    4: "JAX's visualize_array_sharding raises ValueError on this array; refjax draws it",
    6: "JAX's visualize_array_sharding raises ValueError on this array; refjax draws it",
    19: "refjax's vma error names the output and axes (the staged shard_map's message)",
    21: "make_jaxpr on Explicit axes: JAX's traced types carry @i and insert pvary",
}


def _differing_cells(path, drop=()):
    """The indices of the cells of a page that show something else on refjax than on JAX
    (the lines in `drop` taken out of the page first)."""
    page = open(path).read()
    for line in drop:
        page = page.replace(line, "")
    # The pages set a global mesh (jax.set_mesh as a setter): each run is wrapped in a
    # set_mesh(None) context, whose exit restores the empty mesh for the tests that follow.
    with refjax.config.override(refjax_make_mesh_axis_types="explicit"), refjax.set_mesh(None):
        ours = run_page(page, refjax=True)
    with jax.set_mesh(None):
        theirs = run_page(page, refjax=False)
    assert all(shown != "<syntax>" for _, shown in ours)
    return {i for i, ((_, a), (_, b)) in enumerate(zip(ours, theirs)) if not _same(a, b)}


@pytest.mark.skipif(not os.path.exists(PAGE), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # the page compiles many programs in JAX: one backend
def test_shard_map_notebook_shows_what_jax_shows():
    assert _differing_cells(PAGE) == set(KNOWN)


_RICH = "JAX's visualize_array_sharding needs `rich` (not installed: ValueError); refjax draws"
PARALLEL_KNOWN = {
    8: "the set_mesh object's repr names its module (refjax.core.sharding.mesh)",
    12: _RICH,
    13: _RICH,
    15: _RICH,
    25: "the numpy_ref backend's compiled text is not XLA's HLO (no all-reduce)",
    32: "a jit output laid out by a constraint: JAX reports the spec without trailing Nones "
        "(P('X',)) unless an input has that sharding; refjax keeps the constraint's",
}


@pytest.mark.skipif(not os.path.exists(PARALLEL), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # as above: one backend
def test_parallel_page_shows_what_jax_shows():
    """30 of the page's 36 cells agree (25 before unreduced arrays and `rich` in the
    environment, 15 before sharding in types on Explicit axes, 14 before out_sharding= on
    jax.random.normal)."""
    assert _differing_cells(PARALLEL) == set(PARALLEL_KNOWN)


SHARDING_AD = "/work/jaxsrc/docs/new_docs/301/sharding-ad.md"
_UNRED = "(unreduced/reduced types: unred2's)"
SHARDING_AD_KNOWN = {
    0: "the set_mesh object's repr names its module (refjax.core.sharding.mesh)",
    6: f"einsum with out_sharding=P(None, None, unreduced={{'X'}}): NotImplementedError {_UNRED}",
    7: "c is still cell 5's replicated result (cell 6 failed): each device shows the whole sum",
    9: f"c + c2 of unreduced einsums: NotImplementedError {_UNRED}",
    10: "cos of c: JAX refuses an unreduced operand; refjax's c is cell 5's replicated one",
    12: f"dot_general of a reduced weight: refjax's unreduced rule raises ShardingTypeError "
        f"(lhs or rhs cannot be unreduced) where JAX types the result {_UNRED}",
    13: "as cell 12 (a reduced weight used twice)",
    14: f"device_put to P(reduced={{'X'}}) then scan over it: NotImplementedError {_UNRED}",
    15: "step of cell 14 is undefined (NotImplementedError there)",
    16: "the numpy_ref backend's compiled text is not XLA's HLO (no all-reduce: prints nothing)",
    17: f"shard_map with out_specs unreduced and lax.pcast to='unreduced': ValueError {_UNRED}",
    18: "as cell 17",
    19: f"shard_map in_specs with reduced={{'X'}}: NotImplementedError {_UNRED}",
}


@pytest.mark.skipif(not os.path.exists(SHARDING_AD), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # as above: one backend
def test_sharding_ad_page_shows_what_jax_shows():
    """JAX's "Autodiff and sharding" page: 7 of its 20 cells agree (5 before cotangents were
    typed as their primals: cell 1's grad, cell 2's jaxpr); the others need unreduced and
    reduced types or XLA's HLO."""
    # The page asks for 2 CPU devices; the tests run with 8 (conftest), which JAX keeps
    # silently and refjax refuses to change once arrays exist (RuntimeError): its mesh of 2
    # devices is made either way.
    drop = ["jax.config.update('jax_num_cpu_devices', 2)"]
    assert _differing_cells(SHARDING_AD, drop) == set(SHARDING_AD_KNOWN)
