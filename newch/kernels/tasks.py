"""Parallel launches of serial kernels: one small ``prange`` driver calls a compiled task function.

Why (cold start): numba's parallel lowering copies the loop body of a
``prange`` into a separate function, inlines every helper it calls and
optimises the whole again, several times over. For a big body (the gemm
micro-kernel, a fused optimizer update) the parallel instance compiled 3-5x
slower than the serial one, and a program paid for both.

Here a kernel is compiled once, serially, as a *task function*
``fn(*args, lo, hi)`` that does the work items [lo, hi) (elements of a span,
task indexes of a plan). ``driver(serial, argtypes)`` returns a launcher that
runs it in parallel: a tiny driver kernel, ``prange`` over chunks of ``chunk``
items, calls the task function through its machine-code address (passed at run
time, so the driver caches on disk like any kernel). LLVM cannot inline through
the address, so the driver compiles in a fraction of a second whatever the task
does, and one driver per argument-type tuple serves every op with those types.

Determinism: the driver runs exactly the calls ``fn(*args, lo, hi)`` the split
``[c*chunk, min(n, (c+1)*chunk))`` gives, one ``prange`` iteration each; the
serial path calls ``fn(*args, 0, n)`` or the same chunks in order. Task
functions make each work item's result independent of the others, so both
paths and every thread count give the same bits.

Example:
    >>> run = driver(span, (array_type, array_type), chunk=16384)   # doctest: +SKIP
    >>> run(n, x, out)                                                # doctest: +SKIP
"""
import functools

import numba
import numpy as np
from numba.core import types

from .jit import intrinsic, kernel, prange
from .specialize import entry

__all__ = []


@intrinsic
def _call(typingctx, fnptr, args, lo, hi):
    """Call the numba function at address ``fnptr`` with ``(*args, lo, hi)``; it returns None."""
    if not isinstance(args, types.BaseTuple) or not isinstance(fnptr, types.Integer):
        return None
    argtys = tuple(args) + (lo, hi)
    sig = types.none(fnptr, args, lo, hi)

    def codegen(context, builder, sig, llargs):
        fnty = context.call_conv.get_function_type(types.none, argtys)
        fn = builder.inttoptr(llargs[0], fnty.as_pointer())
        vals = [builder.extract_value(llargs[1], i) for i in range(len(args))]
        # NOTE: task functions do not raise (error_model="numpy", no bounds checks): the
        # status is not looked at, as a prange body could not propagate it anyway.
        context.call_conv.call_function(builder, fn, types.none, argtys, vals + list(llargs[2:]))
        return context.get_dummy_value()

    return sig, codegen


@kernel(parallel=True)
def _drive(fnptr, args, n, chunk):
    """fn(*args, lo, hi) for every chunk [lo, hi) of ``chunk`` items of n, one prange iteration each."""
    for c in prange((n + chunk - 1) // chunk):
        lo = np.int64(c) * chunk
        _call(fnptr, args, lo, min(lo + chunk, n))


_I64 = types.int64
_drivers = {}


def address(dispatcher, sig):
    """Machine-code address of ``dispatcher`` compiled for ``sig`` (compiled or loaded first)."""
    entry(dispatcher, sig)
    cres = dispatcher.overloads[tuple(sig)]
    return cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)


class Parallel:
    """``run(n, *args)``: the task function over [0, n) in chunks, on numba's threads."""
    __slots__ = ("fn", "addr", "chunk")

    def __init__(self, fn, addr, chunk):
        self.fn, self.addr, self.chunk = fn, addr, chunk

    def __call__(self, n, *args):
        self.fn(self.addr, args, n, self.chunk)


def driver(serial, argtypes, chunk=1):
    """A ``Parallel`` launcher of task function ``serial(*argtypes, int64 lo, int64 hi)``.

    ``argtypes``: numba types of the arguments before (lo, hi), exactly as the task
    function is compiled for them (the launcher trusts them, as every entry point does).
    ``chunk``: work items per prange iteration (a constant of the caller: never the
    thread count). Compiles the task function first if it is not yet.
    """
    argtypes = tuple(argtypes)
    key = (serial, argtypes, chunk)
    run = _drivers.get(key)
    if run is None:
        addr = address(serial, argtypes + (_I64, _I64))
        fn = entry(_drive, (_I64, types.Tuple(argtypes), _I64, _I64))
        run = _drivers[key] = Parallel(fn, addr, chunk)
    return run


@functools.lru_cache(maxsize=None)
def _array_type(dtype, ndim, contiguous):
    # NOTE: typed writable even for read-only inputs (kernels never write their inputs, and
    # entry points do not check the flag): one compiled function serves both.
    return types.Array(numba.from_dtype(dtype), ndim, "C" if contiguous else "A")


def _typeof(v):
    if isinstance(v, np.ndarray):
        return _array_type(v.dtype, v.ndim, v.flags.c_contiguous)
    if isinstance(v, (bool, np.bool_)):
        return types.boolean
    if isinstance(v, int):
        return types.int64
    if isinstance(v, float):
        return types.float64
    if isinstance(v, np.generic):
        return numba.from_dtype(v.dtype)
    raise TypeError(f"tasks: no kernel argument type for {type(v).__name__}")


def signature(args):
    """numba types of kernel arguments: arrays 'C' when C-contiguous else 'A', ints int64."""
    return tuple(_typeof(a) for a in args)


_launchers = {}    # (task function, parallel or chunk, _type_key(args)) -> launcher


def _type_key(args):
    """A cheap stand-in for ``signature(args)``: equal keys give equal signatures.

    NOTE: hashing numba types runs Python code per type; this key hashes numpy dtypes,
    ints and bools, so a launch costs one dict lookup on the hot path.
    """
    return tuple([(a.dtype, a.ndim, a.flags.c_contiguous) if isinstance(a, np.ndarray)
                  else type(a) for a in args])


def _launcher(serial, mode, args):
    """The compiled launcher for ``args``: the task function's entry point (``mode`` False),
    or a ``Parallel`` driver (``mode`` True, or a chunk size)."""
    key = (serial, mode, _type_key(args))
    fn = _launchers.get(key)
    if fn is None:
        sig = signature(args)
        if mode is False:
            fn = entry(serial, sig + (_I64, _I64))
        else:
            fn = driver(serial, sig) if mode is True else driver(serial, sig, mode)
        _launchers[key] = fn
    return fn


def run(serial, n, parallel, *args):
    """Task function ``serial`` over tasks [0, n): in this thread, or one task per prange iteration.

    Both compile ``serial`` once for ``signature(args)`` (plus lo, hi).
    """
    if parallel:
        _launcher(serial, True, args)(n, *args)
    else:
        _launcher(serial, False, args)(*args, 0, n)


def chunked(serial, n, chunk, serial_max, *args):
    """Task function ``serial(*args, lo, hi)`` over elements [0, n).

    At or below ``serial_max`` elements the calling thread runs [0, n); above, numba's
    threads run chunks of ``chunk`` elements. Every element must be computed on its own.
    """
    if n > serial_max:
        _launcher(serial, int(chunk), args)(n, *args)
    elif n:
        _launcher(serial, False, args)(*args, 0, n)
