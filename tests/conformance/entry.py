"""The kinds of row in the conformance table (``optable.TABLE``) and the spellings each row covers.

A row names one operation and how to draw its inputs; its ``calls`` map each
public spelling it covers ("torch.add", "Tensor.add", "Tensor.__add__",
"F.relu", "newch.add_"...) to a pair (newch call, torch call). Both calls take
the library module first: ``call(lib, *args, **kwargs)``.

Spellings:
    "torch.X"   newch.X(...)            vs torch.X(...)
    "Tensor.X"  x.X(...)                vs x.X(...)
    "F.X"       newch.nn.functional.X   vs torch.nn.functional.X
    "newch.X"   newch.X(x, ...)         vs x.X(...) (a torch method; no torch.X exists)
"""
FLOAT32 = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}
GRAD = {"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-11)}


def fn(name):
    """The pair calling ``lib.<name>`` on both sides."""
    def call(lib, *args, **kwargs):
        return getattr(lib, name)(*args, **kwargs)
    return call, call


def method(name):
    """The pair calling ``args[0].<name>(*args[1:])`` on both sides."""
    def call(lib, x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)
    return call, call


def functional(name):
    """The pair calling ``lib.nn.functional.<name>`` on both sides."""
    def call(lib, *args, **kwargs):
        return getattr(lib.nn.functional, name)(*args, **kwargs)
    return call, call


def newch_only(name, torch_call=None):
    """newch.<name>(x, ...) against the torch method x.<name>(...) (or ``torch_call``)."""
    def nc(lib, *args, **kwargs):
        return getattr(lib, name)(*args, **kwargs)
    return nc, torch_call or method(name)[1]


def same(call):
    """The pair using one lambda ``call(lib, ...)`` for both libraries."""
    return call, call


def spellings(name, forms):
    """``calls`` for ``name`` in ``forms``: "f" torch.X, "m" Tensor.X, "F" F.X, "n" newch.X."""
    makers = {"f": ("torch.", fn), "m": ("Tensor.", method), "F": ("F.", functional),
              "n": ("newch.", newch_only)}
    return {makers[f][0] + name: makers[f][1](name) for f in forms}


def _on_clone(target):
    """A call running ``target(lib, copy_of_x)(*rest)`` on a clone of the first argument.

    It returns (result, result is the clone): in-place ops must return ``self``.
    """
    def call(lib, x, *args, **kwargs):
        c = x.clone()
        r = target(lib, c)(*args, **kwargs)
        return r, r is c
    return call


def inplace(name, forms="m"):
    """``calls`` for in-place op ``name`` run on a clone of the input ("f", "m" or "n" forms)."""
    as_method = _on_clone(lambda lib, c: getattr(c, name))
    as_fn = _on_clone(lambda lib, c: (lambda *a, **k: getattr(lib, name)(c, *a, **k)))
    calls = {}
    if "m" in forms:
        calls["Tensor." + name] = (as_method, as_method)
    if "f" in forms:
        calls["torch." + name] = (as_fn, as_fn)
    if "n" in forms:
        calls["newch." + name] = (as_fn, as_method)
    return calls


def operator(dunder, call):
    """``{"Tensor.<dunder>": same(call)}``: an operator spelled as Python code (``a + b``)."""
    return {"Tensor." + dunder: (call, call)}


def augmented(dunder, call):
    """An augmented assignment (``c += b``) on a clone; returns (result, result is the clone)."""
    def run(lib, a, b):
        c = a.clone()
        r = call(c, b)
        return r, r is c
    return {"Tensor." + dunder: (run, run)}


class Op:
    """A tensor operation compared value by value (and gradient by gradient) with torch.

    Args:
        name: the row's name (report id).
        gen: ``gen(draw) -> Case``: draws one example (shapes, dims, dtypes, values).
        calls: {spelling: (newch call, torch call)}; see the module docstring.
        grad: compare gradients (float inputs require grad; a random upstream gradient).
        tol / gtol: {dtype name: (rtol, atol)} for values / gradients; atol scales with the
            magnitude of the expected values.
        values: compare values (False for random or uninitialised results: shape and dtype only).
        bad: fixed invalid inputs (Cases) torch rejects: newch must raise too.
        examples: hypothesis examples for the first spelling (others get fewer).
        mutates: the call may change its inputs (skip the inputs-unchanged check).
        prop: ``prop(newch_result, case)`` asserts what must hold where values are not compared
            (random ops: range, permutation, ...).
        lenient: ``lenient(case) -> bool``: on such cases newch may raise where torch does not
            (each use is an intentional difference listed in docs/conformance.md).
    """
    kind = "op"

    def __init__(self, name, gen, calls, *, grad=True, tol=None, gtol=None, values=True, bad=(),
                 examples=20, mutates=False, prop=None, lenient=None):
        self.name, self.gen, self.calls = name, gen, dict(calls)
        self.grad, self.values, self.bad = grad, values, tuple(bad)
        self.tol = {**FLOAT32, **(tol or {})}
        self.gtol = {**GRAD, **(gtol or {})}
        self.examples, self.mutates, self.prop, self.lenient = examples, mutates, prop, lenient


class Layer:
    """An nn Module (or a loss) built on both sides with the same options and parameter values.

    Args:
        name: the spelling covered ("nn.Linear").
        build: ``build(lib, **cfg) -> module``.
        gen: ``gen(draw) -> (cfg, Case)``: options and the forward's inputs.
        forward: ``forward(module, *inputs)``, by default ``module(*inputs)``.
        bad: fixed invalid (cfg, Case) pairs torch rejects (at build or forward).
    """
    kind = "layer"

    def __init__(self, name, build, gen, *, forward=None, tol=None, gtol=None, bad=(), examples=12):
        self.name, self.build, self.gen, self.bad = name, build, gen, tuple(bad)
        self.forward = forward or (lambda mod, *xs: mod(*xs))
        self.calls = {name: None}
        self.tol = {**FLOAT32, **(tol or {})}
        self.gtol = {**GRAD, **(gtol or {})}
        self.examples = examples
        self.grad, self.values, self.mutates = True, True, False


class Optim:
    """An optimizer run for a few steps on the same parameters and gradients on both sides.

    Args:
        name: the spelling covered ("optim.SGD").
        build: ``build(lib, params, **cfg) -> optimizer``.
        gen: ``gen(draw) -> (cfg, shapes, steps)``.
        bad: invalid (options, parameter shapes) pairs torch rejects at construction.
    """
    kind = "optim"

    def __init__(self, name, build, gen, *, tol=None, bad=(), examples=15):
        self.name, self.build, self.gen, self.bad = name, build, gen, tuple(bad)
        self.calls = {name: None}
        self.tol = {**FLOAT32, **(tol or {})}
        self.examples = examples
