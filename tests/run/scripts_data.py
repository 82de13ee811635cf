"""A small MNIST root (torchvision's layout) cut from the images shipped with newch, for the scripts."""
import gzip
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SHIPPED = os.path.join(HERE, "..", "..", "newch", "vision", "data", "mnist")


def _idx(arr):
    head = bytes([0, 0, 8, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    return head + np.ascontiguousarray(arr, np.uint8).tobytes()


def _read(name, ndim):
    with gzip.open(os.path.join(SHIPPED, name)) as f:
        raw = f.read()
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def make_mnist_root(root, n_train=256, n_test=128):
    """Write root/MNIST/raw/{train,t10k}-{images,labels} (uncompressed IDX) and return root."""
    images = _read("t10k-images-idx3-ubyte.gz", 3)
    labels = _read("t10k-labels-idx1-ubyte.gz", 1)
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    parts = {"train": slice(0, n_train), "t10k": slice(8000, 8000 + n_test)}
    for prefix, cut in parts.items():
        with open(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), "wb") as f:
            f.write(_idx(images[cut]))
        with open(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
            f.write(_idx(labels[cut]))
    return root


WORDS = ("the cat dog sat on a mat and ran to see bird tree small big red blue house over under "
         "quick slow it was is in of with from green".split())


def make_corpus(path, lines=60):
    """A small deterministic text (seeded sentences over a 30-word vocabulary) for the LM script."""
    rng = np.random.default_rng(0)
    with open(path, "w") as f:
        for _ in range(lines):
            n = int(rng.integers(5, 12))
            f.write(" ".join(WORDS[i] for i in rng.integers(0, len(WORDS), n)) + "\n")
    return path
