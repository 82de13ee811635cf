"""``python -m newch.warmup [WORKLOAD ...]``: fill the kernel cache, print what it took."""
import argparse
import time

from . import WORKLOADS, _RUN, warmup


def main(argv=None):
    """``python -m newch.warmup [WORKLOAD ...]``: fill the kernel cache, print what it took."""
    p = argparse.ArgumentParser(prog="python -m newch.warmup", description=__doc__.splitlines()[0])
    p.add_argument("workloads", nargs="*", metavar="WORKLOAD",
                   help=f"some of {', '.join(WORKLOADS)} (default: all)")
    names = tuple(p.parse_args(argv).workloads) or WORKLOADS
    bad = [w for w in names if w not in _RUN]
    if bad:
        p.error(f"unknown workload(s) {bad}; expected some of {list(WORKLOADS)}")
    t0, c0 = time.perf_counter(), time.process_time()
    warmup(workloads=names)
    from newch import _cache
    print(f"newch.warmup: {', '.join(names)} in {time.perf_counter() - t0:.1f} s "
          f"({time.process_time() - c0:.1f} s CPU); kernel cache: {_cache.CACHE_DIR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
