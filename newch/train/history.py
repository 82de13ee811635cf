"""History: what ``fit`` returns, per-epoch figures by name (Keras's ``History``)."""


class History:
    """Per-epoch values of the loss and metrics ``fit`` reported.

    ``history`` maps ``"loss"``, ``"val_loss"`` and metric names (``"accuracy"``,
    ``"val_accuracy"``...) to one value per epoch; ``epoch`` lists the epoch
    numbers; ``interrupted`` is True when Ctrl-C stopped the run early;
    ``stopped_early`` when a callback (EarlyStopping) did.

    Example:
        >>> h = History()
        >>> h.append(0, {"loss": 0.5})
        >>> h.history
        {'loss': [0.5]}
    """

    def __init__(self):
        self.history = {}
        self.epoch = []
        self.params = {}
        self.interrupted = False
        self.stopped_early = False

    def append(self, epoch, logs):
        """Record ``logs`` (name -> number) for ``epoch``."""
        self.epoch.append(epoch)
        for k, v in logs.items():
            self.history.setdefault(k, []).append(v)

    def plot(self, keys=None, ax=None):
        """Plot the curves with matplotlib (an optional extra); returns the axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("History.plot: matplotlib is not installed; pip install "
                              "'newch[plot]' (or matplotlib)") from None
        if ax is None:
            ax = plt.figure(figsize=(6, 3.5)).gca()
        for k in keys or self.history:
            ax.plot([e + 1 for e in self.epoch], self.history[k], marker="o", label=k)
        ax.set_xlabel("epoch")
        ax.legend()
        return ax

    def __repr__(self):
        return f"History(epochs={len(self.epoch)}, keys={list(self.history)})"
