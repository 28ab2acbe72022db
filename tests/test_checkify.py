"""jax.experimental.checkify on refjax against real JAX 0.10.2: which programs fail, the
messages of err.get() and the values of out (user checks with formatted values, NaN,
division-by-zero and out-of-bounds checks; under jit inside and outside, vmap, grad, cond,
while, scan), the errors of check outside checkify, and the API's input errors.

Each program is written once against a jax-like namespace. Its outcome on JAX is recorded in
EXPECTED (so the default run does not pay for JAX's compilations) and
test_recorded_outcomes_are_jaxs re-derives each from real JAX (one case by default, all of
them under --hypothesis-profile=thorough)."""
import numpy as np
import pytest

import refjax
import refjax.numpy as rjnp
from refjax.experimental import checkify as rcheckify


def _programs(jax, jnp, checkify):
    """name -> a thunk returning (err, out) (or raising), written against jax/jnp/checkify."""
    lax, ck, f32 = jax.lax, checkify.checkify, jnp.float32

    def positive(x):
        checkify.check(x > 0, "x must be positive, got {}", x)
        return jnp.sin(x)

    def log_then_check(x):
        y = jnp.log(x)
        checkify.check(x > 0, "x={x}", x=x)
        return y

    def while_body(c):
        checkify.check(c < 5, "c is {}", c)
        return c + 1

    def scan_body(c, x):
        checkify.check(x < 2, "x is {}", x)
        return c + x, c

    def fori_body(i, c):
        checkify.check(i < 3, "i {}", i)
        return c + i

    def two_checks(x):
        checkify.check(x > 0, "first {}", x)
        checkify.check(x > 1, "second {}", x)
        return x

    @jax.custom_jvp
    def log_cj(x):
        checkify.check(x > 0, "cj {}", x)
        return jnp.log(x)
    log_cj.defjvp(lambda p, t: (log_cj(p[0]), t[0] / p[0]))

    @jax.custom_vjp
    def log_cv(x):
        checkify.check(x > 0, "cv {}", x)
        return jnp.log(x)
    log_cv.defvjp(lambda x: (log_cv(x), x), lambda r, g: (g / r,))

    def shard_map(f):
        mesh = jax.make_mesh((2,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
        spec = jax.sharding.PartitionSpec("i")
        return jax.shard_map(f, mesh=mesh, in_specs=spec, out_specs=spec)

    def shard_body(x):
        checkify.check(jnp.all(x > 0), "sm {}", x)
        return x * 2

    def psum_body(x):
        checkify.check(jax.lax.psum(x, "i").sum() < 0, "ps {}", x)
        return x

    def check_then_shard_map(x):
        checkify.check(x.sum() > 100, "before {}", x.sum())
        return shard_map(shard_body)(x)

    nan, idx, div, allc = (checkify.nan_checks, checkify.index_checks, checkify.div_checks,
                           checkify.all_checks)
    return {
        "user_check": lambda: ck(positive)(f32(-1.0)),
        "user_check_passes": lambda: ck(positive)(f32(1.0)),
        "jit_inside": lambda: ck(jax.jit(positive))(f32(-2.0)),
        "jit_outside": lambda: jax.jit(ck(positive))(f32(-3.0)),
        "nested_jit": lambda: jax.jit(ck(jax.jit(lambda x: jax.jit(positive)(x) + 1)))(f32(-4.0)),
        "kwargs_and_pytrees": lambda: ck(lambda x: checkify.check(
            x.sum() < 0, "{a} and {b[0]}", a=x, b=(x + 1,)))(jnp.arange(2.0)),
        "first_traced_check_wins": lambda: ck(two_checks)(f32(-0.5)),
        "second_check_fails": lambda: ck(two_checks)(f32(0.5)),
        "nan": lambda: ck(jnp.sin, errors=nan)(f32(np.inf)),
        "nan_not_enabled": lambda: ck(jnp.sin)(f32(np.inf)),
        "nan_int_ops": lambda: ck(lambda x: x * 2, errors=nan)(jnp.arange(3)),
        "check_traced_before_nan": lambda: ck(log_then_check, errors=allc)(f32(-1.0)),
        "user_checks_not_enabled": lambda: ck(log_then_check, errors=nan)(f32(-1.0)),
        "div_int": lambda: ck(jax.jit(lambda x, y: x // y), errors=div)(
            jnp.arange(3), jnp.array([1, 0, 2])),
        "div_passes": lambda: ck(lambda x, y: x // y, errors=div)(
            jnp.arange(3), jnp.array([1, 1, 2])),
        "div_float": lambda: ck(lambda x, y: x / y, errors=checkify.float_checks)(
            jnp.ones(2), jnp.array([1.0, 0.0])),
        "dynamic_slice_oob": lambda: ck(lambda x, i: x[i], errors=idx)(
            jnp.arange(3.0), jnp.array(5)),
        "dynamic_slice_2d": lambda: ck(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)),
                                       errors=idx)(jnp.zeros((4, 5)), 1, 4),
        "dynamic_update_slice_oob": lambda: ck(
            lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)), errors=idx)(
            jnp.zeros(4), 3),
        "gather_oob": lambda: ck(lambda x, i: x[i], errors=idx)(
            jnp.zeros((4, 5)), jnp.array([[0, 2], [7, 1]])),
        "gather_negative": lambda: ck(lambda x, i: x[:, i], errors=idx)(
            jnp.zeros((4, 5)), jnp.array([-7, 1])),
        "scatter_oob": lambda: ck(lambda x, i: x.at[i].set(1.0), errors=idx)(
            jnp.zeros(4), jnp.array([1, 6])),
        "scatter_add_oob": lambda: ck(lambda x, i: x.at[i].add(1.0), errors=idx)(
            jnp.zeros((2, 3)), jnp.array(-9)),
        "int16_index": lambda: ck(lambda x, i: x[i], errors=idx)(
            jnp.zeros(3), jnp.array(5, dtype=jnp.int16)),
        "vmap_of_checkify": lambda: jax.vmap(ck(positive))(jnp.array([1.0, -2.0, -3.0])),
        "vmap_of_checkify_nan": lambda: jax.vmap(ck(jnp.log, errors=nan))(
            jnp.array([1.0, -1.0, -2.0])),
        "vmap_of_checkify_index": lambda: jax.vmap(ck(lambda x, i: x[i], errors=idx))(
            jnp.ones((3, 4)), jnp.array([1, 7, 9])),
        "jit_vmap_of_checkify": lambda: jax.jit(jax.vmap(ck(log_then_check)))(
            jnp.array([1.0, -1.0, 2.0])),
        "checkify_of_vmap": lambda: ck(jax.vmap(positive))(jnp.array([1.0, -2.0, -3.0])),
        "checkify_of_jit_vmap": lambda: ck(jax.jit(jax.vmap(log_then_check)))(
            jnp.array([1.0, -1.0, 2.0])),
        "checkify_of_grad": lambda: ck(jax.grad(positive))(f32(-1.0)),
        "checkify_of_grad_nan": lambda: ck(jax.grad(jnp.sqrt), errors=nan)(f32(-1.0)),
        "grad_of_checkify": lambda: (None, jax.grad(lambda x: ck(positive)(x)[1])(f32(1.0))),
        "cond": lambda: ck(lambda x: lax.cond(x > 0, lambda x: x, positive, x))(f32(-1.0)),
        "cond_nan": lambda: ck(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), errors=nan)(
            f32(-np.inf)),
        "while": lambda: ck(lambda x: lax.while_loop(lambda c: c < 10, while_body, x))(0),
        "while_nan": lambda: ck(lambda x: lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.log(c[1] - 2.0)), (0, x)),
            errors=nan)(f32(5.0)),
        "scan": lambda: ck(lambda xs: lax.scan(scan_body, 0.0, xs))(jnp.arange(5.0)),
        "scan_nan": lambda: ck(lambda xs: lax.scan(lambda c, x: (c + jnp.sqrt(x), c), 0.0, xs),
                               errors=nan)(jnp.array([1.0, -1.0, 2.0])),
        "fori_loop": lambda: ck(lambda n: lax.fori_loop(0, n, fori_body, 0))(6),
        "check_error_under_checkify": lambda: ck(jax.jit(
            lambda x: checkify.check_error(ck(positive)(x)[0])))(f32(-1.0)),
        "debug_check": lambda: ck(lambda x: checkify.debug_check(x > 0, "dbg {}", x))(f32(-1.0)),
        "checkify_of_vmap_of_while": lambda: ck(jax.vmap(
            lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, x)))(jnp.arange(3.0)),
        "custom_jvp": lambda: ck(log_cj)(f32(-1.0)),
        "custom_jvp_nan": lambda: ck(lambda x: jax.nn.relu(jnp.log(x)), errors=nan)(f32(-1.0)),
        "custom_vjp": lambda: ck(log_cv)(f32(-1.0)),
        "checkify_of_grad_custom_vjp": lambda: ck(jax.grad(log_cv))(f32(-1.0)),
        "remat": lambda: ck(jax.checkpoint(positive))(f32(-1.0)),
        "checkify_of_grad_remat": lambda: ck(jax.grad(jax.checkpoint(positive)))(f32(-1.0)),
        "remat_nan": lambda: ck(jax.checkpoint(jnp.log), errors=nan)(f32(-1.0)),
        "shard_map": lambda: ck(shard_map(shard_body))(jnp.array([1.0, -1.0, 2.0, 3.0])),
        "shard_map_both_shards": lambda: ck(shard_map(shard_body))(
            jnp.array([-1.0, 1.0, 2.0, -3.0])),
        "shard_map_passes": lambda: ck(shard_map(shard_body))(jnp.array([1.0, 1.0, 2.0, 3.0])),
        "jit_of_checkify_shard_map": lambda: jax.jit(ck(shard_map(shard_body)))(
            jnp.array([1.0, -1.0, 2.0, 3.0])),
        "shard_map_nan": lambda: ck(shard_map(jnp.log), errors=nan)(jnp.array([1.0, -1.0])),
        "shard_map_psum": lambda: ck(shard_map(psum_body))(jnp.array([1.0, -1.0])),
        "check_then_shard_map": lambda: ck(check_then_shard_map)(
            jnp.array([1.0, -1.0, 2.0, 3.0])),
        # outside checkify
        "check_eager": lambda: (None, positive(f32(-1.0))),
        "check_under_jit": lambda: (None, jax.jit(positive)(f32(1.0))),
        "check_under_vmap": lambda: (None, jax.vmap(log_then_check)(jnp.array([1.0, -1.0, -2.0]))),
        "check_under_grad": lambda: (None, jax.grad(log_then_check)(f32(-1.0))),
        "throw": lambda: (None, ck(positive)(f32(-1.0))[0].throw()),
        "throw_under_jit": lambda: (None, jax.jit(lambda x: ck(positive)(x)[0].throw())(f32(-1.0))),
        "check_error": lambda: (None, checkify.check_error(ck(positive)(f32(-1.0))[0])),
        "debug_check_eager": lambda: (None, checkify.debug_check(f32(-1.0) > 0, "dbg")),
        "debug_check_under_jit": lambda: (None, jax.jit(
            lambda x: checkify.debug_check(x > 0, "dbg"))(f32(-1.0))),
        # the API's input errors
        "non_scalar_pred": lambda: ck(lambda x: checkify.check(x > 0, "m"))(jnp.array([1.0, -1.0])),
        "non_bool_pred": lambda: ck(lambda x: checkify.check(x, "m"))(f32(1.0)),
        "python_scalar_fmt_arg": lambda: ck(lambda x: checkify.check(False, "{}", 3))(f32(1.0)),
        "check_error_of_non_error": lambda: (None, checkify.check_error(3)),
    }


