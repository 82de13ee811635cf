"""L-BFGS: a quasi-Newton method that builds its curvature estimate from the last
``history_size`` steps, with an optional strong-Wolfe line search. It needs a closure that
re-evaluates the loss (and its gradient). The algorithm and its state follow PyTorch's
``LBFGS`` step for step; the arithmetic runs on flat numpy vectors in the parameters' dtype.
"""
import numpy as np

from ..graph import enable_grad, no_grad
from ..context import default_context
from ..ops.alloc import data
from ..ops.creation import tensor
from .line_search import strong_wolfe
from .optimizer import Optimizer


class LBFGS(Optimizer):
    """L-BFGS over one parameter group: ``opt.step(closure)`` runs up to ``max_iter`` iterations.

    Args:
        lr: step length (default 1). max_iter: iterations per ``step`` (20).
        max_eval: closure evaluations per ``step`` (default max_iter * 5 // 4).
        tolerance_grad, tolerance_change: stopping tolerances (1e-7, 1e-9).
        history_size: update pairs kept (100). line_search_fn: None or "strong_wolfe".

    Example:
        >>> opt = LBFGS([w], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad(); loss = ((w - 3) ** 2).sum(); loss.backward(); return loss
        >>> _ = opt.step(closure)
        >>> [round(v, 4) for v in w.tolist()]
        [3.0, 3.0, 3.0]
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def check_group(self, group):
        if not 0.0 <= group["lr"]:
            raise ValueError(f"LBFGS: invalid learning rate: {group['lr']}")
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise RuntimeError("LBFGS: only 'strong_wolfe' is supported as line_search_fn")

    # -- flat views of the parameters -----------------------------------------
    def _flat_grad(self):
        parts = []
        for p in self._params:
            g = p.grad
            parts.append(np.zeros(p.numel(), data(p, "LBFGS").dtype) if g is None
                         else data(g, "LBFGS").reshape(-1))
        return np.concatenate(parts)

    def _add_grad(self, t, d):
        off = 0
        for p in self._params:
            a = data(p, "LBFGS")
            n = a.size
            a[...] += (d[off:off + n] * t).astype(a.dtype).reshape(a.shape)
            p._bump_version()
            off += n

    def _get_params(self):
        return [data(p, "LBFGS").copy() for p in self._params]

    def _set_params(self, xs):
        for p, x in zip(self._params, xs):
            data(p, "LBFGS")[...] = x
            p._bump_version()

    def _evaluate(self, closure):
        with enable_grad():
            return float(closure())

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = self._evaluate(closure)
        g = self._flat_grad().copy()
        self._set_params(x)
        return loss, g

    # -- the step ---------------------------------------------------------------
    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the loss of the first evaluation."""
        if closure is None:
            raise RuntimeError("LBFGS.step requires a closure that recomputes the loss")
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        st = _State(state)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        st.func_evals += 1
        g = self._flat_grad().copy()
        if np.abs(g).max() <= group["tolerance_grad"]:
            st.save(state)
            return orig_loss
        with no_grad():
            self._iterate(closure, group, st, loss, g, evals)
        st.save(state)
        return orig_loss

    def _direction(self, st, g, history_size):
        """The two-loop recursion: d = -H g from the stored (y, s) pairs."""
        y = g - st.prev_flat_grad
        s = st.d * st.t
        ys = y.dot(s)
        if ys > 1e-10:
            if len(st.old_dirs) == history_size:
                st.old_dirs.pop(0)
                st.old_stps.pop(0)
                st.ro.pop(0)
            st.old_dirs.append(y)
            st.old_stps.append(s)
            st.ro.append(1.0 / ys)
            st.H_diag = ys / y.dot(y)
        if st.al is None:
            st.al = [None] * history_size
        q = -g
        for i in range(len(st.old_dirs) - 1, -1, -1):
            st.al[i] = st.old_stps[i].dot(q) * st.ro[i]
            q = q - st.al[i] * st.old_dirs[i]
        r = q * st.H_diag
        for i in range(len(st.old_dirs)):
            be_i = st.old_dirs[i].dot(r) * st.ro[i]
            r = r + (st.al[i] - be_i) * st.old_stps[i]
        return r

    def _iterate(self, closure, group, st, loss, g, evals):
        lr, tol_change = group["lr"], group["tolerance_change"]
        n_iter = 0
        while n_iter < group["max_iter"]:
            n_iter += 1
            st.n_iter += 1
            if st.n_iter == 1:
                st.d, st.old_dirs, st.old_stps, st.ro, st.H_diag = -g, [], [], [], g.dtype.type(1)
            else:
                st.d = self._direction(st, g, group["history_size"])
            st.prev_flat_grad = g.copy()
            st.prev_loss = loss
            if st.n_iter == 1:
                st.t = min(g.dtype.type(1.0), g.dtype.type(1.0) / np.abs(g).sum()) * lr
            else:
                st.t = lr
            gtd = g.dot(st.d)
            if gtd > -tol_change:
                break
            if group["line_search_fn"] is not None:
                x0 = self._get_params()
                loss, g, st.t, ls_evals = strong_wolfe(
                    lambda x, t, d: self._directional_evaluate(closure, x, t, d), x0, st.t, st.d,
                    loss, g, gtd, max_ls=group["max_eval"] - evals)
                self._add_grad(st.t, st.d)
                opt_cond = np.abs(g).max() <= group["tolerance_grad"]
            else:
                self._add_grad(st.t, st.d)
                ls_evals = 0
                opt_cond = False
                if n_iter != group["max_iter"]:
                    loss = self._evaluate(closure)
                    g = self._flat_grad().copy()
                    opt_cond = np.abs(g).max() <= group["tolerance_grad"]
                    ls_evals = 1
            evals += ls_evals
            st.func_evals += ls_evals
            if n_iter == group["max_iter"] or evals >= group["max_eval"] or opt_cond:
                break
            if np.abs(st.d * st.t).max() <= tol_change or abs(loss - st.prev_loss) < tol_change:
                break


_KEYS = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss", "al")


class _State:
    """LBFGS's state as numpy values while a step runs; saved as persistent tensors between steps
    under PyTorch's keys (func_evals, n_iter, d, t, old_dirs, old_stps, ro, H_diag, ...)."""

    def __init__(self, state):
        self.func_evals = state.get("func_evals", 0)
        self.n_iter = state.get("n_iter", 0)
        for k in _KEYS:
            setattr(self, k, _to_np(state.get(k)))

    def save(self, state):
        state["func_evals"], state["n_iter"] = self.func_evals, self.n_iter
        with default_context().persistent():
            for k in _KEYS:
                v = getattr(self, k)
                if v is not None:
                    state[k] = _to_tensor(v)


def _to_np(v):
    if v is None or isinstance(v, (int, float)):
        return v
    if isinstance(v, list):
        return [_to_np(x) for x in v]
    a = v.numpy() if hasattr(v, "numpy") else np.asarray(v)
    return a.copy() if a.ndim else a.dtype.type(a)


def _to_tensor(v):
    if v is None:
        return None
    if isinstance(v, list):
        return [_to_tensor(x) for x in v]
    if isinstance(v, (int, float)) and not isinstance(v, np.generic):
        return v
    return tensor(np.asarray(v))
