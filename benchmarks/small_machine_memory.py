"""Resident memory of a cold first MLP training step, split into the program's own and an emulator's.

    python benchmarks/small_machine_memory.py                 # cold: empty temporary kernel caches
    python benchmarks/small_machine_memory.py --warm          # the user's kernel cache as it is
    python benchmarks/small_machine_memory.py --top 12        # also the largest mappings at the peak

Run the same command natively and inside an emulated Pi root (qemu-user, ``tools/pi.sh``; see
docs/pi.md). Prints one ``key: value`` line per figure, in MiB.

How the emulator's share is told apart (Linux, qemu-user 7.2 as Debian bookworm ships it): qemu
runs the guest program in its own process, in one address space. Inside the guest,
``/proc/self/maps`` is emulated: it lists only the guest's mappings. ``/proc/self/smaps`` is not: it
is the kernel's, and lists every mapping of the process with its resident pages, qemu's own
included (its translated-code buffer, its heap, its binary). A sampler thread reads both every
``--interval`` seconds: resident pages of mappings the guest's maps list are the program's
(``guest``: what a real Pi would hold, up to page size and CPU differences), the rest are qemu's
(``emulator``). Natively both files list the same mappings and ``emulator`` is 0. The guest figure
is split into ``anon`` (heap, stacks, LLVM's working memory: must stay in RAM) and ``file``
(pages of shared libraries and data files: clean, the kernel can drop and re-read them under
memory pressure).

``peak_rss_total_mib`` is the kernel's own high-water mark (``VmHWM``, what ``/usr/bin/time -v``
reports); the other peaks are the highest sample, so a spike shorter than ``--interval`` may be
missed. Where smaps reports no resident pages at all (a newer qemu emulating it too), only the
totals are printed.
"""
import argparse
import os
import sys
import tempfile
import threading
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [_ROOT] + [p for p in sys.path if p not in ("", os.path.join(_ROOT, "benchmarks"))]

MiB = 1024 * 1024
CODE_BUFFER_MIN = 16 * MiB   # an rwx anonymous mapping this big in smaps is qemu's translated-code buffer


def parse_maps(text):
    """[(start, end)] of the mappings in a ``/proc/PID/maps`` text, sorted."""
    spans = []
    for line in text.splitlines():
        head = line.split(None, 1)[0] if line.strip() else ""
        if "-" in head:
            a, b = head.split("-")
            spans.append((int(a, 16), int(b, 16)))
    return sorted(spans)


def parse_smaps(text):
    """[dict(start, end, perms, path, rss, anon)] of a ``/proc/PID/smaps`` text (sizes in bytes)."""
    out = []
    cur = None
    for line in text.splitlines():
        first = line.split(None, 1)[0] if line.strip() else ""
        if "-" in first and not first.endswith(":"):
            parts = line.split(None, 5)
            a, b = first.split("-")
            cur = dict(start=int(a, 16), end=int(b, 16), perms=parts[1],
                       path=parts[5].strip() if len(parts) > 5 else "", rss=0, anon=0)
            out.append(cur)
        elif cur is not None and first == "Rss:":
            cur["rss"] = int(line.split()[1]) * 1024
        elif cur is not None and first == "Anonymous:":
            cur["anon"] = int(line.split()[1]) * 1024
    return out


def guest_offset(guest_spans, smaps):
    """qemu's ``guest_base``: host address minus guest address (0 natively and in most qemu runs).

    Found by lining up the first guest mapping with a host mapping of the same length.
    """
    if not guest_spans:
        return 0
    g0, g1 = guest_spans[0]
    starts = {m["start"] for m in smaps}
    if g0 in starts:
        return 0
    for m in smaps:
        if m["end"] - m["start"] == g1 - g0:
            return m["start"] - g0
    return 0


def _inside(spans, addr):
    """True when ``addr`` lies in one of the sorted ``spans`` [(start, end)]."""
    lo, hi = 0, len(spans)
    while lo < hi:                       # past the last span starting at or before ``addr``
        mid = (lo + hi) // 2
        if spans[mid][0] <= addr:
            lo = mid + 1
        else:
            hi = mid
    return lo > 0 and addr < spans[lo - 1][1]


def split(guest_spans, smaps):
    """Bytes resident: dict(total, guest, guest_anon, guest_file, emulator, emulator_code)."""
    off = guest_offset(guest_spans, smaps)
    r = dict(total=0, guest=0, guest_anon=0, guest_file=0, emulator=0, emulator_code=0)
    for m in smaps:
        r["total"] += m["rss"]
        if _inside(guest_spans, m["start"] - off):
            r["guest"] += m["rss"]
            r["guest_anon"] += m["anon"]
            r["guest_file"] += m["rss"] - m["anon"]
        else:
            r["emulator"] += m["rss"]
            if "x" in m["perms"] and not m["path"] and m["end"] - m["start"] >= CODE_BUFFER_MIN:
                r["emulator_code"] += m["rss"]
    return r


