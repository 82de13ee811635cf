"""What the JIT did in this process: each kernel compiled or loaded, with seconds and cache state.

``report()`` returns a table of every numba compilation and every disk-cache
load since numba was first imported by newch: the function, the argument
types it was specialised for, whether it is a parallel kernel, the cache
state (``hit``: loaded from the disk cache, ``compiled``: built now, then
saved), wall seconds, and the part of those seconds spent inside LLVM
(optimisation and machine code; the rest is numba's typing and lowering).
Functions compiled on their own while a kernel is being typed (numba's
overloads, ``@helper(inline=False)`` helpers, kernels a template calls) appear
as their own rows, indented under the kernel; a kernel's seconds include
theirs. Inlined helpers (``jit.helper``'s default) are part of their kernel.

    python -m newch.kernels.report --cold mlp

runs ``benchmarks/cold_start.py --workload mlp`` in a fresh process with an
empty temporary cache folder (``NEWCH_CACHE_DIR`` and ``NUMBA_CACHE_DIR``) and prints its table: what a cold start
costs and where the time goes.

Example:
    >>> from newch.kernels import report
    >>> isinstance(report.report(), str)
    True
"""
import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

from numba.core import event

__all__ = ["records", "report", "summary", "track"]

_records = []          # dicts in order of completion
_stack = []            # open compilations: [record, start, llvm seconds of nested LLVM work]
_lock = threading.Lock()


def _name(dispatcher):
    f = getattr(dispatcher, "py_func", None)
    if f is None:
        return repr(dispatcher)
    mod = f.__module__.replace("newch.kernels.", "")
    return f"{mod}.{f.__qualname__}"


def _sig(args):
    return "(" + ", ".join(_short(a) for a in args) + ")"


def _short(t):
    s = str(t)
    if s.startswith("array("):
        # array(float32, 2d, C) -> f32[2d,C]
        inner = s[len("array("):-1].split(", ")
        ro = "ro" if "readonly" in s else ""
        dt = inner[0].replace("float", "f").replace("int", "i").replace("bool", "b")
        return f"{dt}[{inner[1]},{inner[2]}{',' + ro if ro else ''}]"
    return s.replace("Literal[int]", "lit").replace("float", "f").replace("int", "i")


class _CompileListener(event.Listener):
    def on_start(self, ev):
        d = ev.data["dispatcher"]
        rec = dict(name=_name(d), sig=_sig(ev.data["args"]), state="compiled",
                   parallel=bool(getattr(d, "newch_parallel", False)), depth=len(_stack),
                   seconds=0.0, llvm=0.0)
        _stack.append([rec, time.thread_time()])

    def on_end(self, ev):
        if not _stack:
            return
        rec, t0 = _stack.pop()
        rec["seconds"] = time.thread_time() - t0
        if _stack:
            _stack[-1][0]["llvm"] += rec["llvm"]     # nested LLVM time counts for the parent too
        with _lock:
            _records.append(rec)


class _LlvmListener(event.Listener):
    def on_start(self, ev):
        self._t = time.thread_time()

    def on_end(self, ev):
        if _stack:
            _stack[-1][0]["llvm"] += time.thread_time() - getattr(self, "_t", time.thread_time())


_installed = False


def _install():
    global _installed
    if not _installed:
        event.register("numba:compile", _CompileListener())
        event.register("numba:llvm_lock", _LlvmListener())
        _installed = True


def track(dispatcher):
    """Record disk-cache loads of ``dispatcher`` (jit.kernel and jit.helper call this)."""
    _install()
    disk = getattr(dispatcher, "_cache", None)
    load = getattr(disk, "load_overload", None)
    if load is None:
        return

    def timed_load(sig, target_context):
        t0 = time.thread_time()
        cres = load(sig, target_context)
        if cres is not None:
            with _lock:
                _records.append(dict(name=_name(dispatcher), sig=_sig(sig), state="hit",
                                     parallel=bool(getattr(dispatcher, "newch_parallel", False)),
                                     depth=len(_stack), seconds=time.thread_time() - t0,
                                     llvm=0.0))
        return cres

    disk.load_overload = timed_load


def records():
    """A list of dicts (name, sig, state, parallel, depth, seconds, llvm), in completion order."""
    with _lock:
        return [dict(r) for r in _records]


