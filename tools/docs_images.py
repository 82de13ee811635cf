"""Draw the images the documentation site shows, with newch and matplotlib.

    python tools/docs_images.py                 # writes docs/images/*.png
    python tools/docs_images.py --out /tmp/img  # somewhere else (the test does this)

Trains a small MLP on the MNIST digits shipped with newch (the quick start's
model: ``Flatten -> Linear(784, 128) -> ReLU -> Linear(128, 10)``, SGD with
momentum, 4 epochs on 8,000 images, 2,000 held out) and writes:

- ``history.png``: ``History.plot()`` of the run (loss, accuracy, validation);
- ``mnist_predictions.png``: the first 24 test digits with the predicted label,
  in red where it is wrong.

Everything is seeded, so the figures (not the PNG bytes: matplotlib versions
differ) are the same on every run. The images are committed; ``mkdocs build``
does not run this script, a test does (tests/docs/test_docs_site.py).

Example:
    >>> history, acc = train(epochs=1, n_train=512)   # doctest: +SKIP
"""
import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def train(epochs=4, n_train=8000, seed=0):
    """Fit the MLP on the shipped digits; returns (model, History, test images, test labels)."""
    import newch as torch
    import newch.nn as nn
    from newch.vision import datasets

    torch.manual_seed(seed)
    train_ds, test_ds = datasets.MNIST(train=True), datasets.MNIST(train=False)
    x = train_ds.data[:n_train].float() / 255.0
    y = train_ds.targets[:n_train]
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with torch.persistent():
        xt = test_ds.data.float() / 255.0
    history = model.fit(x, y, loss="cross_entropy", optimizer=opt, epochs=epochs,
                        batch_size=64, metrics=["accuracy"],
                        validation_data=(xt, test_ds.targets), verbose=0)
    torch.step_end()
    return model, history, xt, test_ds.targets


def draw(out, epochs=4, n_train=8000):
    """Write history.png and mnist_predictions.png into folder ``out``; returns their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model, history, xt, yt = train(epochs, n_train)
    ax = history.plot()
    ax.set_title("model.fit: MNIST MLP, shipped digits")
    ax.figure.tight_layout()
    hist_png = out / "history.png"
    ax.figure.savefig(hist_png, dpi=100)
    plt.close(ax.figure)

    pred = model.predict(xt[:24], numpy=True).argmax(1)
    images, labels = xt[:24].numpy(), yt[:24].tolist()
    fig, axes = plt.subplots(3, 8, figsize=(8, 3.4))
    for i, a in enumerate(axes.flat):
        a.imshow(images[i], cmap="gray_r")
        a.set_title(str(int(pred[i])), color="black" if pred[i] == labels[i] else "red")
        a.axis("off")
    fig.suptitle("model.predict on test digits (red: wrong)")
    fig.tight_layout()
    pred_png = out / "mnist_predictions.png"
    fig.savefig(pred_png, dpi=100)
    plt.close(fig)
    return hist_png, pred_png, history


def main(argv=None):
    # ``python tools/docs_images.py`` puts tools/ first on sys.path, where a tools/ module named like a package
    # (tools/coverage.py once shadowed the ``coverage`` numba imports) could shadow it: drop it, put the checkout first.
    here = pathlib.Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if pathlib.Path(p or ".").resolve() != here]
    sys.path.insert(0, str(ROOT))
    ap = argparse.ArgumentParser(description="draw docs/images/*.png with newch + matplotlib")
    ap.add_argument("--out", default=str(ROOT / "docs" / "images"))
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--n-train", type=int, default=8000)
    args = ap.parse_args(argv)
    hist_png, pred_png, history = draw(args.out, args.epochs, args.n_train)
    print(f"wrote {hist_png} and {pred_png}; last val_accuracy "
          f"{history.history['val_accuracy'][-1]:.3f}")


if __name__ == "__main__":
    main()
