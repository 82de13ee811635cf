"""newch.save -> newch.load: values, dtypes, layouts, sharing, containers, files and memory."""
import collections
import io
import os
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import newch
from newch.serialization import zipwriter


def roundtrip(obj, **load_args):
    buf = io.BytesIO()
    newch.save(obj, buf)
    buf.seek(0)
    return newch.load(buf, **load_args)


def test_state_dict_values_and_dtypes_survive():
    sd = collections.OrderedDict(
        f32=newch.arange(6, dtype=newch.float32).reshape(2, 3) / 3,
        f64=newch.tensor([1e-300, -2.5, np.pi], dtype=newch.float64),
        i64=newch.tensor([-(2 ** 62), 0, 2 ** 62]),
        i32=newch.tensor([-7, 7], dtype=newch.int32),
        u8=newch.tensor([0, 255], dtype=newch.uint8),
        b=newch.tensor([True, False]),
        scalar=newch.tensor(3.25),
        empty=newch.zeros(0, 4),
    )
    out = roundtrip(sd)
    assert isinstance(out, collections.OrderedDict) and list(out) == list(sd)
    for k, v in sd.items():
        assert out[k].dtype is v.dtype and tuple(out[k].shape) == tuple(v.shape), k
        np.testing.assert_array_equal(out[k].numpy(), v.numpy())


def test_containers_and_primitives_survive():
    obj = {"epoch": 3, "lr": 0.5, "name": "x", "none": None, "flag": True, "big": 2 ** 80,
           "tup": (1, (2, 3)), "lst": [1.5, "a"], "set": {1, 2}, "fset": frozenset({3}),
           "bytes": b"\x00\x01\xff", "cplx": 1 + 2j, "size": newch.Size([2, 3]),
           "dtype": newch.int32, "nested": {"deep": [newch.ones(2)]}}
    out = roundtrip(obj)
    for k in obj:
        if k not in ("nested",):
            assert out[k] == obj[k] and type(out[k]) is type(obj[k]), k
    np.testing.assert_array_equal(out["nested"]["deep"][0].numpy(), [1.0, 1.0])


def test_views_share_one_storage_with_offset_and_strides():
    with newch.persistent():
        base = newch.arange(12, dtype=newch.float32).reshape(3, 4)
    sd = {"base": base, "col": base[:, 1], "t": base.t(), "row": base[2]}
    out = roundtrip(sd)
    np.testing.assert_array_equal(out["col"].numpy(), [1.0, 5.0, 9.0])
    np.testing.assert_array_equal(out["t"].numpy(), np.arange(12.0).reshape(3, 4).T)
    np.testing.assert_array_equal(out["row"].numpy(), [8.0, 9.0, 10.0, 11.0])
    out["base"].numpy()[0, 1] = 100.0     # the loaded tensors share memory again
    assert out["col"][0].item() == 100.0 and out["t"][1, 0].item() == 100.0
    with zipfile.ZipFile(_saved(sd)) as z:      # one storage record for the four tensors
        assert [n for n in z.namelist() if "/data/" in n] == ["archive/data/0"]


def test_the_same_tensor_twice_stays_one_object():
    model = newch.nn.Sequential(newch.nn.Linear(3, 3), newch.nn.Linear(3, 3))
    model[1].weight = model[0].weight                     # tied weights
    out = roundtrip({"model": model, "again": model[0].weight}, weights_only=False)
    assert out["model"][1].weight is out["model"][0].weight is out["again"]


def test_only_the_reached_span_of_a_storage_is_written():
    with newch.persistent():
        big = newch.arange(10000, dtype=newch.float32)
    sd = {"a": big[100:104], "b": big[102:110:2]}
    buf = _saved(sd)
    with zipfile.ZipFile(buf) as z:
        assert z.read("archive/data/0") == np.arange(100, 109, dtype="<f4").tobytes()
    buf.seek(0)
    out = newch.load(buf)
    np.testing.assert_array_equal(out["b"].numpy(), [102, 104, 106, 108])
    out["a"].numpy()[2] = -1.0      # still one shared storage
    assert out["b"][0].item() == -1.0


def test_negative_stride_and_foreign_memory_are_copied():
    arr = np.arange(5, dtype=np.float64)
    sd = {"flipped": newch.from_numpy(arr[::-1].copy()), "adopted": newch.from_numpy(arr)}
    out = roundtrip(sd)
    np.testing.assert_array_equal(out["flipped"].numpy(), arr[::-1])
    np.testing.assert_array_equal(out["adopted"].numpy(), arr)


def test_parameter_and_requires_grad():
    p = newch.nn.Parameter(newch.ones(2, 2))
    with newch.persistent():
        leaf = newch.zeros(3).requires_grad_()
    out = roundtrip({"p": p, "leaf": leaf, "frozen": newch.nn.Parameter(newch.ones(1), False)})
    assert isinstance(out["p"], newch.nn.Parameter) and out["p"].requires_grad
    assert out["leaf"].requires_grad and not isinstance(out["leaf"], newch.nn.Parameter)
    assert isinstance(out["frozen"], newch.nn.Parameter) and not out["frozen"].requires_grad


