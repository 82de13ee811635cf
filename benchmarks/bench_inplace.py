"""In-place ops: time and arena peak of writing into self vs. the compute-then-copy path.

    PYTHONPATH=. python benchmarks/bench_inplace.py

(``PYTHONPATH=.``: the script's own folder comes first on sys.path, so without it an
installed newch elsewhere would be measured.)

Both paths run in this one process (the machines are noisy): "direct" is what
newch does, "twin" forces the older compute-aside-then-copy route.
"""
import timeit

import newch
import newch.ops.inplace as inplace

N = 1 << 20


def _time(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def _peak(fn):
    ctx = newch.default_context()
    before = ctx.mem_stats()["arena_bytes_in_use"]
    ctx.reset_peak()
    fn()
    return ctx.mem_stats()["arena_peak_bytes"] - before


def main():
    small, small_y = newch.randn(10), newch.randn(10)
    big, big_y = newch.randn(N), newch.randn(N)
    cases = {
        "add_(1) 10 floats": (lambda: small.add_(1), 20000),
        "mul_(y) 10 floats": (lambda: small.mul_(small_y), 20000),
        "add_(y) 1M floats": (lambda: big.add_(big_y), 50),
        "relu_() 1M floats": (lambda: big.relu_(), 50),
        "add_(y, alpha) 1M": (lambda: big.add_(big_y, alpha=0.5), 50),
    }
    # NOTE: under autograd (a non-leaf that requires grad): each call adds a node to its graph
    leaf = newch.randn(N, requires_grad=True)
    with newch.persistent():
        g = leaf * 1.0
    cases.update({
        "grad add_(1) 1M": (lambda: g.add_(1), 20),
        "grad mul_(y) 1M": (lambda: g.mul_(big_y), 20),
        "grad relu_() 1M": (lambda: g.relu_(), 20),
        "grad exp_() 1M": (lambda: g.exp_().clamp_(max=1.0), 20),
    })
    for fn, _ in cases.values():
        fn()                                   # compile
    direct = inplace._unit_rows
    print(f"{'op':20s} {'direct us':>10s} {'twin us':>10s} {'direct peak':>12s} {'twin peak':>10s}")
    for name, (fn, number) in cases.items():
        inplace._unit_rows = direct
        d_t, d_p = _time(fn, number), _peak(fn)
        inplace._unit_rows = lambda a: False
        t_t, t_p = _time(fn, number), _peak(fn)
        print(f"{name:20s} {d_t:10.1f} {t_t:10.1f} {d_p:12d} {t_p:10d}")
    inplace._unit_rows = direct


if __name__ == "__main__":
    main()
