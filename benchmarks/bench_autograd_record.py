"""What recording the graph costs per op: small ops in grad mode vs no_grad, same run.

    python benchmarks/bench_autograd_record.py            # 10 floats, 2000 calls, best of 5

Rows: ``no_grad`` (no graph), ``grad, kept`` (results kept alive: recording only)
and ``grad, dropped`` (each result dropped at once, its bytes going back to the
arena). The difference between the first two is the autograd bookkeeping of one
mul and one exp (saved tensors, node, edges).
"""
import argparse
import timeit

import newch


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10, help="elements per tensor")
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    with newch.persistent():
        x = newch.randn(args.n, requires_grad=True)
        y = newch.randn(args.n, requires_grad=True)
    kept = []

    def no_grad():
        with newch.no_grad():
            return (x * y).exp()

    def grad_kept():
        kept.append((x * y).exp())

    def grad_dropped():
        (x * y).exp()

    for name, fn in (("no_grad", no_grad), ("grad, kept", grad_kept), ("grad, dropped", grad_dropped)):
        fn()
        t = min(timeit.repeat(fn, number=args.calls, repeat=5)) / args.calls
        kept.clear()
        newch.step_end()
        print(f"{name:14s} {t * 1e6:7.1f} us per (x * y).exp()")


if __name__ == "__main__":
    main()
