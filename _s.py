import numpy as np, functrans as ft, functrans.numpy as fnp
from functrans import lax
a=np.array([[3.,1.],[1.,2.]]); b=np.ones(2)
def tryit(f):
    try: print("OK", f())
    except Exception as e: print(type(e).__name__, e)
tryit(lambda: lax.custom_linear_solve(lambda x: a@x**2, b, lambda mv, r: r, lambda vm, r: r))
tryit(lambda: lax.custom_linear_solve(lambda x: (a@x)[:1], b, lambda mv, r: r))
tryit(lambda: lax.custom_linear_solve(lambda x: a@x, b, lambda mv, r: (r, r)))
tryit(lambda: lax.custom_linear_solve(lambda x: a@x, b, lambda mv, r: r[:1]))
tryit(lambda: lax.custom_linear_solve(lambda x: a@x, np.ones(2, int), lambda mv, r: r))
tryit(lambda: lax.custom_linear_solve(lambda x: a@x, b, lambda mv, r: r, has_aux=True))
tryit(lambda: ft.grad(lambda b: lax.custom_linear_solve(lambda x: a@x, b, lambda mv, r: fnp.linalg.solve(a, r)).sum())(b))
tryit(lambda: ft.jvp(lambda b: lax.custom_linear_solve(lambda x: a@x, b, lambda mv, r: fnp.linalg.solve(a, r)), (b,), (b,)))
tryit(lambda: lax.custom_root(lambda x: x[:1], b, lambda f, x: x, lambda g, y: y))
tryit(lambda: lax.custom_root(lambda x: x, b, lambda f, x: x[:1], lambda g, y: y))
tryit(lambda: lax.custom_root(lambda x: x, b, lambda f, x: x, lambda g, y: y[:1]))
from functrans.scipy.sparse.linalg import cg, gmres
tryit(lambda: cg(np.ones((2,3)), b))
tryit(lambda: cg(a, np.ones(3)))
tryit(lambda: cg(a, b, x0=np.ones(3)))
tryit(lambda: gmres(a, b, solve_method="foo"))
tryit(lambda: cg("a", b))
from functrans.scipy.optimize import minimize
tryit(lambda: minimize(lambda x: (x**2).sum(), np.ones(2), method="L-BFGS-B"))
tryit(lambda: minimize(lambda x: (x**2).sum(), np.ones((2,2)), method="BFGS"))
tryit(lambda: minimize(lambda x: (x**2).sum(), np.ones(2), method="BFGS", options={"foo":1}))
tryit(lambda: minimize(lambda x: (x**2).sum(), np.ones(2), [1], method="BFGS"))
print(ft.make_jaxpr(lambda b: lax.custom_linear_solve(lambda x: a@x, b, lambda mv, r: fnp.linalg.solve(a, r), symmetric=True))(b))
