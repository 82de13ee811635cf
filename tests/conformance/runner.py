"""Running one conformance example on newch and on torch, and comparing everything observable.

For an ``Op`` row: both raise or neither does; outputs have the same structure,
shapes, dtype names, ``requires_grad`` flags and values (within the row's
per-dtype tolerance); newch leaves its inputs unchanged; and after a backward
from the same random upstream gradient, every input has the same gradient
(a missing gradient counts as zeros). ``Layer`` rows also compare parameter
names, shapes and gradients; ``Optim`` rows compare parameters after each step.
"""
import warnings

import numpy as np

import newch
from .cases import convert, convert_value, describe, tensors_in


class Mismatch(AssertionError):
    """newch and torch disagree on an example."""


def is_nc(x):
    return isinstance(x, newch.Tensor)


def _call(fn, lib, args, kwargs):
    """(result, None) or (None, the exception ``fn(lib, *args, **kwargs)`` raised)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(lib, *args, **kwargs), None
        except Exception as e:   # noqa: BLE001  (any exception counts as "raised")
            return None, e


def check_raised(what, t_err, n_err, n_result=None):
    """Both raised, or neither did; otherwise a Mismatch naming who raised what."""
    if t_err is not None and n_err is None:
        raise Mismatch(f"{what}: torch raises {type(t_err).__name__}: {t_err} -- newch does not "
                       f"(it returned {_short(n_result)})")
    if n_err is not None and t_err is None:
        raise Mismatch(f"{what}: newch raises {type(n_err).__name__}: {n_err} -- torch does not") \
            from n_err


def _short(x):
    if is_nc(x):
        return f"Tensor{tuple(x.shape)}:{x.dtype.name}"
    return type(x).__name__


def dtype_name(d):
    return str(d).rsplit(".", 1)[-1]


def to_numpy(t):
    """A copy of tensor ``t``'s values as numpy (either library)."""
    return np.array(t.detach().numpy(), copy=True)


