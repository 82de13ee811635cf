"""Arena memory of LSTM / GRU / RNN backward: what the graph holds after the forward, and the backward's peak.

    python benchmarks/lstm_memory.py            # the issue's sizes: T=35, B=20, 200 -> 200, 1 and 2 layers,
                                                # LSTM, GRU and RNN, input with and without a gradient
    python benchmarks/lstm_memory.py --lm       # the whole word-LM step of benchmarks/sequence.py

Prints held (arena bytes alive right after the forward), the arena peak during backward and during
the whole step (forward included), over the same base, and their ratios to held; the sequence
issue's bar is peak <= 1.2 x held for an LSTM training step.
"""
import argparse

import newch


def _measure(forward):
    ctx = newch.default_context()
    newch.step_end()
    base = newch.mem_stats()["arena_bytes_in_use"]
    ctx.reset_peak()
    loss = forward()
    held = newch.mem_stats()["arena_bytes_in_use"] - base
    fwd = newch.mem_stats()["arena_peak_bytes"] - base
    ctx.reset_peak()
    loss.backward()
    peak = newch.mem_stats()["arena_peak_bytes"] - base
    newch.step_end()
    return held, peak, max(fwd, peak)


def _row(name, held, peak, step):
    print(f"{name:<28} {held / 2**20:9.2f} {peak / 2**20:9.2f} {peak / held:6.2f} "
          f"{step / 2**20:9.2f} {step / held:6.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lm", action="store_true", help="also the whole word-LM training step")
    ap.add_argument("--cells", default="LSTM,GRU,RNN", help="comma-separated layer kinds")
    args = ap.parse_args()
    newch.manual_seed(0)
    print(f"{'case':<28} {'held MiB':>9} {'bwd peak':>9} {'ratio':>6} {'step peak':>9} {'ratio':>6}")
    with newch.persistent():
        w = newch.randn(35, 20, 200)
        tokens = newch.randint(0, 1000, (35, 20))
    emb = newch.nn.Embedding(1000, 200)
    for kind in args.cells.split(","):
        for layers in (1, 2):
            for input_grad in (False, True):
                m = getattr(newch.nn, kind)(200, 200, num_layers=layers)
                # an input needing a gradient comes from a layer below, as in a language model
                x = (lambda: emb(tokens)) if input_grad else (lambda: newch.randn(35, 20, 200))
                _row(f"{kind} x{layers}" + (" input grad" if input_grad else ""),
                     *_measure(lambda: (m(x())[0] * w).sum()))
    if args.lm:
        nn, F = newch.nn, newch.nn.functional
        emb, rnn, head = nn.Embedding(10000, 200), nn.LSTM(200, 200, 2, dropout=0.2), nn.Linear(200, 10000)
        x, y = newch.randint(0, 10000, (35, 20)), newch.randint(0, 10000, (35 * 20,))
        with newch.persistent():
            x, y = x.clone(), y.clone()

        def lm():
            out, _ = rnn(emb(x))
            return F.nll_loss(F.log_softmax(head(out.reshape(-1, 200)), -1), y)
        _row("word-LM step (sequence.py)", *_measure(lm))


if __name__ == "__main__":
    main()