# Recorded from real JAX 0.10.2 (test_recorded_outcomes_are_jaxs checks them against it).
EXPECTED = {'user_check': ('x must be positive, got -1.0 (`check` failed)', [('float32', '-0.84147')]),
 'user_check_passes': (None, [('float32', '0.84147')]),
 'jit_inside': ('x must be positive, got -2.0 (`check` failed)', [('float32', '-0.9093')]),
 'jit_outside': ('x must be positive, got -3.0 (`check` failed)', [('float32', '-0.14112')]),
 'nested_jit': ('x must be positive, got -4.0 (`check` failed)', [('float32', '1.7568')]),
 'kwargs_and_pytrees': ('[0. 1.] and [1. 2.] (`check` failed)', [None]),
 'first_traced_check_wins': ('first -0.5 (`check` failed)', [('float32', '-0.5')]),
 'second_check_fails': ('second 0.5 (`check` failed)', [('float32', '0.5')]),
 'nan': ('nan generated by primitive: sin.', [('float32', 'nan')]),
 'nan_not_enabled': (None, [('float32', 'nan')]),
 'nan_int_ops': (None, [('int32', [0, 2, 4])]),
 'check_traced_before_nan': ('x=-1.0 (`check` failed)', [('float32', 'nan')]),
 'user_checks_not_enabled': ('nan generated by primitive: log.', [('float32', 'nan')]),
 'div_int': ('division by zero', [('int32', [0, -2, 1])]),
 'div_passes': (None, [('int32', [0, 1, 1])]),
 'div_float': ('division by zero', [('float32', '[1.0, inf]')]),
 'dynamic_slice_oob': ('out-of-bounds indexing for array of shape (3,): index 5 is out of '
                       'bounds for axis 0 with size 3. ',
                       [('float32', '2.0')]),
 'dynamic_slice_2d': ('out-of-bounds indexing for array of shape (4, 5): index 4 is out of '
                      'bounds for axis 1 with size 5. ',
                      [('float32', '[[0.0, 0.0], [0.0, 0.0]]')]),
 'dynamic_update_slice_oob': ('out-of-bounds indexing for array of shape (4,): index 3 is out '
                              'of bounds for axis 0 with size 4. ',
                              [('float32', '[0.0, 0.0, 1.0, 1.0]')]),
 'gather_oob': ('out-of-bounds indexing for array of shape (4, 5): index 7 is out of bounds '
                'for axis 0 with size 4. ',
                [('float32',
                  '[[[0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0, '
                  '0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]]]')]),
 'gather_negative': ('out-of-bounds indexing for array of shape (4, 5): index -2 is out of '
                     'bounds for axis 1 with size 5. ',
                     [('float32', '[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]')]),
 'scatter_oob': ('out-of-bounds indexing for array of shape (4,): index 6 is out of bounds for '
                 'axis 0 with size 4. ',
                 [('float32', '[0.0, 1.0, 0.0, 0.0]')]),
 'scatter_add_oob': ('out-of-bounds indexing for array of shape (2, 3): index -7 is out of '
                     'bounds for axis 0 with size 2. ',
                     [('float32', '[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]')]),
 'int16_index': ('out-of-bounds indexing for array of shape (3,): index 5 is out of bounds for '
                 'axis 0 with size 3. ',
                 [('float32', '0.0')]),
 'vmap_of_checkify': ('at mapped index 1: x must be positive, got -2.0 (`check` failed)\n'
                      'at mapped index 2: x must be positive, got -3.0 (`check` failed)',
                      [('float32', '[0.84147, -0.9093, -0.14112]')]),
 'vmap_of_checkify_nan': ('at mapped index 1: nan generated by primitive: log.\n'
                          'at mapped index 2: nan generated by primitive: log.',
                          [('float32', '[0.0, nan, nan]')]),
 'vmap_of_checkify_index': ('at mapped index 1: out-of-bounds indexing for array of shape '
                            '(4,): index 7 is out of bounds for axis 0 with size 4. \n'
                            'at mapped index 2: out-of-bounds indexing for array of shape '
                            '(4,): index 9 is out of bounds for axis 0 with size 4. ',
                            [('float32', '[1.0, 1.0, 1.0]')]),
 'jit_vmap_of_checkify': ('at mapped index 1: x=-1.0 (`check` failed)',
                          [('float32', '[0.0, nan, 0.69315]')]),
 'checkify_of_vmap': ('x must be positive, got -3.0 (`check` failed)',
                      [('float32', '[0.84147, -0.9093, -0.14112]')]),
 'checkify_of_jit_vmap': ('x=-1.0 (`check` failed)', [('float32', '[0.0, nan, 0.69315]')]),
 'checkify_of_grad': ('x must be positive, got -1.0 (`check` failed)', [('float32', '0.5403')]),
 'checkify_of_grad_nan': ('nan generated by primitive: sqrt.', [('float32', 'nan')]),
 'grad_of_checkify': (None, [('float32', '0.5403')]),
 'cond': ('x must be positive, got -1.0 (`check` failed)', [('float32', '-0.84147')]),
 'cond_nan': ('nan generated by primitive: cos.', [('float32', 'nan')]),
 'while': ('c is 5 (`check` failed)', [('int32', 10)]),
 'while_nan': ('nan generated by primitive: log.', [('int32', 3), ('float32', 'nan')]),
 'scan': ('x is 2.0 (`check` failed)',
          [('float32', '10.0'), ('float32', '[0.0, 0.0, 1.0, 3.0, 6.0]')]),
 'scan_nan': ('nan generated by primitive: sqrt.',
              [('float32', 'nan'), ('float32', '[0.0, 1.0, nan]')]),
 'fori_loop': ('i 3 (`check` failed)', [('int32', 15)]),
 'check_error_under_checkify': ('x must be positive, got -1.0 (`check` failed)', [None]),
 'debug_check': ('dbg -1.0 (`check` failed)', [None]),
 'checkify_of_vmap_of_while': ('raises',
                               'ValueError',
                               'Checkify does not support batched while-loops '
                               '(checkify-of-vmap-of-while). '),
 'custom_jvp': ('cj -1.0 (`check` failed)', [('float32', 'nan')]),
 'custom_jvp_nan': ('nan generated by primitive: log.', [('float32', 'nan')]),
 'custom_vjp': ('cv -1.0 (`check` failed)', [('float32', 'nan')]),
 'checkify_of_grad_custom_vjp': ('cv -1.0 (`check` failed)', [('float32', '-1.0')]),
 'remat': ('x must be positive, got -1.0 (`check` failed)', [('float32', '-0.84147')]),
 'checkify_of_grad_remat': ('x must be positive, got -1.0 (`check` failed)',
                            [('float32', '0.5403')]),
 'remat_nan': ('nan generated by primitive: log.', [('float32', 'nan')]),
 'shard_map': ('at mapped index 0: sm [ 1. -1.] (`check` failed)',
               [('float32', '[2.0, -2.0, 4.0, 6.0]')]),
 'shard_map_both_shards': ('at mapped index 0: sm [-1.  1.] (`check` failed)\n'
                           'at mapped index 1: sm [ 2. -3.] (`check` failed)',
                           [('float32', '[-2.0, 2.0, 4.0, -6.0]')]),
 'shard_map_passes': (None, [('float32', '[2.0, 2.0, 4.0, 6.0]')]),
 'jit_of_checkify_shard_map': ('at mapped index 0: sm [ 1. -1.] (`check` failed)',
                               [('float32', '[2.0, -2.0, 4.0, 6.0]')]),
 'shard_map_nan': ('at mapped index 1: nan generated by primitive: log.',
                   [('float32', '[0.0, nan]')]),
 'shard_map_psum': ('at mapped index 0: ps [1.] (`check` failed)\n'
                    'at mapped index 1: ps [-1.] (`check` failed)',
                    [('float32', '[1.0, -1.0]')]),
 'check_then_shard_map': ('at mapped index 0: before 5.0 (`check` failed)\n'
                          'at mapped index 1: before 5.0 (`check` failed)',
                          [('float32', '[2.0, -2.0, 4.0, 6.0]')]),
 'check_eager': ('raises', 'JaxRuntimeError', 'x must be positive, got -1.0 (`check` failed)'),
 'check_under_jit': ('raises',
                     'ValueError',
                     'Cannot abstractly evaluate a checkify.check which was not '
                     'functionalized. This probably means you tried to stage '
                     '(jit/scan/pmap/...) a `check` without functionalizing it through '
                     '`checkify.checkify`.'),
 'check_under_vmap': ('raises', 'JaxRuntimeError', 'x=-2.0 (`check` failed)'),
 'check_under_grad': ('raises', 'JaxRuntimeError', 'x=-1.0 (`check` failed)'),
 'throw': ('raises', 'JaxRuntimeError', 'x must be positive, got -1.0 (`check` failed)'),
 'throw_under_jit': ('raises',
                     'ValueError',
                     'Cannot abstractly evaluate a checkify.check which was not '
                     'functionalized. This probably means you tried to stage '
                     '(jit/scan/pmap/...) a `check` without functionalizing it through '
                     '`checkify.checkify`.'),
 'check_error': ('raises', 'JaxRuntimeError', 'x must be positive, got -1.0 (`check` failed)'),
 'debug_check_eager': (None, [None]),
 'debug_check_under_jit': (None, [None]),
 'non_scalar_pred': ('raises',
                     'TypeError',
                     'check takes a scalar pred as argument, got JitTracer(bool[2])'),
 'non_bool_pred': ('raises', 'TypeError', 'check takes a scalar pred as argument, got 1.0'),
 'python_scalar_fmt_arg': ('raises',
                           'TypeError',
                           'Formatting arguments to checkify.check need to be PyTrees of '
                           "arrays, but got 3 of type <class 'int'>."),
 'check_error_of_non_error': ('raises',
                              'TypeError',
                              "check_error takes an Error as argument, got type <class 'int'> "
                              'instead.')}


