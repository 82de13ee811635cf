"""A character-level LSTM language model on the King James Genesis and Exodus, then a sample.

    python examples/char_lm.py              # newch, trained with fit (about a minute)
    python examples/char_lm.py --torch      # the same model and steps under PyTorch
    python examples/char_lm.py --short      # a few seconds (CI)

The text (examples/data/kjv_genesis_exodus.txt, public domain; see examples/data/README.md) is
cut into windows of ``--seq`` characters; the model (Embedding -> LSTM -> Linear) predicts each
next character. newch trains with ``Module.fit``; under ``--torch`` an explicit loop does what
fit does (shuffle, zero_grad, forward, loss, backward, step). Both print the loss on held-out
windows, so the two libraries can be compared, then sample text from the model.
``--save FILE`` writes the trained parameters (.npz), for checking determinism across threads.
"""
import argparse
import os
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = os.path.join(HERE, "data", "kjv_genesis_exodus.txt")


def parse():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch", action="store_true", help="run under PyTorch instead of newch")
    ap.add_argument("--short", action="store_true", help="a few seconds: small model, few steps")
    ap.add_argument("--steps", type=int, default=None, help="training steps (batches)")
    ap.add_argument("--seq", type=int, default=None, help="characters per training window")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=None)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="threads (0: the library's default)")
    ap.add_argument("--sample", type=int, default=300, help="characters to sample (0: none)")
    ap.add_argument("--save", default=None, help="write the trained parameters to this .npz")
    a = ap.parse_args()
    a.steps = a.steps or (30 if a.short else 400)
    a.seq = a.seq or (32 if a.short else 64)
    a.hidden = a.hidden or (64 if a.short else 128)
    return a


def load_text(path=TEXT):
    """The text, its sorted alphabet and the text as an int64 array of indices into it."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    return text, chars, np.array([lookup[c] for c in text], dtype=np.int64)


def windows(ids, seq):
    """(inputs, targets), each (n, seq): non-overlapping windows and the same shifted by one."""
    n = (len(ids) - 1) // seq
    x = ids[:n * seq].reshape(n, seq)
    y = ids[1:n * seq + 1].reshape(n, seq)
    return x, y


def build(torch, vocab, hidden):
    nn = torch.nn

    class CharLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, 32)
            self.lstm = nn.LSTM(32, hidden, batch_first=True)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, x, state=None):
            out, state = self.lstm(self.embed(x), state)
            return self.head(out), state

    class Logits(nn.Module):
        """What fit trains: the model without its state, logits flattened to (B * T, vocab)."""

        def __init__(self, lm):
            super().__init__()
            self.lm = lm

        def forward(self, x):
            return self.lm(x)[0].reshape(-1, vocab)

    return CharLM(), Logits


def schedule(n_windows, a):
    """(epochs, batches per epoch) giving at least ``a.steps`` batches (reshuffled each epoch)."""
    per = n_windows // a.batch
    epochs = -(-a.steps // per)
    return epochs, -(-a.steps // epochs)


def train(torch, model, x, y, a):
    """Adam on cross-entropy: ``fit`` under newch, the loop fit runs under torch."""
    F = torch.nn.functional
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    epochs, per_epoch = schedule(x.shape[0], a)

    def loss(out, target):
        return F.cross_entropy(out, target.reshape(-1))

    if torch.__name__ == "newch":
        model.fit(x, y, loss=loss, optimizer=opt, batch_size=a.batch, epochs=epochs, verbose=0,
                  steps_per_epoch=per_epoch)
        return epochs * per_epoch
    for _ in range(epochs):
        order = torch.randperm(x.shape[0])
        for i in range(per_epoch):
            idx = order[i * a.batch:(i + 1) * a.batch]
            opt.zero_grad()
            value = loss(model(x[idx]), y[idx])
            value.backward()
            opt.step()
    return epochs * per_epoch


def held_out_loss(torch, lm, x, y, vocab):
    with torch.no_grad():
        logits, _ = lm(x)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1)).item()


def sample(torch, lm, chars, n, prime="And God said"):
    """``n`` characters drawn one at a time from the model's softmax, after ``prime``."""
    lookup = {c: i for i, c in enumerate(chars)}
    out = list(prime)
    with torch.no_grad():
        logits, state = lm(torch.tensor([[lookup[c] for c in prime]]))
        for _ in range(n):
            probs = torch.softmax(logits[0, -1] / 0.8, dim=-1)
            i = torch.multinomial(probs, 1).item()
            out.append(chars[i])
            logits, state = lm(torch.tensor([[i]]), state)
    return "".join(out)


def main():
    a = parse()
    if a.torch:
        import torch
        if a.threads:
            torch.set_num_threads(a.threads)
    else:
        import newch as torch
        if a.threads:
            torch.set_default_context(torch.Context(threads=a.threads))
    torch.manual_seed(a.seed)
    text, chars, ids = load_text()
    xs, ys = windows(ids, a.seq)
    n_val = max(1, xs.shape[0] // 20)           # the last 5% of windows are held out
    x, y = torch.tensor(xs[:-n_val]), torch.tensor(ys[:-n_val])
    xv, yv = torch.tensor(xs[-n_val:][:64]), torch.tensor(ys[-n_val:][:64])
    lm, Logits = build(torch, len(chars), a.hidden)
    print(f"{torch.__name__}: {len(text)} characters, {len(chars)} distinct, {x.shape[0]} windows "
          f"of {a.seq}; batches of {a.batch}")
    print(f"held-out loss before: {held_out_loss(torch, lm, xv, yv, len(chars)):.4f}")
    t0 = time.perf_counter()
    steps = train(torch, Logits(lm), x, y, a)
    took = time.perf_counter() - t0
    print(f"held-out loss after: {held_out_loss(torch, lm, xv, yv, len(chars)):.4f} "
          f"({steps} steps, {took:.1f} s, {1000 * took / steps:.0f} ms/step)")
    if a.save:
        np.savez(a.save, **{k: v.detach().numpy() for k, v in lm.state_dict().items()})
    if a.sample:
        print(sample(torch, lm, chars, a.sample))


if __name__ == "__main__":
    main()
