"""MNIST (and datasets stored like it): 28 x 28 grey digits with their labels.

Files are read from ``root/<ClassName>/raw/`` as torchvision lays them out.
With ``root=None``, ``MNIST`` uses the 10,000 real test-set images shipped
inside newch (MNIST by Yann LeCun, Corinna Cortes and Christopher J.C. Burges,
CC BY-SA 3.0): ``train=True`` is the first 8,000, ``train=False`` the last 2,000.
"""
import hashlib
import os
import tempfile
import urllib.error
import urllib.request

from ...data.dataset import Dataset
from ...ops.creation import from_numpy
from ...ops.indexing import index_select
from ...ops.creation import tensor
from ... import dtypes as D
from ...context import default_context
from .idx import find_file, read_idx

SHIPPED = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "mnist")
SHIPPED_TRAIN = 8000


def _md5(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def download_file(urls, folder, name, md5):
    """Fetch ``name`` from the first of ``urls`` that answers, check its md5, write it atomically."""
    os.makedirs(folder, exist_ok=True)
    errors = []
    for base in urls:
        try:
            with urllib.request.urlopen(base + name, timeout=30) as r:
                payload = r.read()
        except (urllib.error.URLError, OSError, ValueError) as e:
            errors.append(f"{base}{name}: {e}")
            continue
        fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + name)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        if _md5(tmp) != md5:
            os.unlink(tmp)
            errors.append(f"{base}{name}: md5 mismatch (expected {md5})")
            continue
        os.replace(tmp, os.path.join(folder, name))
        return
    raise RuntimeError(f"download: could not fetch {name} ({'; '.join(errors)}). If this machine "
                       f"is offline, copy the file into {folder} yourself")


class MNIST(Dataset):
    """The MNIST digits (``torchvision.datasets.MNIST``): items are (image, label).

    Args:
        root: folder holding ``MNIST/raw/`` (None: the 10,000 images shipped with newch).
        train: the training split (else the test split).
        transform: applied to the image (a uint8 28 x 28 tensor).
        target_transform: applied to the label (an int).
        download: fetch the official files into ``root/MNIST/raw/`` if missing (md5 checked).

    ``data`` (uint8, N x 28 x 28) and ``targets`` (int64, N) are persistent tensors.
    torchvision gives PIL images; newch has no image library, so an item's image is a
    uint8 tensor, which ``vision.transforms.ToTensor`` turns into float (1, 28, 28).

    Example:
        >>> ds = MNIST(train=False)
        >>> img, label = ds[0]
        >>> len(ds), tuple(img.shape), img.dtype, type(label).__name__
        (2000, (28, 28), newch.uint8, 'int')
    """

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root=None, train=True, transform=None, target_transform=None,
                 download=False):
        self.root = os.path.expanduser(str(root)) if root is not None else None
        self.train = bool(train)
        self.transform, self.target_transform = transform, target_transform
        images, labels = self._load_arrays(download)
        if len(images) != len(labels):
            raise RuntimeError(f"{type(self).__name__}: {len(images)} images but {len(labels)} "
                               f"labels; the files do not belong together")
        with default_context().persistent():
            self.data = from_numpy(images).clone()
            self.targets = from_numpy(labels.astype("int64")).clone()

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def _names(self):
        prefix = "train" if self.train else "t10k"
        return f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"

    def _load_arrays(self, download):
        if self.root is None:
            if type(self) is not MNIST:
                raise RuntimeError(f"{type(self).__name__}: newch ships no copy of this dataset; "
                                   f"pass root= (and download=True to fetch it)")
            images = read_idx(os.path.join(SHIPPED, "t10k-images-idx3-ubyte.gz"), 3)
            labels = read_idx(os.path.join(SHIPPED, "t10k-labels-idx1-ubyte.gz"), 1)
            cut = slice(0, SHIPPED_TRAIN) if self.train else slice(SHIPPED_TRAIN, None)
            return images[cut], labels[cut]
        img_name, lbl_name = self._names()
        if download:
            self.download()
        paths = [find_file(self.raw_folder, n) for n in (img_name, lbl_name)]
        if None in paths:
            raise RuntimeError(f"{type(self).__name__}: dataset not found: expected "
                               f"{img_name}(.gz) and {lbl_name}(.gz) in {self.raw_folder}. "
                               f"Use download=True to fetch them, or copy them there")
        return read_idx(paths[0], 3), read_idx(paths[1], 1)

    def download(self):
        """Fetch the split's files into ``raw_folder`` unless they are already there."""
        for name, md5 in self.resources:
            if find_file(self.raw_folder, name[:-3]) is None:
                download_file(self.mirrors, self.raw_folder, name, md5)

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def _gather(self, indices):
        """A whole batch in one gather per field, when no transform changes the items."""
        if self.transform is not None or self.target_transform is not None:
            return None
        idx = tensor(list(indices), dtype=D.int64)
        return index_select(self.data, 0, idx), index_select(self.targets, 0, idx)

    def extra_repr(self):
        return f"Split: {'Train' if self.train else 'Test'}"

    def __repr__(self):
        where = self.root if self.root is not None else "(shipped with newch)"
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {where}\n    {self.extra_repr()}")


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, stored like MNIST (``root/FashionMNIST/raw/``)."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]