def _value(x):
    """x as (dtype, nested lists), floats to 5 decimals (the backends' sin may differ by an
    ulp from XLA's)."""
    if x is None:
        return None
    x = np.asarray(x)
    if x.dtype.kind in "fc":  # as text, so that NaNs compare equal
        return (str(x.dtype), str(np.round(x.astype(np.float64), 5).tolist()))
    return (str(x.dtype), x.tolist())


def _outcome(thunk):
    """(message of err.get(), out as lists) or ('raises', class name, message)."""
    try:
        err, out = thunk()
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return ("raises", type(e).__name__, str(e).split("\n")[0])
    msg = None if err is None else err.get()
    return (msg, [_value(o) for o in (out if isinstance(out, tuple) else (out,))])


_REFJAX = _programs(refjax, rjnp, rcheckify)


@pytest.mark.backends("numpy_ref", "xla")
def test_matches_jax():
    """Every program's outcome on refjax is JAX's (recorded in EXPECTED)."""
    assert set(_REFJAX) == set(EXPECTED)
    got = {name: _outcome(thunk) for name, thunk in _REFJAX.items()}
    wrong = {name: (got[name], EXPECTED[name]) for name in got if got[name] != EXPECTED[name]}
    assert not wrong


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_outcomes_are_jaxs(name):
    """EXPECTED is what real JAX 0.10.2 does."""
    import jax
    import jax.numpy as jjnp
    from jax.experimental import checkify
    assert _outcome(_programs(jax, jjnp, checkify)[name]) == EXPECTED[name]


