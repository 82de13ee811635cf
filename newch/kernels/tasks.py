"""Parallel launches of serial kernels: one small ``prange`` driver calls a compiled task function.

Why (cold start): numba's parallel lowering copies the loop body of a
``prange`` into a separate function, inlines every helper it calls and
optimises the whole again, several times over. For a big body (the gemm
micro-kernel, a fused optimizer update) the parallel instance compiled 3-5x
slower than the serial one, and a program paid for both.

Here a kernel is compiled once, serially, as a *task function*
``fn(*args, lo, hi)`` that does the work items [lo, hi) (elements of a span,
task indexes of a plan). ``driver(serial, argtypes)`` returns a launcher that
runs it in parallel: one tiny driver kernel, ``prange`` over chunks of
``chunk`` items, calls a *trampoline* through its machine-code address; the
trampoline reads the task function's address and arguments from int64 slots
and calls it. The slots are written by a small serial *launcher* kernel
(``_launch``, one per argument-type tuple: numba unboxes the arguments from
Python as for any kernel, so a launch costs what a call of an entry point
does). The driver's arguments are four integers whatever the task, so one
parallel driver, compiled once (and cached on disk), serves every task
function of every kernel; a trampoline is a few LLVM instructions per
argument-type tuple, built here without numba's compiler (milliseconds).
LLVM cannot inline through an address, so nothing of the task is compiled
again for the parallel path.

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
from llvmlite import ir
from numba.core import cgutils, types

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
def _drive(tramp, blob, n, chunk):
    """tramp(blob, lo, hi) for every chunk [lo, hi) of ``chunk`` items of n, one prange iteration each.

    ``tramp``: address of a trampoline (``_trampoline``) that unpacks the task function's
    address and arguments from the int64 slots at address ``blob``: one driver, compiled
    once, serves every task function whatever its argument types.
    """
    for c in prange((n + chunk - 1) // chunk):
        lo = np.int64(c) * chunk
        _call(tramp, (blob,), lo, min(lo + chunk, n))


@intrinsic
def _launch_via(typingctx, drive, tramp, task, args, n, chunk):
    """drive(tramp, slots, n, chunk) at address ``drive``, ``slots`` an int64 stack array holding
    ``task`` and the native (flattened) arguments ``args``, as ``_trampoline`` reads them."""
    if not (isinstance(args, types.BaseTuple) and isinstance(drive, types.Integer)):
        return None
    argtys = tuple(args)

    def codegen(context, builder, sig, llargs):
        i64 = ir.IntType(64)
        vals = [builder.extract_value(llargs[3], i) for i in range(len(argtys))]
        flat = context.get_arg_packer(argtys).as_arguments(builder, vals)
        buf = cgutils.alloca_once(builder, i64, size=ir.Constant(i64, 1 + len(flat)))
        builder.store(llargs[2], buf)
        for k, v in enumerate(flat, 1):
            builder.store(_as_i64(builder, v), builder.gep(buf, [ir.Constant(i64, k)]))
        four = (types.int64,) * 4
        fnty = context.call_conv.get_function_type(types.none, four)
        fn = builder.inttoptr(llargs[0], fnty.as_pointer())
        context.call_conv.call_function(builder, fn, types.none, four,
                                        [llargs[1], builder.ptrtoint(buf, i64)] + list(llargs[4:]))
        return context.get_dummy_value()

    return types.none(drive, tramp, task, args, n, chunk), codegen


def _as_i64(builder, v):
    """Native scalar ``v`` (pointer, integer, float, double) in an int64 slot."""
    i64 = ir.IntType(64)
    t = v.type
    if isinstance(t, ir.PointerType):
        return builder.ptrtoint(v, i64)
    if isinstance(t, ir.IntType):
        return v if t.width == 64 else builder.zext(v, i64)
    if isinstance(t, ir.DoubleType):
        return builder.bitcast(v, i64)
    if isinstance(t, ir.FloatType):
        return builder.zext(builder.bitcast(v, ir.IntType(32)), i64)
    raise TypeError(f"tasks: no parallel launch for a native argument of type {t}")


@kernel
def _launch(drive, tramp, task, args, n, chunk):
    """Run task function ``task`` over n items on numba's threads (``_launch_via``); compiled once
    per argument-type tuple: a small serial function, where a driver of its own was a parallel one."""
    _launch_via(drive, tramp, task, args, n, chunk)


_I64 = types.int64
_drivers = {}


def address(dispatcher, sig):
    """Machine-code address of ``dispatcher`` compiled for ``sig`` (compiled or loaded first)."""
    entry(dispatcher, sig)
    cres = dispatcher.overloads[tuple(sig)]
    return cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)


class Parallel:
    """``run(n, *args)``: the task function over [0, n) in chunks, on numba's threads."""
    __slots__ = ("launch", "drive", "tramp", "addr", "chunk")

    def __init__(self, launch, drive, tramp, addr, chunk):
        self.launch, self.drive, self.tramp, self.addr = launch, drive, tramp, addr
        self.chunk = chunk

    def __call__(self, n, *args):
        self.launch(self.drive, self.tramp, self.addr, args, n, self.chunk)


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
        launch = entry(_launch, (_I64, _I64, _I64, types.Tuple(argtypes), _I64, _I64))
        run = _drivers[key] = Parallel(launch, address(_drive, (_I64,) * 4),
                                       _trampoline(argtypes), addr, chunk)
    return run


