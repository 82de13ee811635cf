"""The Optimizer base: parameter groups, per-parameter state, zero_grad, state_dict and step.

A subclass validates its options (``check_group``) and supplies two methods,
in the spirit of MLX's optimizers: ``init_single`` creates one parameter's
state before its first update, ``apply_single`` updates one parameter with
one fused kernel call. ``step()`` does the rest: it finds the parameters
that have a gradient, hands their data to ``apply_single`` as flat
contiguous arrays and commits the state.

Memory: optimizer state lives in persistent memory (``state_tensor``), and
``step()`` allocates nothing in the step arena, unless a parameter or its
gradient is not contiguous; such arrays are staged through arena scratch
that is given back before ``step()`` returns.
"""
import copy
from collections import defaultdict
from numbers import Real

from ..graph import enable_grad
from ..context import default_context
from ..dtypes import float32
from ..ops.alloc import data, empty
from ..ops.launch import copy_into
from ..tensor import Tensor


class _Required:
    """Marks a group option that has no default: every parameter group must give it."""

    def __repr__(self):
        return "<required parameter>"


required = _Required()
_UNORDERED = ("{}: parameters must be given in an ordered collection (list, tuple, generator), "
              "got a set, whose order changes from run to run")


def state_tensor(p):
    """A new persistent tensor with ``p``'s shape and dtype, zero-filled, for optimizer state.

    Example:
        >>> buf = state_tensor(weight)   # survives step_end(), freed with the optimizer
    """
    out = empty(tuple(p.shape), p.dtype, persistent=True)
    out._data("state_tensor").fill(0)
    return out


def step_tensor(value=0.0):
    """A persistent float32 0-d tensor holding a step count (PyTorch keeps ``state["step"]`` so)."""
    out = empty((), float32, persistent=True)
    out._data("step_tensor")[...] = value
    return out


def advance_step(state, op):
    """Add one to ``state["step"]`` in place and return the new count as a Python float."""
    t = state.get("step")
    if not isinstance(t, Tensor):
        raise ValueError(f"{op}: a parameter's state has no 'step' tensor (was it loaded from "
                         f"another optimizer's state_dict?)")
    a = data(t, op)
    if a.size != 1:
        raise ValueError(f"{op}: state 'step' must hold one number, got shape {tuple(a.shape)}")
    a[...] = a + a.dtype.type(1)
    t._bump_version()
    return float(a.reshape(-1)[0])


def state_array(state, key, param, op):
    """The flat array of state tensor ``state[key]``, checked to be alive and to fit ``param``.

    Example:
        >>> state = {"exp_avg": state_tensor(w)}
        >>> param_flat = w.detach().numpy().reshape(-1)      # the parameter's flat array
        >>> state_array(state, "exp_avg", param_flat, "Adam.step").shape
        (3,)
    """
    t = state.get(key)
    if not isinstance(t, Tensor):
        raise ValueError(f"{op}: a parameter's state has no {key!r} tensor (was it loaded from "
                         f"another optimizer's state_dict?)")
    a = data(t, op)
    if a.size != param.size or a.dtype != param.dtype or not a.flags.c_contiguous:
        raise ValueError(f"{op}: state {key!r} ({tuple(a.shape)}, {t.dtype}) does not fit its "
                         f"parameter ({param.size} elements, {param.dtype})")
    t._bump_version()
    return a.reshape(-1)


def check_number(cls, name, value):
    """Raise TypeError unless ``value`` is a real number (option ``name`` of optimizer ``cls``)."""
    if not isinstance(value, Real):
        raise TypeError(f"{cls}: {name} must be a number, got {type(value).__name__} {value!r}")