def test_namespace_as_jax():
    import jax.experimental.checkify as jax_checkify

    def public(module):
        return {n for n in dir(module) if not n.startswith("_")}
    assert public(rcheckify) == public(jax_checkify)
    assert rcheckify.JaxRuntimeError.__mro__[1] is ValueError  # as JAX's


def test_non_string_message_is_refused_when_checked():
    """Better than JAX, which accepts `check(pred, 5)` and fails in err.get() with
    AttributeError: 'int' object has no attribute 'format'."""
    with pytest.raises(TypeError, match="checkify.check's msg must be a str, got int"):
        rcheckify.checkify(lambda x: rcheckify.check(x > 0, 5))(rjnp.float32(-1.0))


def test_error_is_a_pytree_of_arrays():
    """jit returns the Error as JAX does: predicates, codes and payloads are arrays, and the
    Error passes through jit and tree functions unchanged."""
    def f(x):
        rcheckify.check(x > 0, "x={}", x)
        return x
    err, _ = refjax.jit(rcheckify.checkify(f))(rjnp.float32(-1.0))
    leaves, tree = refjax.tree_util.tree_flatten(err)
    assert [np.asarray(v).dtype for v in leaves] == [np.bool_, np.int32, np.float32]
    again = refjax.tree_util.tree_unflatten(tree, leaves)
    assert again.get() == "x=-1.0 (`check` failed)" == str(err)[6:-1]


