"""Documentation-style notebooks (written for this test, after the topics of JAX's own pages:
jit caching and impure functions, debug.print, custom derivative rules, checkpoint policies,
type promotion) run cell by cell with `import jax` being refjax and being real JAX; every
cell must show the same thing: the same printed text, the same repr of its last expression,
or the same exception class (numbers within float32 rounding)."""
import re

import pytest

from doc_cells import jax_cells, run_page

pytestmark = pytest.mark.backends("numpy_ref", "xla")

JIT_CACHING = '''
```{code-cell}
import jax
import jax.numpy as jnp
from functools import partial
```
```{code-cell}
def impure(x):
  print("tracing with", x)   # runs when jax traces, not when the program runs
  return x * 2

f = jax.jit(impure)
print(f(1.0))
print(f(2.0))       # same signature: cached, no print
print(f(jnp.arange(3)))
```
```{code-cell}
scale = 10.0
def uses_global(x):
  return x * scale

print(jax.jit(uses_global)(1.0))
scale = 100.0
print(jax.jit(uses_global)(1.0))    # the cached trace still holds the old global
print(jax.jit(uses_global)(jnp.ones(2)))  # a new signature retraces and sees the new one
```
```{code-cell}
def power(x, n):
  print("tracing for n =", n)
  return x ** n

p = jax.jit(power, static_argnums=1)
print(p(2.0, 3), p(2.0, 3), p(2.0, 4))
```
```{code-cell}
jax.jit(partial(power, n=2))(3.0)
```
```{code-cell}
def branchy(x):
  if x > 0:
    return x
  return -x
jax.jit(branchy)(1.0)
```
```{code-cell}
jax.jit(branchy, static_argnums=0)(-2.0)
```
```{code-cell}
print(jax.make_jaxpr(jax.jit(lambda x, y: jnp.sin(x) * y + 1))(1.0, 2.0))
```
'''

DEBUG_PRINT = '''
```{code-cell}
import jax
import jax.numpy as jnp
```
```{code-cell}
@jax.jit
def f(x):
  jax.debug.print("x = {x}", x=x)
  y = jnp.sin(x)
  jax.debug.print("y = {}, sum = {s:.3f}", y, s=y.sum())
  return y * 2

f(jnp.arange(3.0))
```
```{code-cell}
jax.vmap(lambda x: jax.debug.print("lane {}", x))(jnp.arange(3))
```
```{code-cell}
jax.grad(lambda x: (jax.debug.print("primal {}", x), x ** 3)[1])(2.0)
```
```{code-cell}
def body(carry, x):
  jax.debug.print("carry {} x {}", carry, x)
  return carry + x, carry
jax.lax.scan(body, 0, jnp.arange(4))
```
```{code-cell}
def loop_body(i, acc):
  jax.debug.print("iteration {i}", i=i)
  return acc + i
jax.jit(lambda n: jax.lax.fori_loop(0, n, loop_body, 0))(3)
```
```{code-cell}
jax.debug.print("{} unused", 1.0, 2.0)
```
'''

CUSTOM_RULES = '''
```{code-cell}
import jax
import jax.numpy as jnp
from jax import custom_jvp, custom_vjp, grad, jit, vmap, jvp
```
```{code-cell}
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))
print(grad(log1pexp)(100.))
```
```{code-cell}
@custom_jvp
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))

@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  ans = log1pexp(x)
  return ans, x_dot * (1. - 1. / (1. + jnp.exp(x)))

print(grad(log1pexp)(100.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))
```
```{code-cell}
@custom_jvp
def g(x):
  print("called g!")
  return jnp.sin(x)

@g.defjvp
def g_jvp(primals, tangents):
  print("called g_jvp!")
  x, = primals
  t, = tangents
  return g(x), jnp.cos(x) * t
```
```{code-cell}
print(g(3.))
```
```{code-cell}
y, y_dot = jvp(g, (3.,), (1.,))
print(y_dot)
```
```{code-cell}
grad(grad(g))(3.)
```
```{code-cell}
@custom_jvp
def h(x):
  return jnp.where(x > 0, x, 0.0)

@h.defjvp
def h_jvp(primals, tangents):
  x, = primals
  t, = tangents
  if x > 0:          # concrete outside jit
    return h(x), 2 * t
  return h(x), 3 * t

print(grad(h)(1.), grad(h)(-1.))
```
```{code-cell}
@custom_vjp
def clip_gradient(lo, hi, x):
  return x

def clip_fwd(lo, hi, x):
  return x, (lo, hi)

def clip_bwd(res, g):
  lo, hi = res
  return (None, None, jnp.clip(g, lo, hi))

clip_gradient.defvjp(clip_fwd, clip_bwd)

def t(x):
  return jnp.sin(clip_gradient(-0.75, 0.75, x)) * 3.
print(grad(t)(0.), vmap(grad(t))(jnp.linspace(0, 10, 4)))
```
```{code-cell}
jvp(clip_gradient, (-0.5, 0.5, 1.0), (0.0, 0.0, 1.0))
```
```{code-cell}
from collections import namedtuple
Point = namedtuple("Point", ["x", "y"])

@custom_jvp
def pf(pt):
  return {'a': pt.x ** 2, 'b': (jnp.sin(pt.x), jnp.cos(pt.y))}

@pf.defjvp
def pf_jvp(primals, tangents):
  pt, = primals
  dot, = tangents
  ans = pf(pt)
  return ans, {'a': 2 * pt.x * dot.x, 'b': (jnp.cos(pt.x) * dot.x, -jnp.sin(pt.y) * dot.y)}

print(pf(Point(1., 2.)))
print(grad(lambda pt: pf(pt)['a'] + pf(pt)['b'][0])(Point(1., 2.)))
```
'''

