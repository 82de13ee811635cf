"""A short tour of newch's memory model: ``python -m newch.demo --tour``.

Trains a small regression model for a few steps, showing where temporaries
live, what ``step_end()`` frees, what survives in ``persistent()``, and what a
stale tensor says when it is used too late.
"""
import newch as torch
import newch.net as nn
import newch.net.functional as F


def _mib(n):
    return f"{n / 2**20:.2f} MiB"


def main():
    torch.manual_seed(0)
    ctx = torch.default_context()
    print(f"newch {torch.__version__}: {ctx.threads} threads, kernels: {ctx.backend}")

    with torch.persistent():                       # data that lives across steps
        xs = torch.rand(512, 8) * 6 - 3
        ys = (xs.sin() * torch.linspace(0.5, 2.0, 8)).sum(1, keepdim=True)
    model = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    print(f"data + parameters are persistent: {_mib(torch.mem_stats()['persistent_bytes'])}")

    for step in range(201):
        idx = torch.randint(0, 512, (64,))
        loss = F.mse_loss(model(xs[idx]), ys[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            s = torch.mem_stats()
            print(f"step {step:3d}  loss {loss.item():.4f}  arena in use {_mib(s['arena_bytes_in_use'])}"
                  f"  peak {_mib(s['arena_peak_bytes'])}  reserved {_mib(s['arena_bytes_reserved'])}")
        last = loss
        torch.step_end()                           # frees every temporary of the step at once

    try:
        last.item()                                # a temporary of a finished step
    except torch.NcError as e:
        print("using a freed temporary:", e)

    ctx.reset_peak()
    with torch.no_grad():
        pred = model(xs)
    print(f"inference on 512 rows: arena peak {_mib(torch.mem_stats()['arena_peak_bytes'])}, "
          f"mse {F.mse_loss(pred, ys).item():.4f}")
    torch.step_end()


if __name__ == "__main__":
    main()
