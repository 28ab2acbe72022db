"""JAX's sharding pages, written for JAX 0.10's Explicit default: the shard_map notebook
(docs/notebooks/shard_map.md of JAX's source) and "Distributed arrays and automatic
parallelization" (docs/parallel.md), run cell by cell on refjax (make_mesh giving Explicit
axes, the documented option) and on real JAX; every cell must show the same thing (text,
repr, or error class; numbers within float32 rounding), but for the cells listed here with
the reason they differ. A cell that starts to agree, or a new difference, fails the test."""
import os

import jax
import pytest
from doc_cells import jax_cells, run_page
from test_doc_examples import _same

import refjax

PAGE = "/work/jaxsrc/docs/notebooks/shard_map.md"
PARALLEL = "/work/jaxsrc/docs/parallel.md"
NEW_DOCS = "/work/jaxsrc/docs/new_docs/201"

_REM_SINGLETON = ("eager shard_map's vma error: JAX names its own internal function "
                  "('_rem_singleton'), refjax the user's ('<lambda>'); the rest is JAX's text")
KNOWN = {
    19: _REM_SINGLETON,
}
_NO_HLO = ("numpy_ref compiles to no HLO: Compiled.as_text() is the jaxpr it runs (no "
           "all-reduce); on the xla backend the cell agrees (test_sharding_pages_on_xla)")


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
    theirs = jax_cells(lambda: _on_jax(page), (page,), _same)
    assert all(shown != "<syntax>" for _, shown in ours)
    return {i for i, ((_, a), b) in enumerate(zip(ours, theirs)) if not _same(a, b)}


def _on_jax(page):
    with jax.set_mesh(None):
        return run_page(page, refjax=False)


# About 40 s (JAX compiles the page's many programs): the thorough profile's, as its successor
# new_docs/201/shard-map.md; the default run has the parallel, sharding and sharding-ad pages.
@pytest.mark.thorough
@pytest.mark.skipif(not os.path.exists(PAGE), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # the page compiles many programs in JAX: one backend
def test_shard_map_notebook_shows_what_jax_shows():
    assert _differing_cells(PAGE) == set(KNOWN)


PARALLEL_KNOWN = {25: _NO_HLO}


@pytest.mark.skipif(not os.path.exists(PARALLEL), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # as above: one backend
def test_parallel_page_shows_what_jax_shows():
    """35 of the page's 36 cells agree (25 before rich, unreduced arrays, set_mesh's repr and
    JAX's names of jit results' shardings; 15 before sharding in types on Explicit axes)."""
    assert _differing_cells(PARALLEL) == set(PARALLEL_KNOWN)


SHARDING_AD = "/work/jaxsrc/docs/new_docs/301/sharding-ad.md"
SHARDING_AD_KNOWN = {
    15: _NO_HLO,  # on xla the loop over unreduced values compiles whole: `jit(step)/reshard`
    16: _NO_HLO,
}


@pytest.mark.skipif(not os.path.exists(SHARDING_AD), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # as above: one backend
def test_sharding_ad_page_shows_what_jax_shows():
    """JAX's "Autodiff and sharding" page: 18 of its 20 cells agree (5 before cotangents were
    typed as their primals and unreduced values ran outside jit, 14 before reduced values
    went through loops and shard_map, 17 before shard_map's partial evaluation forwarded
    residuals as JAX's); the others need XLA's HLO."""
    # The page asks for 2 CPU devices; the tests run with 8 (conftest), which JAX keeps
    # silently and refjax refuses to change once arrays exist (RuntimeError): its mesh of 2
    # devices is made either way.
    drop = ["jax.config.update('jax_num_cpu_devices', 2)"]
    assert _differing_cells(SHARDING_AD, drop) == set(SHARDING_AD_KNOWN)


# JAX's new docs: 201/sharding.md is parallel.md's successor, 201/shard-map.md the notebook's.
NEW_DOCS_KNOWN = {
    "sharding.md": {25: _NO_HLO},
    "shard-map.md": {
        19: _REM_SINGLETON,
    },
}


# shard-map.md (about 30 s, JAX compiling) runs under the thorough profile.
@pytest.mark.parametrize("page", ["sharding.md",
                                  pytest.param("shard-map.md", marks=pytest.mark.thorough)])
@pytest.mark.skipif(not os.path.exists(NEW_DOCS), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # as above: one backend
def test_new_docs_page_shows_what_jax_shows(page):
    """35 of sharding.md's 36 cells agree, 69 of shard-map.md's 70."""
    assert _differing_cells(f"{NEW_DOCS}/{page}") == set(NEW_DOCS_KNOWN[page])


# The pages' HLO cells agree on the xla backend (about 30 s, JAX compiling both sides).
@pytest.mark.thorough
@pytest.mark.skipif(not os.path.exists(SHARDING_AD), reason="JAX's docs are not checked out here")
@pytest.mark.backends("xla")
@pytest.mark.parametrize("page,known", [
    (PARALLEL, PARALLEL_KNOWN), (f"{NEW_DOCS}/sharding.md", NEW_DOCS_KNOWN["sharding.md"]),
    (SHARDING_AD, SHARDING_AD_KNOWN)])
def test_sharding_pages_on_xla(page, known):
    drop = ["jax.config.update('jax_num_cpu_devices', 2)"]
    xla_known = {i for i, why in known.items() if why is not _NO_HLO}
    assert _differing_cells(page, drop) == xla_known
