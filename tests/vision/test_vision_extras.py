"""CIFAR10 (restricted unpickler), FakeData, geometric transforms, make_grid / save_image PNGs."""
import io
import os
import pickle
import struct
import zlib

import numpy as np
import pytest

import newch
from newch.vision import transforms as T
from newch.vision.datasets import CIFAR10, FakeData
from newch.vision.datasets.cifar import write_batch
from newch.vision.utils import make_grid, png_bytes, save_image


def _cifar_root(tmp_path, n=6):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
    for i, name in enumerate(CIFAR10.train_list + CIFAR10.test_list):
        write_batch(folder / name, imgs, [(i + k) % 10 for k in range(n)])
    return imgs


def test_cifar10_reads_the_python_batches(tmp_path):
    imgs = _cifar_root(tmp_path)
    train, test = CIFAR10(str(tmp_path), train=True), CIFAR10(str(tmp_path), train=False)
    assert len(train) == 30 and len(test) == 6
    np.testing.assert_array_equal(test.data.numpy(), imgs)
    img, label = test[2]
    assert tuple(img.shape) == (32, 32, 3) and img.dtype == newch.uint8 and label == 7
    x = T.ToTensor()(img)
    np.testing.assert_allclose(x.numpy(), imgs[2].transpose(2, 0, 1) / np.float32(255), rtol=1e-6)


def test_cifar10_refuses_a_hostile_pickle(tmp_path):
    _cifar_root(tmp_path)
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    with open(tmp_path / "cifar-10-batches-py" / "test_batch", "wb") as f:
        pickle.dump({"data": Evil(), "labels": [1]}, f)
    with pytest.raises(RuntimeError, match="refused to load"):
        CIFAR10(str(tmp_path), train=False)
    assert not marker.exists()


def test_cifar10_missing_files_name_the_folder(tmp_path):
    with pytest.raises(RuntimeError, match="cifar-10-batches-py"):
        CIFAR10(str(tmp_path))


def test_fake_data_is_deterministic_per_index():
    ds = FakeData(size=5, image_size=(3, 8, 6), num_classes=4)
    a, la = ds[3]
    b, lb = FakeData(size=5, image_size=(3, 8, 6), num_classes=4)[3]
    assert tuple(a.shape) == (8, 6, 3) and a.tolist() == b.tolist() and la == lb and 0 <= la < 4
    assert tuple(FakeData(2, (1, 5, 5))[0][0].shape) == (5, 5)
    with pytest.raises(IndexError):
        ds[5]


def test_resize_bilinear_matches_torch_interpolate():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).random((3, 9, 13)).astype(np.float32)
    ours = T.Resize((5, 7))(newch.tensor(x)).numpy()
    ref = torch.nn.functional.interpolate(torch.tensor(x)[None], size=(5, 7), mode="bilinear",
                                          align_corners=False, antialias=False)[0].numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
    assert tuple(T.Resize(4)(np.zeros((8, 16, 3), np.uint8)).shape) == (4, 8, 3)


def test_crops_and_flip():
    img = np.arange(36, dtype=np.uint8).reshape(6, 6)
    np.testing.assert_array_equal(T.CenterCrop(2)(img), img[2:4, 2:4])
    newch.manual_seed(0)
    crop = T.RandomCrop(4, padding=1)(img)
    assert crop.shape == (4, 4)
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=1.0)(img), img[:, ::-1])
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=0.0)(img), img)
    with pytest.raises(ValueError, match="RandomCrop"):
        T.RandomCrop(10)(img)


def _read_png(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks[kind] = body
        pos += 12 + n
    w, h, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    ch = 3 if color == 2 else 1
    raw = zlib.decompress(chunks[b"IDAT"])
    rows = [raw[i * (w * ch + 1) + 1:(i + 1) * (w * ch + 1)] for i in range(h)]
    return np.frombuffer(b"".join(rows), np.uint8).reshape(h, w, ch)


def test_png_round_trips_pixels():
    px = np.random.default_rng(2).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    np.testing.assert_array_equal(_read_png(png_bytes(px)), px)


def test_make_grid_layout_and_save_image():
    imgs = newch.stack([newch.full((1, 2, 3), float(i) / 4) for i in range(4)])
    grid = make_grid(imgs, nrow=2, padding=1, pad_value=1.0)
    assert tuple(grid.shape) == (3, 7, 9)
    g = grid.numpy()
    assert g[0, 1, 1] == 0.0 and g[0, 1, 5] == 0.25 and g[0, 4, 1] == 0.5 and g[0, 0, 0] == 1.0
    buf = io.BytesIO()
    save_image(imgs, buf, nrow=2, padding=1)
    px = _read_png(buf.getvalue())
    assert px.shape == (7, 9, 3) and px[4, 5, 0] == round(0.75 * 255)