def top_mappings(guest_spans, smaps, n):
    """The ``n`` largest resident groups: (MiB, owner, name), mappings grouped by file name."""
    off = guest_offset(guest_spans, smaps)
    groups = {}
    for m in smaps:
        owner = "guest" if _inside(guest_spans, m["start"] - off) else "emulator"
        name = os.path.basename(m["path"]) if m["path"] else "[anon]"
        if owner == "emulator" and not m["path"] and "x" in m["perms"]:
            name = "[translated code]"
        key = (owner, name)
        groups[key] = groups.get(key, 0) + m["rss"]
    rows = sorted(((b / MiB, o, nm) for (o, nm), b in groups.items()), reverse=True)
    return rows[:n]


def _read(path):
    with open(path) as f:
        return f.read()


def sample(tries=5):
    """(guest spans, smaps) of this process now.

    The maps are read before and after smaps; when another thread mapped or unmapped
    memory in between (the two reads disagree), the sample is taken again. A mapping
    counts as the guest's when it starts inside one the guest's maps list (a heap that
    grew between the reads still does).
    """
    for _ in range(tries):
        before = _read("/proc/self/maps")
        smaps = _read("/proc/self/smaps")
        if _read("/proc/self/maps") == before:
            break
    return parse_maps(before), parse_smaps(smaps)


def vm_hwm():
    """The kernel's peak resident set of this process (``VmHWM``), bytes."""
    for line in _read("/proc/self/status").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


class Sampler:
    """A daemon thread keeping the per-key maxima of ``split`` (and the mappings at the guest peak)."""

    def __init__(self, interval):
        self.interval = interval
        self.peak = {}
        self.at_peak = None
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)

    def take(self):
        spans, smaps = sample()
        r = split(spans, smaps)
        self.samples += 1
        if r["guest"] > self.peak.get("guest", -1):
            self.at_peak = (spans, smaps, r)
        for k, v in r.items():
            self.peak[k] = max(self.peak.get(k, 0), v)
        return r

    def _run(self):
        while not self._stop.wait(self.interval):
            self.take()

    def __enter__(self):
        self.take()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.take()


def _print_now(label, r):
    print(f"{label}_total_mib: {r['total'] / MiB:.0f}")
    print(f"{label}_guest_mib: {r['guest'] / MiB:.0f} (anon {r['guest_anon'] / MiB:.0f}, "
          f"file {r['guest_file'] / MiB:.0f})")
    print(f"{label}_emulator_mib: {r['emulator'] / MiB:.0f}")
    sys.stdout.flush()


def _mlp(torch):
    """The 784-256-10 MLP of benchmarks/small_machine.py, its batch and loss."""
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    return model, (torch.randn(64, 784), torch.randn(64, 10)), torch.nn.functional.mse_loss


def run(interval=0.1, top=0):
    """Import newch, run one op, then one cold MLP step, printing the split at each point."""
    sampler = Sampler(interval)
    with sampler:
        _print_now("rss_start", sampler.take())
        t0 = time.perf_counter()
        import newch as torch
        _print_now("rss_after_import", sampler.take())
        x = torch.ones(10)
        (x + x).sum().item()
        ctx = torch.default_context()
        print(f"backend: {ctx.backend}")
        _print_now("rss_after_first_op", sampler.take())
        torch.manual_seed(0)
        model, (xb, yb), loss_fn = _mlp(torch)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        opt.step()
        ctx.step_end()
        _print_now("rss_after_first_step", sampler.take())
        print(f"first_step_s: {time.perf_counter() - t0:.1f}")
    p = sampler.peak
    print(f"samples: {sampler.samples} (every {interval} s)")
    print(f"peak_rss_total_mib: {vm_hwm() / MiB:.0f}")
    print(f"arena_bytes_reserved: {ctx.mem_stats()['arena_bytes_reserved']}")
    if p.get("total", 0) == 0:
        print("split: unavailable (smaps reports no resident pages here)")
        return
    g = sampler.at_peak[2]
    print(f"peak_guest_mib: {g['guest'] / MiB:.0f} (anon {g['guest_anon'] / MiB:.0f}, "
          f"file {g['guest_file'] / MiB:.0f}; emulator then {g['emulator'] / MiB:.0f})")
    print(f"peak_emulator_mib: {p['emulator'] / MiB:.0f} (translated code {p['emulator_code'] / MiB:.0f})")
    if top and sampler.at_peak:
        spans, smaps, _ = sampler.at_peak
        print("largest mappings at the guest peak (MiB, owner, file):")
        for mib, owner, name in top_mappings(spans, smaps, top):
            print(f"  {mib:7.1f}  {owner:8s}  {name}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warm", action="store_true", help="keep the kernel cache (default: empty temp caches)")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between samples (default 0.1)")
    ap.add_argument("--top", type=int, default=0, help="print the N largest mappings at the guest peak")
    args = ap.parse_args(argv)
    if args.warm:
        run(args.interval, args.top)
        return
    with tempfile.TemporaryDirectory(prefix="newch-cold-") as d:
        os.environ["NUMBA_CACHE_DIR"] = os.environ["NEWCH_CACHE_DIR"] = d
        run(args.interval, args.top)


if __name__ == "__main__":
    main()