class Optimizer:
    """Base class of newch optimizers.

    Args:
        params: an iterable of persistent float tensors, or of dicts each with a
            ``"params"`` entry and per-group options overriding ``defaults``.
        defaults: the options of a group that does not give them.

    Attributes:
        param_groups: list of dicts, each with ``"params"`` (a list of tensors)
            and the group's options.
        state: dict from parameter tensor to its state dict (tensors hash by identity).

    Example:
        >>> opt = newch.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.01}], lr=0.1)
        >>> opt.param_groups[1]["lr"]
        0.01
    """

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = defaultdict(dict)
        self.param_groups = []
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(f"{name}: params must be an iterable of Tensors or of dicts, got a "
                            f"Tensor; pass [tensor] or model.parameters()")
        if isinstance(params, dict):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(_UNORDERED.format(name))
        groups = list(params)
        if not groups:
            raise ValueError(f"{name}: got an empty parameter list; pass the tensors to optimize")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # -- groups ---------------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a group of parameters with its own options (missing ones come from ``defaults``).

        Example:
            >>> with newch.persistent():
            ...     head_w = newch.zeros(2, requires_grad=True)
            >>> opt.add_param_group({"params": [head_w], "lr": 0.01})
            >>> [g["lr"] for g in opt.param_groups]
            [0.1, 0.01]
        """
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}.add_param_group: expected a dict with a 'params' entry, got "
                            f"{type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError(f"{name}.add_param_group: the group has no 'params' entry")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(_UNORDERED.format(name))
        params = list(params)
        for i, p in enumerate(params):
            self._check_param(name, i, p)
        if len({id(p) for p in params}) != len(params):
            raise ValueError(f"{name}: a parameter group lists the same tensor more than once")
        group = {k: v for k, v in param_group.items() if k != "params"}
        for key, default in self.defaults.items():
            group.setdefault(key, default)
            if group[key] is required:
                raise ValueError(f"{name}: a parameter group does not give {key!r}, which has no "
                                 f"default")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        self.check_group(group)
        group["params"] = params
        self.param_groups.append(group)

    @staticmethod
    def _check_param(name, i, p):
        if not isinstance(p, Tensor):
            raise TypeError(f"{name}: parameters must be Tensors, but parameter {i} is a "
                            f"{type(p).__name__}")
        if not p.is_leaf:
            raise ValueError(f"{name}: parameter {i} is not a leaf tensor (it has a grad_fn); "
                             f"optimize the leaf, or .detach().requires_grad_() a copy")
        if not p.dtype.is_floating_point:
            raise TypeError(f"{name}: parameters must be floating point tensors, but parameter "
                            f"{i} is {p.dtype}")

    def check_group(self, group):
        """Validate a group's options (subclasses raise ValueError for bad ones)."""

    # -- per-parameter update (subclasses) ------------------------------------
    def init_single(self, p, group):
        """Create the state dict of parameter ``p`` before its first update (persistent tensors)."""
        return {}

    def apply_single(self, kernels, param, grad, state, group, fresh):
        """Update one parameter in place with one kernel call.

        Args:
            kernels: the context's kernel namespace (threads already applied).
            param, grad: the parameter's data and gradient, flat C-contiguous arrays.
            state: the parameter's state dict (from ``init_single`` or a loaded state dict).
            group: the parameter's group (its options).
            fresh: True when ``state`` was just made by ``init_single``.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement apply_single")

    # -- the public loop ------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters: drop them (default) or zero them in place.

        Example:
            >>> opt.zero_grad()                    # p.grad is None afterwards
            >>> opt.zero_grad(set_to_none=False)   # p.grad is all zeros
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none or not g.is_alive:
                    p.grad = None
                    continue
                if not g.is_leaf:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss if given.

        Args:
            closure: optional callable that recomputes the loss (run with grad enabled).

        Example:
            >>> loss = loss_fn(model(x), y); loss.backward(); opt.step()
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        ctx = default_context()
        ctx.apply_threads()
        kernels = ctx.kernels
        self._opt_called = True     # lets a scheduler warn when it is stepped first
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._update(ctx, kernels, p, group)
        return loss

    def _update(self, ctx, kernels, p, group):
        op = f"{type(self).__name__}.step"
        pa = data(p, op)
        g = p.grad
        ga = data(g, op)
        if ga.dtype != pa.dtype:
            raise TypeError(f"{op}: a parameter is {p.dtype} but its grad is {g.dtype}; the grad "
                            f"must have the parameter's dtype")
        if ga.shape != pa.shape:
            raise ValueError(f"{op}: a parameter has shape {tuple(pa.shape)} but its grad has "
                             f"shape {tuple(ga.shape)}")
        # NOTE: parameters and their grads are contiguous in practice; the scratch
        # copies only serve tensors a user made non-contiguous by hand.
        pflat, pscratch = _flat(ctx, pa)
        gflat, gscratch = _flat(ctx, ga)
        state = self.state.get(p)
        fresh = not state
        if fresh:
            state = self.init_single(p, group)
        self.apply_single(kernels, pflat, gflat, state, group, fresh)
        if pscratch is not None:
            pa[...] = pflat.reshape(pa.shape)
            pscratch.release()
        if gscratch is not None:
            gscratch.release()
        p._bump_version()
        if fresh and state:
            self.state[p] = state

    # -- saving and loading ---------------------------------------------------
    def state_dict(self):
        """The optimizer's state and options, parameters replaced by their position (0, 1, ...).

        State tensors are shared, not copied (as in PyTorch); ``load_state_dict``
        copies them.

        Example:
            >>> sd = opt.state_dict(); sd["param_groups"][0]["params"]
            [0, 1]
        """
        index, groups = {}, []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if s and id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore options and state saved by ``state_dict()`` of an optimizer over the same shapes.

        State tensors are copied into new persistent tensors with the dtype of
        their parameter (when floating point).

        Example:
            >>> opt2 = newch.optim.SGD(params, lr=0.1, momentum=0.9)
            >>> opt2.load_state_dict(opt.state_dict())
        """
        name = type(self).__name__ + ".load_state_dict"
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= state_dict.keys():
            raise ValueError(f"{name}: expected a dict with 'state' and 'param_groups', got "
                             f"{type(state_dict).__name__}")
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError(f"{name}: the state dict has {len(saved)} parameter groups, this "
                             f"optimizer has {len(self.param_groups)}")
        by_index = {}
        for i, (sg, group) in enumerate(zip(saved, self.param_groups)):
            if len(sg["params"]) != len(group["params"]):
                raise ValueError(f"{name}: parameter group {i} of the state dict has "
                                 f"{len(sg['params'])} parameters, this optimizer's has "
                                 f"{len(group['params'])}")
            by_index.update(zip(sg["params"], group["params"]))
        state = defaultdict(dict)
        for k, s in state_dict["state"].items():
            if k not in by_index:
                raise ValueError(f"{name}: the state dict has state for parameter {k!r}, which "
                                 f"no parameter group lists")
            p = by_index[k]
            state[p] = {key: _load_value(name, p, key, v) for key, v in s.items() if v is not None}
        groups = []
        for sg, group in zip(saved, self.param_groups):
            new = {k: v for k, v in group.items() if k != "params"}
            new.update({k: copy.deepcopy(v) for k, v in sg.items() if k != "params"})
            self.check_group(new)
            new["params"] = group["params"]
            groups.append(new)
        self.param_groups = groups
        self.state = state

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines + [")"])


def _flat(ctx, a):
    """(1-D C-contiguous array of ``a``'s elements, arena scratch Storage or None)."""
    if a.flags.c_contiguous:
        return a.reshape(-1), None
    st = ctx.alloc(a.nbytes)
    flat = st.buf[:a.nbytes].view(a.dtype)
    flat.reshape(a.shape)[...] = a
    return flat, st


def _load_value(op, p, key, v):
    """A loaded state entry: tensors copied into persistent memory, other values deep-copied.

    Floating point tensors take the parameter's dtype, except ``step``, which
    stays float32 as in PyTorch (a plain number becomes a float32 tensor).
    """
    if key == "step" and isinstance(v, Real) and not isinstance(v, bool):
        return step_tensor(float(v))
    if not isinstance(v, Tensor):
        return copy.deepcopy(v)
    src = data(v, op)
    dtype = p.dtype if v.dtype.is_floating_point and key != "step" else v.dtype
    out = empty(src.shape, dtype, persistent=True)
    if src.size:
        copy_into(src, out._data(op))
    return out
