"""Sequence-model training steps, newch vs PyTorch, each library in its own process, 2 threads.

(a) word LM: Embedding(10000, 200), LSTM(200, 200, 2, dropout=0.2), Linear(200, 10000),
    log_softmax + nll_loss, bptt 35, batch 20, clip_grad_norm_(0.25), SGD lr 0.1.
(b) 2 x TransformerEncoderLayer(128, 4, 512, dropout=0.1, batch_first=True) on (16, 64, 128) with
    a causal mask, Linear(128, 10) on the last position, cross_entropy, Adam lr 1e-3.

    PYTHONPATH=. python benchmarks/sequence.py [--steps 8] [--cases lm,tf] [--threads 2]
        [--cell lstm|gru|rnn]      # the word LM's recurrent layer (default: the issue's LSTM)
        [--per-step]               # newch on the per-step graph (rnn_fused.ENABLED = False)

Prints median step times, the newch / torch ratio and newch's arena peak.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def _lm(lib, steps, cell="lstm"):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    layer = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[cell]
    emb, rnn, head = nn.Embedding(10000, 200), layer(200, 200, 2, dropout=0.2), nn.Linear(200, 10000)
    params = list(emb.parameters()) + list(rnn.parameters()) + list(head.parameters())
    opt = lib.optim.SGD(params, lr=0.1)

    def step():
        x = lib.randint(0, 10000, (35, 20))
        y = lib.randint(0, 10000, (35 * 20,))
        opt.zero_grad()
        out, _ = rnn(emb(x))
        loss = F.nll_loss(F.log_softmax(head(out.reshape(-1, 200)), -1), y)
        loss.backward()
        nn.utils.clip_grad_norm_(params, 0.25)
        opt.step()
        return loss.item()
    return _time(lib, step, steps)


def _tf(lib, steps):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    layer = nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.1, batch_first=True)
    kw = {"enable_nested_tensor": False} if lib.__name__ == "torch" else {}
    enc, head = nn.TransformerEncoder(layer, 2, **kw), nn.Linear(128, 10)
    params = list(enc.parameters()) + list(head.parameters())
    opt = lib.optim.Adam(params, lr=1e-3)
    def step():
        mask = nn.Transformer.generate_square_subsequent_mask(64)
        x = lib.randn(16, 64, 128)
        y = lib.randint(0, 10, (16,))
        opt.zero_grad()
        loss = F.cross_entropy(head(enc(x, mask=mask, is_causal=True)[:, -1]), y)
        loss.backward()
        opt.step()
        return loss.item()
    return _time(lib, step, steps)


def _time(lib, step, steps):
    step()
    step()       # warm-up: compiles newch's kernels or loads them from the cache
    times, peak = [], 0
    for _ in range(steps):
        if lib.__name__ == "newch":
            lib.default_context().reset_peak()
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
        if lib.__name__ == "newch":
            peak = max(peak, lib.mem_stats()["arena_peak_bytes"])
            lib.step_end()
    return {"median_ms": 1000 * statistics.median(times), "peak_mib": peak / 2 ** 20}


def _child(libname, case, steps, threads, cell, per_step):
    if libname == "torch":
        import torch as lib
        lib.set_num_threads(threads)
    else:
        import newch as lib
        lib.set_default_context(lib.Context(threads=threads))
        if per_step:
            from newch.nn import rnn_fused
            rnn_fused.ENABLED = False
    print(json.dumps(_lm(lib, steps, cell) if case == "lm" else _tf(lib, steps)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--cases", default="lm,tf")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cell", default="lstm", choices=("lstm", "gru", "rnn"))
    ap.add_argument("--per-step", action="store_true", help="newch without the fused recurrent layers")
    ap.add_argument("--child", nargs=2, metavar=("LIB", "CASE"))
    args = ap.parse_args()
    if args.child:
        return _child(args.child[0], args.child[1], args.steps, args.threads, args.cell, args.per_step)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    print(f"{'case':6} {'newch ms':>10} {'torch ms':>10} {'ratio':>7} {'newch arena peak':>18}")
    for case in args.cases.split(","):
        res = {}
        for lib in ("newch", "torch"):
            extra = ["--cell", args.cell] + (["--per-step"] if args.per_step else [])
            p = subprocess.run([sys.executable, __file__, "--steps", str(args.steps), "--threads",
                                str(args.threads), "--child", lib, case] + extra,
                               capture_output=True, text=True, env=env)
            if p.returncode:
                print(f"{case} {lib} failed:\n{p.stderr[-2000:]}")
                res[lib] = None
                continue
            res[lib] = json.loads(p.stdout.strip().splitlines()[-1])
        n, t = res.get("newch"), res.get("torch")
        if n and t:
            ratio = n["median_ms"] / t["median_ms"]
            name = case if case != "lm" else "lm-" + args.cell + ("-per-step" if args.per_step else "")
            print(f"{name:6} {n['median_ms']:10.1f} {t['median_ms']:10.1f} {ratio:7.2f} "
                  f"{n['peak_mib']:15.1f} MiB")


if __name__ == "__main__":
    main()
