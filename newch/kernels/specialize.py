"""Kernels made from a loop template and one op's element function, compiled when first used.

Why (cold start, DESIGN.md "Kernels and threads"): a kernel that switches on
an op code compiles every op it could run, for every dtype, before it runs
one. Here a *template* is a plain Python function whose loop calls global
names it does not define (``_f``, the element function; ``_rows``, the serial
loop a parallel driver runs on each chunk). ``instance(template, tag, **bound)``
makes a copy of the template with those names bound and its own qualified
name, and compiles it through ``jit.kernel``: numba specialises the loop for
that one op, compiles it only when it is first called (for one dtype), and
caches it on disk under its own name.

``entry(dispatcher, sig)`` compiles one explicit signature and returns its
entry point, which the Python launchers call directly: no type dispatch per
call, and one compilation per dtype whatever the layout flags of the arrays
(launchers pass 'A' or checked 'C' arrays, as the signature says).

Element functions are registered per op name and dtype kind by the
``*_ops`` modules (``unary_ops``, ``binary_ops``) with ``elementwise_op``.
"""
import types as _pytypes

import numba
from numba.core import types

from .jit import compile_signature, helper, kernel

__all__ = []

UNARY = {}      # op name -> {kind: element helper}; kind "f" float, "i" integer, "b" bool
BINARY = {}
PREDICATES = set()   # ops that write a bool ``out`` (comparisons, logical ops)

_instances = {}
_entries = {}


def kind(dtype):
    """'f', 'i' or 'b': the element-function family of numpy ``dtype`` (uint counts as 'i')."""
    k = dtype.kind
    return "f" if k == "f" else ("b" if k == "b" else "i")


def elementwise_op(table, name, kinds, predicate=False):
    """Decorator: register helper ``fn`` as op ``name``'s element function for dtype ``kinds``."""
    if predicate:
        PREDICATES.add(name)

    def register(fn):
        ops = table.setdefault(name, {})
        for k in kinds:
            if k in ops:
                raise RuntimeError(f"elementwise op {name!r} registered twice for kind {k!r}")
            ops[k] = fn
        return fn
    return register


def element(table, what, name, dtype):
    """The element function of op ``name`` for ``dtype``, or ValueError naming both."""
    fn = table.get(name, {}).get(kind(dtype))
    if fn is None:
        raise ValueError(f"{what}: op {name!r} is not supported for {dtype}")
    return fn


def instance(template, tag, parallel=False, inline=False, **bound):
    """``template`` with global names ``bound``, compiled as kernel ``<template>__<tag>``.

    ``inline=True``: a helper (``jit.helper``) instead, for a loop another template calls
    (an nd span's flat rows): numba inlines it there, no kernel of its own is compiled.
    """
    key = (template, tag, inline)
    k = _instances.get(key)
    if k is None:
        g = dict(template.__globals__)
        g.update(bound)
        f = _pytypes.FunctionType(template.__code__, g, template.__name__, template.__defaults__)
        # NOTE: numba's disk cache files are named by module and qualified name, so each
        # instance gets its own name: two instances never share a cache index.
        f.__qualname__ = f"{template.__name__}__{tag}{'__inline' if inline else ''}"
        f.__module__ = template.__module__
        f.__doc__ = template.__doc__
        k = _instances[key] = helper(f) if inline else kernel(f, parallel=parallel)
    return k


def entry(dispatcher, sig):
    """Compiled entry point of ``dispatcher`` for the numba type tuple ``sig`` (compiled once)."""
    key = (dispatcher, sig)
    fn = _entries.get(key)
    if fn is None:
        fn = _entries[key] = compile_signature(dispatcher, sig)
    return fn


def array(dtype, ndim, layout="A", readonly=False):
    """numba array type of numpy ``dtype``."""
    return types.Array(numba.from_dtype(dtype), ndim, layout, readonly=readonly)


def scalar(dtype):
    """numba scalar type of numpy ``dtype``."""
    return numba.from_dtype(dtype)