def test_checks_after_a_shard_map():
    """Better than JAX, which fails (IndexError in err.get(), TypeError from select) when a
    check or a NaN check follows a shard_map's (per-shard, batched) error: refjax holds the
    later checks for every shard. Shard 0 failed inside (its check was traced first), shard
    1 only after; the second program has no NaN."""
    ck, check = rcheckify.checkify, rcheckify.check
    mesh = refjax.make_mesh((2,), ("i",), axis_types=(refjax.sharding.AxisType.Auto,))
    spec = refjax.sharding.PartitionSpec("i")

    def body(x):
        check(rjnp.all(x > 0), "sm {}", x)
        return x * 2

    def after(x):
        y = refjax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec)(x)
        check(x.sum() > 100, "after {}", x.sum())
        return y
    err, out = ck(after)(rjnp.array([1.0, -1.0, 2.0, 3.0]))
    assert err.get() == ("at mapped index 0: sm [ 1. -1.] (`check` failed)\n"
                         "at mapped index 1: after 5.0 (`check` failed)")
    np.testing.assert_array_equal(out, [2.0, -2.0, 4.0, 6.0])
    logs = refjax.shard_map(rjnp.log, mesh=mesh, in_specs=spec, out_specs=spec)
    err, _ = ck(lambda x: rjnp.log(logs(x)), errors=rcheckify.nan_checks)(rjnp.array([3.0, 4.0]))
    assert err.get() is None