def test_loaded_tensors_are_persistent_and_the_arena_does_not_grow():
    model = newch.nn.Sequential(newch.nn.Linear(64, 32), newch.nn.ReLU(), newch.nn.Linear(32, 8))
    buf = _saved(model.state_dict())
    newch.step_end()
    ctx = newch.default_context()
    ctx.reset_peak()
    before = newch.mem_stats()
    out = newch.load(buf)
    after = newch.mem_stats()
    assert after["arena_peak_bytes"] == before["arena_bytes_in_use"]
    assert after["arena_bytes_reserved"] == before["arena_bytes_reserved"]
    assert after["persistent_bytes"] - before["persistent_bytes"] >= (64 * 32 + 32 * 8) * 4
    newch.step_end()
    assert all(t.is_persistent and t.is_alive for t in out.values())
    assert out["0.weight"].sum().item() == pytest.approx(model[0].weight.sum().item())


def test_path_and_file_objects(tmp_path):
    sd = {"w": newch.arange(3, dtype=newch.float32)}
    path = tmp_path / "m.pt"
    newch.save(sd, path)                          # pathlib.Path
    np.testing.assert_array_equal(newch.load(str(path))["w"].numpy(), [0, 1, 2])
    with open(path, "wb") as fh:                  # an open binary file
        newch.save(sd, fh)
    with open(path, "rb") as fh:
        np.testing.assert_array_equal(newch.load(fh)["w"].numpy(), [0, 1, 2])


class _Pipe(io.RawIOBase):
    """A write-only, non-seekable stream (like a socket or pipe)."""

    def __init__(self):
        self.chunks = []

    def writable(self):
        return True

    def write(self, b):
        self.chunks.append(bytes(b))
        return len(b)


class _ReadOnly(io.RawIOBase):
    def __init__(self, data):
        self.inner = io.BytesIO(data)

    def readable(self):
        return True

    def read(self, n=-1):
        return self.inner.read(n)


def test_non_seekable_streams():
    pipe = _Pipe()
    newch.save({"w": newch.ones(3)}, pipe)
    out = newch.load(_ReadOnly(b"".join(pipe.chunks)))
    np.testing.assert_array_equal(out["w"].numpy(), [1, 1, 1])


def test_save_to_a_path_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    newch.save({"v": newch.ones(2)}, path)
    good = path.read_bytes()
    calls = []

    def failing_add(self, name, data):
        calls.append(name)
        if "/data/" in name:
            raise OSError("disk full (simulated)")
        return real_add(self, name, data)

    real_add = zipwriter.ZipWriter.add
    monkeypatch.setattr(zipwriter.ZipWriter, "add", failing_add)
    with pytest.raises(OSError, match="disk full"):
        newch.save({"v": newch.zeros(1000)}, path)
    assert calls and path.read_bytes() == good            # the previous file is intact
    assert os.listdir(tmp_path) == ["ckpt.pt"]             # no temporary left behind
    monkeypatch.undo()
    np.testing.assert_array_equal(newch.load(path)["v"].numpy(), [1, 1])


def test_memory_freed_during_a_save_is_detected(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    newch.save({"v": newch.ones(2)}, path)
    good = path.read_bytes()
    with newch.persistent():
        victim = newch.arange(8, dtype=newch.float32)
    real_add = zipwriter.ZipWriter.add

    def add_then_free(self, name, data):    # as if another thread released it mid-save
        real_add(self, name, data)
        if name.endswith("data.pkl"):
            newch.release(victim)

    monkeypatch.setattr(zipwriter.ZipWriter, "add", add_then_free)
    with pytest.raises(RuntimeError, match="freed while saving"):
        newch.save({"v": victim}, path)
    assert path.read_bytes() == good


def test_archive_layout_is_torchs():
    with zipfile.ZipFile(_saved({"a": newch.ones(3), "b": newch.zeros(2, dtype=newch.int64)})) as z:
        assert z.namelist() == ["archive/data.pkl", "archive/.format_version",
                                "archive/.storage_alignment", "archive/byteorder",
                                "archive/data/0", "archive/data/1", "archive/version"]
        assert z.read("archive/version") == b"3\n"
        assert z.read("archive/byteorder") == b"little"
        assert z.read("archive/.storage_alignment") == b"64"
        for info in z.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
        raw = z.fp
        for info in z.infolist():      # every record's data starts 64-byte aligned
            raw.seek(info.header_offset + 26)
            n, m = np.frombuffer(raw.read(4), "<u2")
            assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename
        assert z.testzip() is None     # CRCs are right
        assert z.read("archive/data/1") == np.zeros(2, "<i8").tobytes()


def test_recompressed_archive_still_loads():
    """A checkpoint someone re-zipped with deflate goes through zipfile's own reader."""
    sd = {"w": newch.arange(1000, dtype=newch.float64), "b": newch.tensor([True, False])}
    with zipfile.ZipFile(_saved(sd)) as z:
        records = [(n, z.read(n)) for n in z.namelist()]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in records:
            z.writestr(n, data)
    buf.seek(0)
    out = newch.load(buf)
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(1000.0))
    assert out["b"].tolist() == [True, False]


