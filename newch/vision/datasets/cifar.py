"""CIFAR-10: 32 x 32 colour images in 10 classes, read from the official python pickles.

The batch files are pickles; they are read with a restricted unpickler that
admits only what they contain (dicts, lists, bytes, strings and numpy uint8
arrays), so a tampered file cannot run code.
"""
import io
import os
import pickle
import tarfile

import numpy as np

from ... import dtypes as D
from ...context import default_context
from ...data.dataset import Dataset
from ...ops.creation import from_numpy, tensor
from ...ops.indexing import index_select
from .mnist import _md5, download_file

_ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
            ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode"),
            ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar")}


class _BatchUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"CIFAR10: refused to load {module}.{name}: a CIFAR batch "
                                     f"file holds only dicts, lists and arrays")


def read_batch(path):
    """(images uint8 (N, 32, 32, 3), labels list) from one CIFAR-10 python batch file."""
    try:
        with open(path, "rb") as f:
            entry = _BatchUnpickler(f, encoding="latin1").load()
        data = np.asarray(entry["data"], np.uint8)
        labels = entry["labels"] if "labels" in entry else entry["fine_labels"]
        images = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    except (pickle.UnpicklingError, EOFError, KeyError, ValueError, TypeError) as e:
        raise RuntimeError(f"CIFAR10: {path} is not a readable CIFAR batch (corrupt, truncated "
                           f"or not a CIFAR file: {e})") from None
    if len(labels) != len(images):
        raise RuntimeError(f"CIFAR10: {path} has {len(images)} images but {len(labels)} labels")
    return np.ascontiguousarray(images), list(labels)


class CIFAR10(Dataset):
    """CIFAR-10 (``torchvision.datasets.CIFAR10``): items are (uint8 32 x 32 x 3 image, label).

    Args:
        root: folder holding ``cifar-10-batches-py/`` (as the official archive unpacks).
        train: the five training batches (50,000 images) or the test batch (10,000).
        transform, target_transform: applied to the image and the label.
        download: fetch and unpack the official archive into ``root`` (md5 checked).

    ``data`` is a persistent uint8 tensor (N, 32, 32, 3), ``targets`` a list of ints, as
    torchvision's. ``vision.transforms.ToTensor()`` makes an image a float (3, 32, 32).
    """

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [f"data_batch_{i}" for i in range(1, 6)]
    test_list = ["test_batch"]
    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
               "truck"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(str(root))
        self.train = bool(train)
        self.transform, self.target_transform = transform, target_transform
        if download:
            self.download()
        folder = os.path.join(self.root, self.base_folder)
        names = self.train_list if self.train else self.test_list
        missing = [n for n in names if not os.path.isfile(os.path.join(folder, n))]
        if missing:
            raise RuntimeError(f"{type(self).__name__}: dataset not found: expected {missing} in "
                               f"{folder}. Use download=True, or unpack {self.filename} into "
                               f"{self.root}")
        parts = [read_batch(os.path.join(folder, n)) for n in names]
        images = np.concatenate([p[0] for p in parts])
        self.targets = [t for p in parts for t in p[1]]
        with default_context().persistent():
            self.data = from_numpy(images).clone()
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def download(self):
        """Fetch and unpack the archive unless the batches are already there."""
        folder = os.path.join(self.root, self.base_folder)
        if all(os.path.isfile(os.path.join(folder, n)) for n in self.train_list + self.test_list):
            return
        archive = os.path.join(self.root, self.filename)
        if not (os.path.isfile(archive) and _md5(archive) == self.tgz_md5):
            base, name = self.url.rsplit("/", 1)
            download_file([base + "/"], self.root, name, self.tgz_md5)
        with tarfile.open(archive, "r:gz") as tar:
            members = [m for m in tar.getmembers()
                       if m.isfile() and not os.path.isabs(m.name) and ".." not in m.name.split("/")]
            for m in members:
                target = os.path.join(self.root, m.name)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with tar.extractfile(m) as src, open(target, "wb") as dst:
                    dst.write(src.read())

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        img, target = self.data[index], self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def _gather(self, indices):
        if self.transform is not None or self.target_transform is not None:
            return None
        idx = tensor(list(indices), dtype=D.int64)
        return index_select(self.data, 0, idx), tensor([self.targets[i] for i in indices])

    def __repr__(self):
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {self.root}\n    Split: {'Train' if self.train else 'Test'}")


def write_batch(path, images, labels):
    """Write a CIFAR-style batch file (for tests and tiny local datasets)."""
    data = np.asarray(images, np.uint8).transpose(0, 3, 1, 2).reshape(len(images), -1)
    buf = io.BytesIO()
    pickle.dump({"batch_label": "newch", "labels": list(labels), "data": data,
                 "filenames": [f"{i}.png" for i in range(len(labels))]}, buf, protocol=2)
    with open(path, "wb") as f:
        f.write(buf.getvalue())