def test_nan_checked_primitives_are_jaxs():
    """nan_checks check the outputs of the primitives JAX 0.10.2 lists, and only those."""
    from jax._src import checkify as jax_checkify_impl
    from refjax.core.transforms.checkify_rules import NAN_PRIMITIVES
    assert sorted(NAN_PRIMITIVES) == sorted(p.name for p in jax_checkify_impl.nan_primitives)


def test_jaxprs_print_as_jaxs():
    """make_jaxpr of a function with checks, and of its checkify (with jit, cond, scan and
    vmap), are JAX's text (the codes of the checks, global counters in both, aside). Known
    differences: a checkified while (JAX stages the next test of the predicate in the body
    with an internal dce_sink) and index checks (JAX computes the payload with jitted jnp
    helpers)."""
    import re

    import jax
    import jax.numpy as jjnp
    from jax.experimental import checkify as jax_checkify

    def programs(jax_, jnp, checkify):
        def f(x):
            checkify.check(x > 0, "x={}", x)
            return jnp.log(x)
        def scan_body(c, x):
            checkify.check(x < 2, "x is {}", x)
            return c + x, c
        x, ck = jnp.float32(1.0), checkify.checkify
        return [jax_.make_jaxpr(f)(x), jax_.make_jaxpr(ck(f))(x),
                jax_.make_jaxpr(lambda x: checkify.debug_check(x > 0, "m"))(x),
                jax_.make_jaxpr(ck(f, errors=checkify.all_checks))(x),
                jax_.make_jaxpr(ck(jax_.jit(f)))(x),
                jax_.make_jaxpr(ck(lambda x: jax_.lax.cond(x > 0, lambda x: x, f, x)))(x),
                jax_.make_jaxpr(ck(lambda xs: jax_.lax.scan(scan_body, 0.0, xs)))(jnp.arange(3.0)),
                jax_.make_jaxpr(jax_.vmap(ck(f)))(jnp.arange(3.0))]

    def text(jaxprs):
        return [re.sub(r"\b\d+:i32\[\]", "N:i32[]", str(j)) for j in jaxprs]
    assert text(programs(refjax, rjnp, rcheckify)) == text(programs(jax, jjnp, jax_checkify))