def assert_values(n_arr, t_arr, tol, path):
    """Equal for integer / bool arrays; within ``tol[dtype]`` (atol scaled by magnitude) for floats."""
    if t_arr.dtype.kind in "biu":
        np.testing.assert_array_equal(n_arr, t_arr, err_msg=path)
        return
    rtol, atol = tol[t_arr.dtype.name]
    finite = np.abs(t_arr[np.isfinite(t_arr)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(n_arr, t_arr, rtol=rtol, atol=atol * scale, equal_nan=True,
                               err_msg=path)


def compare(torch, n, t, tol, path="output", values=True):
    """Recursively compare a newch result ``n`` with torch's ``t``."""
    if isinstance(t, torch.Tensor):
        if not is_nc(n):
            raise Mismatch(f"{path}: torch gives a Tensor, newch gives {type(n).__name__}")
        if tuple(n.shape) != tuple(t.shape):
            raise Mismatch(f"{path}: shape {tuple(n.shape)} != torch's {tuple(t.shape)}")
        if n.dtype.name != dtype_name(t.dtype):
            raise Mismatch(f"{path}: dtype {n.dtype.name} != torch's {dtype_name(t.dtype)}")
        if n.requires_grad != t.requires_grad:
            raise Mismatch(f"{path}: requires_grad {n.requires_grad} != torch's {t.requires_grad}")
        if values:
            assert_values(to_numpy(n), to_numpy(t), tol, path)
    elif isinstance(t, np.ndarray):
        if not isinstance(n, np.ndarray) or n.shape != t.shape or n.dtype != t.dtype:
            raise Mismatch(f"{path}: {_short(n)} is not a numpy array like torch's "
                           f"{t.shape} {t.dtype}")
        assert_values(n, t, tol, path)
    elif isinstance(t, torch.dtype):
        if dtype_name(n) != dtype_name(t):
            raise Mismatch(f"{path}: {n!r} != torch's {t!r}")
    elif isinstance(t, (tuple, list)):
        if not isinstance(n, (tuple, list)) or len(n) != len(t):
            raise Mismatch(f"{path}: torch gives {type(t).__name__} of {len(t)}, newch {n!r}")
        for i, (a, b) in enumerate(zip(n, t)):
            compare(torch, a, b, tol, f"{path}[{i}]", values)
    elif t is None or isinstance(t, (bool, str)):
        if n != t or type(n) is not type(t):
            raise Mismatch(f"{path}: {n!r} != torch's {t!r}")
    elif isinstance(t, (int, float)):
        if not isinstance(n, (int, float)) or isinstance(n, bool):
            raise Mismatch(f"{path}: {n!r} is not a number like torch's {t!r}")
        if values:
            assert_values(np.array(n, np.float64), np.array(t, np.float64), tol, path)
    else:
        raise Mismatch(f"{path}: don't know how to compare torch's {type(t).__name__}")


def _grads(torch, t_outs, n_outs, seed, what):
    """Backward from the same random upstream gradients on both sides; Mismatch if only one raises."""
    rng = np.random.default_rng(seed)
    ups = [rng.uniform(-1.0, 1.0, tuple(o.shape)).astype(dtype_name(o.dtype)) for o in t_outs]
    _, t_err = _call(lambda lib: lib.autograd.backward(t_outs, [lib.from_numpy(u) for u in ups]),
                     torch, (), {})
    _, n_err = _call(lambda lib: lib.autograd.backward(n_outs, [lib.tensor(u) for u in ups]),
                     newch, (), {})
    check_raised(f"{what} backward", t_err, n_err)
    return t_err is None


def compare_grad(torch, n_leaf, t_leaf, tol, path, working=None):
    """The gradient of one leaf (None is taken as zeros).

    ``working``: the lowest float precision the computation went through; a float64 leaf
    mixed with float32 tensors gets float32 rounding in its gradient, in either library.
    """
    tg = t_leaf.grad
    ng = n_leaf.grad
    if ng is not None and tuple(ng.shape) != tuple(t_leaf.shape):
        raise Mismatch(f"{path}: gradient shape {tuple(ng.shape)} != input shape "
                       f"{tuple(t_leaf.shape)}")
    ta = to_numpy(tg) if tg is not None else np.zeros(tuple(t_leaf.shape), dtype_name(t_leaf.dtype))
    na = to_numpy(ng) if ng is not None else np.zeros(tuple(t_leaf.shape), ta.dtype)
    if working == "float32" and ta.dtype == np.float64:
        tol = {**tol, "float64": tol["float32"]}
    assert_values(na, ta, tol, path)


def _differentiable_outputs(torch, t_out, n_out):
    t_outs = [o for o in tensors_in(t_out, lambda x: isinstance(x, torch.Tensor)) if o.requires_grad]
    n_outs = [o for o in tensors_in(n_out, is_nc) if o.requires_grad]
    return t_outs, n_outs


def run_op(torch, row, label, case):
    """One example of Op ``row`` in spelling ``label``."""
    nc_call, th_call = row.calls[label]
    t_args, t_kw = convert(torch, case, row.grad)
    n_args, n_kw = convert(newch, case, row.grad)
    t_out, t_err = _call(th_call, torch, t_args, t_kw)
    n_out, n_err = _call(nc_call, newch, n_args, n_kw)
    if n_err is not None and t_err is None and row.lenient is not None and row.lenient(case):
        return
    check_raised(label, t_err, n_err, n_out)
    if t_err is not None:
        return
    compare(torch, n_out, t_out, row.tol, values=row.values)
    if row.prop is not None:
        row.prop(n_out, case)
    if not row.mutates:
        _inputs_unchanged(case, n_args, n_kw)
    t_outs, n_outs = _differentiable_outputs(torch, t_out, n_out)
    if not (row.grad and t_outs) or not _grads(torch, t_outs, n_outs, case.seed, label):
        return
    t_leaves = tensors_in((t_args, t_kw), lambda x: isinstance(x, torch.Tensor))
    n_leaves = tensors_in((n_args, n_kw), is_nc)
    working = "float32" if any(str(t.dtype) == "torch.float32" for t in t_leaves + t_outs) \
        else "float64"
    for i, (nl, tl) in enumerate(zip(n_leaves, t_leaves)):
        if tl.requires_grad:
            compare_grad(torch, nl, tl, row.gtol, f"gradient of tensor input {i}", working)


def _inputs_unchanged(case, n_args, n_kw):
    from .cases import arrays_in
    for i, (a, t) in enumerate(zip(arrays_in((case.args, case.kwargs)),
                                   tensors_in((n_args, n_kw), is_nc))):
        if t.is_alive:
            np.testing.assert_array_equal(to_numpy(t), a, err_msg=f"newch changed input {i}")


def run_bad(torch, row, label, case):
    """A fixed invalid example: torch must raise (else the table is wrong) and so must newch."""
    nc_call, th_call = row.calls[label]
    t_args, t_kw = convert(torch, case, False)
    n_args, n_kw = convert(newch, case, False)
    t_out, t_err = _call(th_call, torch, t_args, t_kw)
    assert t_err is not None, f"table error: torch accepts the 'bad' case {case} of {label}"
    n_out, n_err = _call(nc_call, newch, n_args, n_kw)
    check_raised(f"{label} (invalid input {describe(case.args)})", t_err, n_err, n_out)


def _load_params(torch, t_mod, n_mod):
    """Check both modules have the same parameter names, shapes and dtypes; copy torch's values."""
    tp, np_ = dict(t_mod.named_parameters()), dict(n_mod.named_parameters())
    if list(tp) != list(np_):
        raise Mismatch(f"parameter names {list(np_)} != torch's {list(tp)}")
    for k in tp:
        if tuple(np_[k].shape) != tuple(tp[k].shape) or np_[k].dtype.name != dtype_name(tp[k].dtype):
            raise Mismatch(f"parameter {k}: {tuple(np_[k].shape)} {np_[k].dtype.name} != torch's "
                           f"{tuple(tp[k].shape)} {dtype_name(tp[k].dtype)}")
    if list(t_mod.state_dict()) != list(n_mod.state_dict()):
        raise Mismatch(f"state_dict keys {list(n_mod.state_dict())} != torch's "
                       f"{list(t_mod.state_dict())}")
    with newch.no_grad():
        for k in tp:
            np_[k].copy_(newch.tensor(to_numpy(tp[k])))
    return tp, np_


def run_layer(torch, row, cfg, case):
    """One example of Layer ``row``: build, copy parameters, forward, backward, compare."""
    t_mod, t_err = _call(lambda lib: row.build(lib, **cfg), torch, (), {})
    n_mod, n_err = _call(lambda lib: row.build(lib, **cfg), newch, (), {})
    t_args = convert_value(torch, case.args, True)
    if n_err is not None and t_err is None:
        # NOTE: newch checks options when the layer is built, torch when it runs: either is fine
        _, t_err = _call(lambda lib, *xs: row.forward(t_mod, *xs), torch, t_args, {})
    check_raised(f"{row.name}(**{cfg})", t_err, n_err, n_mod)
    if t_err is not None:
        return
    tp, np_ = _load_params(torch, t_mod, n_mod)
    n_args = convert_value(newch, case.args, True)
    t_out, t_err = _call(lambda lib, *xs: row.forward(t_mod, *xs), torch, t_args, {})
    n_out, n_err = _call(lambda lib, *xs: row.forward(n_mod, *xs), newch, n_args, {})
    check_raised(f"{row.name} forward", t_err, n_err, n_out)
    if t_err is not None:
        return
    compare(torch, n_out, t_out, row.tol)
    t_outs, n_outs = _differentiable_outputs(torch, t_out, n_out)
    if not t_outs or not _grads(torch, t_outs, n_outs, case.seed, row.name):
        return
    t_leaves = tensors_in(t_args, lambda x: isinstance(x, torch.Tensor))
    for i, (nl, tl) in enumerate(zip(tensors_in(n_args, is_nc), t_leaves)):
        if tl.requires_grad:
            compare_grad(torch, nl, tl, row.gtol, f"gradient of input {i}")
    for k in tp:
        compare_grad(torch, np_[k], tp[k], row.gtol, f"gradient of parameter {k}")


def _quadratic_step(lib, opt, params, coefs, shifts, used):
    """zero_grad, backward of sum(c * p**2 / 2 + s * p) over the ``used`` params, step."""
    opt.zero_grad()
    loss = None
    for p, c, s, u in zip(params, coefs, shifts, used):
        if u:
            term = (lib.tensor(c) * p * p * 0.5 + lib.tensor(s) * p).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
    opt.step()


def run_optim(torch, row, cfg, shapes, steps, seed):
    """``steps`` optimizer steps on the same quadratic on both sides; parameters compared each step."""
    rng = np.random.default_rng(seed)
    init = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    t_params = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in init]
    n_params = [newch.nn.Parameter(newch.tensor(a)) for a in init]
    groups = cfg.pop("groups", None)

    def params_of(ps):
        if not groups:
            return ps
        return [{"params": ps[:1]}, {"params": ps[1:], **groups}]
    t_opt, t_err = _call(lambda lib: row.build(lib, params_of(t_params), **cfg), torch, (), {})
    n_opt, n_err = _call(lambda lib: row.build(lib, params_of(n_params), **cfg), newch, (), {})
    check_raised(f"{row.name}(**{cfg})", t_err, n_err, n_opt)
    if t_err is not None:
        return
    for k in range(steps):
        coefs = [rng.uniform(0.5, 2.0, s).astype(np.float32) for s in shapes]
        shifts = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
        used = [rng.random() < 0.8 for _ in shapes]
        _quadratic_step(torch, t_opt, t_params, coefs, shifts, used)
        _quadratic_step(newch, n_opt, n_params, coefs, shifts, used)
        newch.step_end()
        for i, (n, t) in enumerate(zip(n_params, t_params)):
            assert_values(to_numpy(n), to_numpy(t), row.tol, f"parameter {i} after step {k + 1}")