def test_big_endian_archive_is_byteswapped_on_load():
    """A file written on a big-endian machine says so in its byteorder record."""
    sd = {"f": newch.tensor([1.5, -2.0]), "i": newch.tensor([1, 2 ** 40]),
          "d": newch.tensor([0.1], dtype=newch.float64), "b": newch.tensor([True])}
    dtypes = {"0": "<f4", "1": "<i8", "2": "<f8", "3": "?"}
    with zipfile.ZipFile(_saved(sd)) as z:
        records = [(n, z.read(n)) for n in z.namelist()]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n, data in records:
            key = n.rsplit("/", 1)[1]
            if n.endswith("byteorder"):
                data = b"big"
            elif "/data/" in n:
                data = np.frombuffer(data, dtypes[key]).byteswap().tobytes()
            z.writestr(n, data)
    buf.seek(0)
    out = newch.load(buf)
    for k, v in sd.items():
        np.testing.assert_array_equal(out[k].numpy(), v.numpy(), err_msg=k)


def test_zip64_fields_are_read_back(monkeypatch):
    monkeypatch.setattr(zipwriter, "ZIP64_LIMIT", 8)    # every record past 8 bytes is "large"
    sd = {"w": newch.arange(40, dtype=newch.float64), "i": newch.tensor([1, 2, 3])}
    buf = _saved(sd)
    with zipfile.ZipFile(buf) as z:
        assert z.testzip() is None
    buf.seek(0)
    out = newch.load(buf)
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(40.0))


def test_bad_arguments():
    with pytest.raises(TypeError, match="path or a binary file"):
        newch.save({}, 42)
    with pytest.raises(TypeError, match="path or a binary file"):
        newch.load(3.5)
    with pytest.raises(NotImplementedError, match="legacy"):
        newch.save({}, io.BytesIO(), _use_new_zipfile_serialization=False)
    with pytest.raises(TypeError, match="unexpected arguments"):
        newch.load(_saved({}), bogus=1)


def test_stale_temporary_is_refused_naming_the_step():
    x = newch.ones(2)
    newch.step_end()
    with pytest.raises(newch.NcError, match="newch.save"):
        newch.save({"x": x}, io.BytesIO())


def test_map_location_is_accepted():
    out = newch.load(_saved({"w": newch.ones(1)}), map_location="cpu", mmap=False)
    assert out["w"].item() == 1.0
    out = newch.load(_saved({"w": newch.ones(1)}), map_location=lambda s, loc: s)
    assert out["w"].item() == 1.0


def test_mmap_maps_the_file_copy_on_write(tmp_path):
    with newch.persistent():
        w = newch.arange(12, dtype=newch.float64).reshape(3, 4)
        i = newch.tensor([1, 2, 3], dtype=newch.int32)
    sd = {"w": w, "col": w[:, 1], "i": i}
    path = tmp_path / "m.pt"
    newch.save(sd, path)
    newch.step_end()
    arena = newch.mem_stats()["arena_bytes_reserved"]
    out = newch.load(path, mmap=True)
    assert newch.mem_stats()["arena_bytes_reserved"] == arena
    assert isinstance(out["w"]._s.buf, np.memmap)           # the file's pages, not a copy
    for k, v in sd.items():
        np.testing.assert_array_equal(out[k].numpy(), v.numpy())
        assert out[k].is_persistent
    out["w"].numpy()[0, 1] = -7.0                           # private to this process
    assert out["col"][0].item() == -7.0
    assert newch.load(path)["w"][0, 1].item() == 1.0        # the file is unchanged
    with pytest.raises(ValueError, match="mmap=True needs f to be a path"):
        newch.load(_saved(sd), mmap=True)


def _saved(obj):
    buf = io.BytesIO()
    newch.save(obj, buf)
    buf.seek(0)
    return buf


@st.composite
def views(draw):
    """A persistent tensor and a few strided views of it (slices with steps, transposes)."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    dtype = draw(st.sampled_from(["float32", "float64", "int64", "int32", "uint8", "bool"]))
    base = np.arange(int(np.prod(shape))).reshape(shape) % 7
    out = []
    for _ in range(draw(st.integers(1, 3))):
        index = tuple(slice(draw(st.integers(0, n - 1)), None, draw(st.integers(1, 3)))
                      for n in shape)
        out.append((index, draw(st.booleans())))
    return base.astype(dtype), out


@settings(max_examples=40, deadline=None)
@given(views())
def test_random_views_round_trip_with_shared_memory(case):
    base, cuts = case
    with newch.persistent():
        t = newch.tensor(base)
    sd = {"base": t}
    for i, (index, flip) in enumerate(cuts):
        v = t[index]
        sd[f"v{i}"] = v.t() if flip and v.ndim == 2 else v
    out = roundtrip(sd)
    for k, v in sd.items():
        np.testing.assert_array_equal(out[k].numpy(), v.numpy(), err_msg=k)
    with zipfile.ZipFile(_saved(sd)) as z:
        assert len([n for n in z.namelist() if "/data/" in n]) == 1
