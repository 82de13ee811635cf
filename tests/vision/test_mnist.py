"""vision.datasets.MNIST: the shipped images, torchvision's folder layout, corrupt files, downloads."""
import gzip
import hashlib
import io
import os
import urllib.error

import numpy as np
import pytest

import newch
from newch.data import DataLoader
from newch.vision import transforms as T
from newch.vision.datasets import MNIST, mnist as mnist_module
from newch.vision.datasets.idx import read_idx



def _idx_bytes(arr):
    arr = np.asarray(arr, np.uint8)
    head = bytes([0, 0, 8, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    return head + arr.tobytes()


def test_shipped_files_are_the_real_t10k_set():
    # md5 of the uncompressed files, as the data's README lists them
    for name, md5 in [("t10k-images-idx3-ubyte.gz", "2646ac647ad5339dbf082846283269ea"),
                      ("t10k-labels-idx1-ubyte.gz", "27ae3e4e09519cfbb04c329615203637")]:
        with gzip.open(os.path.join(mnist_module.SHIPPED, name)) as f:
            assert hashlib.md5(f.read()).hexdigest() == md5


def test_shipped_split_8000_train_2000_test_without_overlap():
    tr, te = MNIST(train=True), MNIST(train=False)
    assert len(tr) == 8000 and len(te) == 2000
    allimg = read_idx(os.path.join(mnist_module.SHIPPED, "t10k-images-idx3-ubyte.gz"), 3)
    np.testing.assert_array_equal(tr.data.numpy(), allimg[:8000])
    np.testing.assert_array_equal(te.data.numpy(), allimg[8000:])
    assert tr.data.is_persistent and tr.targets.is_persistent
    assert tr.data.dtype == newch.uint8 and tr.targets.dtype == newch.int64
    assert sorted(set(te.targets.tolist())) == list(range(10))


def test_items_and_transforms():
    ds = MNIST(train=False)
    img, label = ds[0]
    assert tuple(img.shape) == (28, 28) and img.dtype == newch.uint8 and isinstance(label, int)
    t = MNIST(train=False, transform=T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))]),
              target_transform=lambda y: y + 100)
    x, y = t[0]
    ref = (img.numpy().astype(np.float32) / 255 - np.float32(0.1307)) / np.float32(0.3081)
    np.testing.assert_allclose(x.numpy()[0], ref, rtol=1e-6)
    assert y == label + 100


def test_loader_gather_path_equals_item_by_item():
    ds = MNIST(train=False)
    fast = next(iter(DataLoader(ds, batch_size=16, sampler=list(range(30, 46)))))
    slow = next(iter(DataLoader(ds, batch_size=16, sampler=list(range(30, 46)),
                                collate_fn=lambda items: items)))
    np.testing.assert_array_equal(fast[0].numpy(), np.stack([i.numpy() for i, _ in slow]))
    assert fast[1].tolist() == [lbl for _, lbl in slow]


def _write_root(tmp_path, n=5, gz=True, cls="MNIST", prefix="train"):
    raw = tmp_path / cls / "raw"
    raw.mkdir(parents=True)
    imgs = np.arange(n * 28 * 28).reshape(n, 28, 28) % 251
    labels = np.arange(n) % 10
    for name, arr in [(f"{prefix}-images-idx3-ubyte", imgs), (f"{prefix}-labels-idx1-ubyte", labels)]:
        payload = _idx_bytes(arr)
        if gz:
            with gzip.open(raw / (name + ".gz"), "wb") as f:
                f.write(payload)
        else:
            (raw / name).write_bytes(payload)
    return imgs, labels


@pytest.mark.parametrize("gz", [True, False])
def test_reads_torchvision_layout(tmp_path, gz):
    imgs, labels = _write_root(tmp_path, gz=gz)
    ds = MNIST(str(tmp_path), train=True)
    np.testing.assert_array_equal(ds.data.numpy(), imgs)
    assert ds.targets.tolist() == labels.tolist()


def test_missing_files_name_the_folder(tmp_path):
    with pytest.raises(RuntimeError, match="MNIST/raw"):
        MNIST(str(tmp_path), train=False)


def test_truncated_and_corrupt_files_are_errors(tmp_path):
    _write_root(tmp_path, gz=False)
    p = tmp_path / "MNIST" / "raw" / "train-images-idx3-ubyte"
    p.write_bytes(p.read_bytes()[:-10])
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        MNIST(str(tmp_path))
    p.write_bytes(b"\x00\x00\x09\x03" + p.read_bytes()[4:])
    with pytest.raises(RuntimeError, match="magic"):
        MNIST(str(tmp_path))
    q = tmp_path / "broken.gz"
    q.write_bytes(gzip.compress(_idx_bytes(np.zeros((2, 28, 28))))[:-20])
    with pytest.raises(RuntimeError, match="read_idx"):
        read_idx(str(q), 3)


def test_download_offline_is_a_clear_error(tmp_path, monkeypatch):
    def offline(*a, **k):
        raise urllib.error.URLError("no network")
    monkeypatch.setattr(mnist_module.urllib.request, "urlopen", offline)
    with pytest.raises(RuntimeError, match="could not fetch train-images-idx3-ubyte.gz.*copy"):
        MNIST(str(tmp_path), download=True)


def test_download_checks_md5(tmp_path, monkeypatch):
    imgs = np.zeros((3, 28, 28), np.uint8)
    files = {"train-images-idx3-ubyte.gz": gzip.compress(_idx_bytes(imgs)),
             "train-labels-idx1-ubyte.gz": gzip.compress(_idx_bytes(np.array([1, 2, 3]))),
             "t10k-images-idx3-ubyte.gz": gzip.compress(_idx_bytes(imgs)),
             "t10k-labels-idx1-ubyte.gz": gzip.compress(_idx_bytes(np.array([4, 5, 6])))}

    def fake(url, timeout=None):
        return io.BytesIO(files[url.rsplit("/", 1)[1]])
    monkeypatch.setattr(mnist_module.urllib.request, "urlopen", fake)
    with pytest.raises(RuntimeError, match="md5 mismatch"):
        MNIST(str(tmp_path), download=True)           # the real md5s do not match our fakes
    assert not list((tmp_path / "MNIST" / "raw").glob("*.gz"))    # nothing half-written kept

    class Fake(MNIST):
        resources = [(n, hashlib.md5(b).hexdigest()) for n, b in files.items()]
    ds = Fake(str(tmp_path), train=False, download=True)
    assert ds.targets.tolist() == [4, 5, 6]
