"""The progress display of ``fit`` / ``evaluate`` / ``predict``: a bar with the running figures.

In a terminal it redraws one line (``\\r``); in a Jupyter notebook it updates one
output area (IPython's display handle), so a long run does not print thousands
of lines. ``verbose=0`` shows nothing, ``1`` a live bar, ``2`` one line per epoch.
"""
import sys
import time

_WIDTH = 24


def in_notebook():
    """True inside a Jupyter kernel (where ``\\r`` redraws do not work)."""
    shell = sys.modules.get("IPython")
    if shell is None or "ipykernel" not in sys.modules:
        return False
    try:
        return shell.get_ipython() is not None
    except Exception:
        return False


def _fmt_time(s):
    s = int(round(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """One bar over ``total`` steps (None if unknown); ``update(done, logs)`` redraws it.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> p = Progress(2, verbose=1, stream=out)
        >>> p.update(2, {"loss": 0.25}, final=True)
        >>> "loss: 0.2500" in out.getvalue()
        True
    """

    def __init__(self, total, verbose=1, prefix="", stream=None):
        self.total, self.verbose, self.prefix = total, verbose, prefix
        self.stream = stream or sys.stdout
        self.start = time.perf_counter()
        self._last = 0.0
        self._handle = None
        self._notebook = stream is None and in_notebook()
        self.done = 0
        self._shown = 0       # length of the line on screen, to blank what a shorter one leaves

    def line(self, done, logs):
        """The text of the bar after ``done`` steps."""
        elapsed = time.perf_counter() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        parts = [self.prefix] if self.prefix else []
        if self.total:
            filled = int(_WIDTH * done / self.total)
            bar = "=" * max(filled - 1, 0) + (">" if done < self.total else "=") * (filled > 0)
            parts.append(f"{done}/{self.total} [{bar:<{_WIDTH}}]")
            if done < self.total and rate > 0:
                parts.append(f"ETA {_fmt_time((self.total - done) / rate)}")
            else:
                parts.append(_fmt_time(elapsed))
        else:
            parts.append(f"{done} steps {_fmt_time(elapsed)}")
        parts.append(f"{rate:.1f} steps/s")
        parts += [f"{k}: {v:.4f}" for k, v in logs.items() if isinstance(v, float)]
        return " - ".join(parts)

    def update(self, done, logs, final=False):
        """Redraw (at most 10 times a second, always on ``final``)."""
        self.done = done
        if self.verbose != 1 and not (final and self.verbose == 2):
            return
        now = time.perf_counter()
        if not final and now - self._last < 0.1:
            return
        self._last = now
        text = self.line(done, logs)
        if self._notebook:
            self._show_notebook(text)
        elif self.verbose == 1:
            pad = " " * max(self._shown - len(text), 0)
            self._shown = len(text)
            self.stream.write("\r" + text + pad + ("\n" if final else ""))
            self.stream.flush()
        else:
            self.stream.write(text + "\n")

    def _show_notebook(self, text):
        from IPython.display import display   # NOTE: only inside a notebook, where IPython is
        if self._handle is None:
            self._handle = display({"text/plain": text}, raw=True, display_id=True)
        else:
            self._handle.update({"text/plain": text}, raw=True)