# -- the trampoline: native arguments from int64 slots -------------------------------
# A task function's native signature is numba's calling convention: a return pointer, an
# exception pointer, then every argument flattened into scalars (an array is meminfo,
# parent, nitems, itemsize, data, shape..., strides...), then lo, hi. The launcher
# (``_launch``, a small serial kernel per argument-type tuple: numba unboxes the arguments
# from Python as for any kernel) writes the task's address and those scalars into int64
# slots on its stack; the trampoline, a few LLVM instructions built here per tuple (no numba
# compile), loads them back and calls the task. The launcher holds its arguments (and their
# references) until the driver returns.

_trampolines = {}


def _trampoline(argtypes):
    """Address of ``tramp(slots, lo, hi)`` for task functions taking ``argtypes`` (built once)."""
    addr = _trampolines.get(argtypes)
    if addr is None:
        from numba.core.compiler_lock import global_compiler_lock
        # NOTE: under numba's compiler lock: two threads never build one tuple's trampoline
        # twice, nor two trampolines under one symbol name.
        with global_compiler_lock:
            addr = _trampolines.get(argtypes)
            if addr is None:
                name = f"newch_tasks_trampoline_{len(_trampolines)}"
                addr = _trampolines[argtypes] = _build_trampoline(argtypes, name)
    return addr


def _build_trampoline(argtypes, name):
    """Machine-code address of LLVM function ``name``: tramp(blob, lo, hi) for ``argtypes``.

    Called under numba's compiler lock (``_trampoline``).
    """
    from numba.core.registry import cpu_target

    ctx = cpu_target.target_context
    cc = ctx.call_conv
    i64 = ir.IntType(64)
    task_ty = cc.get_function_type(types.none, argtypes + (_I64, _I64))
    flat = task_ty.args[2:-2]
    lib = ctx.codegen().create_library(name)
    mod = lib.create_ir_module(name)
    fn = ir.Function(mod, cc.get_function_type(types.none, (_I64, _I64, _I64)), name)
    b = ir.IRBuilder(fn.append_basic_block())
    retptr, excinfo, blob, lo, hi = fn.args
    base = b.inttoptr(blob, i64.as_pointer())

    def slot(k):
        return b.load(b.gep(base, [ir.Constant(i64, k)]))

    vals = []
    for k, t in enumerate(flat, 1):
        v = slot(k)
        if isinstance(t, ir.PointerType):
            v = b.inttoptr(v, t)
        elif isinstance(t, ir.IntType):
            v = v if t.width == 64 else b.trunc(v, t)
        elif isinstance(t, ir.DoubleType):
            v = b.bitcast(v, t)
        elif isinstance(t, ir.FloatType):
            v = b.bitcast(b.trunc(v, ir.IntType(32)), t)
        else:
            raise TypeError(f"tasks: no trampoline for native argument type {t}")
        vals.append(v)
    task = b.inttoptr(slot(0), task_ty.as_pointer())
    b.ret(b.call(task, [retptr, excinfo] + vals + [lo, hi]))
    lib.add_ir_module(mod)
    lib.finalize()
    _libraries.append(lib)      # NOTE: the machine code lives as long as its library
    return lib.get_pointer_to_function(name)


_libraries = []


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


_strided = {}     # (task function, parallel, dtype and ndim of x, _type_key(rest)) -> launcher


def launcher(serial, parallel, args):
    """What ``run(serial, n, parallel, *args)`` calls: ``fn(*args, 0, n)`` (serial) or
    ``fn(n, *args)`` (parallel), for callers that cache it with what it depends on."""
    return _launcher(serial, bool(parallel), args)


def strided_launcher(serial, parallel, x, rest):
    """What ``run_strided(serial, n, parallel, x, *rest)`` calls, as ``launcher``."""
    key = (serial, parallel, x.dtype, x.ndim, _type_key(rest))
    fn = _strided.get(key)
    if fn is None:
        sig = (_array_type(x.dtype, x.ndim, False),) + signature(rest)
        fn = _strided[key] = driver(serial, sig) if parallel else entry(serial, sig + (_I64, _I64))
    return fn


def run_strided(serial, n, parallel, x, *rest):
    """``run(serial, n, parallel, x, *rest)`` with array ``x`` typed 'A' whatever its layout.

    For a task function that walks ``x`` by its strides anyway (a column of a reduction):
    contiguous and strided views of one dtype then share one compilation.
    """
    fn = strided_launcher(serial, parallel, x, rest)
    if parallel:
        fn(n, x, *rest)
    else:
        fn(x, *rest, 0, n)


def chunked(serial, n, chunk, serial_max, *args):
    """Task function ``serial(*args, lo, hi)`` over elements [0, n).

    At or below ``serial_max`` elements the calling thread runs [0, n); above, numba's
    threads run chunks of ``chunk`` elements. Every element must be computed on its own.
    """
    if n > serial_max:
        _launcher(serial, int(chunk), args)(n, *args)
    elif n:
        _launcher(serial, False, args)(*args, 0, n)