def report():
    """The table of this process's kernel compilations and cache loads, slowest top-level first."""
    recs = records()
    # Group each top-level record with the nested compilations that completed before it.
    groups, pending = [], []
    for r in recs:
        if r["depth"] == 0:
            groups.append((r, pending))
            pending = []
        else:
            pending.append(r)
    groups.sort(key=lambda g: -g[0]["seconds"])
    lines = [f"{'seconds':>8} {'llvm':>6}  {'state':8} {'par':3}  kernel (argument types)"]
    for top, nested in groups:
        lines.append(_row(top))
        lines.extend(_row(r) for r in sorted(nested, key=lambda r: -r["seconds"]))
    comp = [r for r in recs if r["depth"] == 0 and r["state"] == "compiled"]
    hits = [r for r in recs if r["depth"] == 0 and r["state"] == "hit"]
    lines.append(f"{len(comp)} compiled in {sum(r['seconds'] for r in comp):.2f} s "
                 f"(LLVM {sum(r['llvm'] for r in comp):.2f} s), "
                 f"{len(hits)} loaded from cache in {sum(r['seconds'] for r in hits):.2f} s")
    return "\n".join(lines)


def summary(recs=None):
    """Compilations grouped by kernel module, then by kernel: counts and seconds, costliest first.

    ``recs``: records as ``records()`` returns them (default: this process's). Only
    top-level compilations count (nested ones are part of their kernel's seconds); a
    kernel's count is its number of compiled signatures. The test suite writes this at
    session end when ``NEWCH_SUITE_COMPILE_REPORT`` names a file (tests/conftest.py).

    Example:
        >>> summary([dict(name="reduce._sum", sig="()", state="compiled", parallel=False,
        ...               depth=0, seconds=1.5, llvm=0.5)]).splitlines()[1].split()
        ['reduce', '1', '1.50', '0.50']
    """
    recs = records() if recs is None else recs
    comp = [r for r in recs if r["depth"] == 0 and r["state"] == "compiled"]
    mods, kerns = {}, {}
    for r in comp:
        for table, key in ((mods, r["name"].split(".")[0]), (kerns, r["name"])):
            t = table.setdefault(key, [0, 0.0, 0.0, False])
            t[0] += 1
            t[1] += r["seconds"]
            t[2] += r["llvm"]
            t[3] = t[3] or r["parallel"]
    lines = [f"{'module':40} {'count':>6} {'seconds':>8} {'llvm':>7}"]
    for name, (n, sec, llvm, _) in sorted(mods.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"{name:40} {n:6d} {sec:8.2f} {llvm:7.2f}")
    lines.append(f"{'kernel':40} {'count':>6} {'seconds':>8} {'llvm':>7}  par")
    for name, (n, sec, llvm, par) in sorted(kerns.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"{name:40} {n:6d} {sec:8.2f} {llvm:7.2f}  {'par' if par else ''}")
    hits = [r for r in recs if r["depth"] == 0 and r["state"] == "hit"]
    lines.append(f"total: {len(comp)} compiled in {sum(r['seconds'] for r in comp):.2f} s "
                 f"(LLVM {sum(r['llvm'] for r in comp):.2f} s), {len(hits)} loaded from cache in "
                 f"{sum(r['seconds'] for r in hits):.2f} s")
    return "\n".join(lines)


def _row(r):
    indent = "  " * r["depth"]
    return (f"{r['seconds']:8.3f} {r['llvm']:6.2f}  {r['state']:8} {'par' if r['parallel'] else '':3}"
            f"  {indent}{r['name']} {r['sig']}")


def _cold(workload, threads):
    """Run the cold-start benchmark in a fresh process with an empty kernel cache; return its code."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = os.path.join(root, "benchmarks", "cold_start.py")
    if not os.path.exists(script):
        raise SystemExit(f"report: {script} not found (run from a newch source checkout)")
    with tempfile.TemporaryDirectory(prefix="newch-cold-") as cache:
        # NOTE: newch's kernels cache under NEWCH_CACHE_DIR first: point both at the empty folder
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, NEWCH_CACHE_DIR=cache)
        cmd = [sys.executable, script, "--workload", workload, "--threads", str(threads),
               "--report"]
        return subprocess.call(cmd, env=env)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m newch.kernels.report",
                                description="Kernel compile report of a cold-start workload.")
    p.add_argument("--cold", metavar="WORKLOAD", default="mlp",
                   help="workload of benchmarks/cold_start.py to run with an empty cache")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    return _cold(args.cold, args.threads)


if __name__ == "__main__":
    sys.exit(main())