CHECKPOINT = '''
```{code-cell}
import jax
import jax.numpy as jnp
from jax.ad_checkpoint import checkpoint_name, print_saved_residuals
```
```{code-cell}
def layer(W, x):
  return jnp.sin(jnp.dot(W, x))

def net(W1, W2, x):
  h = checkpoint_name(layer(W1, x), "hidden")
  return jnp.sum(layer(W2, h))

W1, W2, x = jnp.ones((5, 4)), jnp.ones((3, 5)) * 0.1, jnp.arange(4.0)
print_saved_residuals(net, W1, W2, x)
```
```{code-cell}
print_saved_residuals(jax.checkpoint(net), W1, W2, x)
```
```{code-cell}
policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable
print_saved_residuals(jax.checkpoint(net, policy=policy), W1, W2, x)
```
```{code-cell}
policy = jax.checkpoint_policies.save_only_these_names("hidden")
print_saved_residuals(jax.checkpoint(net, policy=policy), W1, W2, x)
```
```{code-cell}
jax.grad(jax.checkpoint(net, policy=policy))(W1, W2, x)
```
```{code-cell}
jax.checkpoint_policies.save_only_these_names("hidden")
```
'''

PROMOTION = '''
```{code-cell}
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
```
```{code-cell}
print(jnp.promote_types(jnp.int8, jnp.uint8), jnp.promote_types(jnp.bfloat16, jnp.float16))
print(jnp.promote_types(jnp.int32, jnp.float16), jnp.promote_types(jnp.uint32, jnp.int32))
```
```{code-cell}
x = jnp.int16(1) + 1
x, x.dtype
```
```{code-cell}
jnp.asarray(2)
```
```{code-cell}
(jnp.float16(1) + 1.0, jnp.float16(1) + np.float32(1), jnp.int8(1) + np.array(1))
```
```{code-cell}
lax.add(jnp.float32(1), 1.0)
```
```{code-cell}
lax.add(jnp.float32(1), 1)
```
```{code-cell}
lax.add(jnp.uint8(1), jnp.int8(1))
```
```{code-cell}
with jax.numpy_dtype_promotion("strict"):
  print((jnp.float32(1) + 1.0).dtype)
  jnp.int8(1) + jnp.int16(1)
```
'''

PAGES = {"jit_caching": JIT_CACHING, "debug_print": DEBUG_PRINT, "custom_rules": CUSTOM_RULES,
         "checkpoint": CHECKPOINT, "promotion": PROMOTION}

_NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def _same(a, b):
    """Equal text, numbers equal within float32 rounding (XLA's and the oracle's last
    digits may differ, and with them the spacing of printed arrays)."""
    def shape(text):  # numbers' widths change array printing's column spacing
        return re.sub(r"\s+", "", _NUMBER.sub("#", text))
    if shape(a) != shape(b):
        return False
    return all(abs(float(x) - float(y)) <= 2e-6 * max(1.0, abs(float(y)))
               for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_page_shows_what_jax_shows(page):
    ours = run_page(PAGES[page], refjax=True)
    theirs = jax_cells(lambda: run_page(PAGES[page], refjax=False), (PAGES[page],), _same)
    differ = [(src, a, b) for (src, a), b in zip(ours, theirs) if not _same(a, b)]
    assert differ == []
    assert all(shown != "<syntax>" for _, shown in ours)
