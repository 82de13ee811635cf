"""newch.safetensors: the format by hand, files from the safetensors package, and bad files."""
import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest

import newch
import newch.safetensors as st

FIX = Path(__file__).parent / "fixtures"


def sample():
    return {"w": newch.arange(6, dtype=newch.float32).reshape(2, 3) / 4,
            "d": newch.tensor([1e-200, -3.0], dtype=newch.float64),
            "i": newch.tensor([-(2 ** 40), 7]), "j": newch.tensor([3], dtype=newch.int32),
            "u": newch.tensor([0, 255], dtype=newch.uint8), "b": newch.tensor([True, False]),
            "s": newch.tensor(1.5), "e": newch.zeros(0, 2)}


def check_same(out, ref):
    assert sorted(out) == sorted(ref)
    for k, v in ref.items():
        assert out[k].dtype is v.dtype and tuple(out[k].shape) == tuple(v.shape), k
        np.testing.assert_array_equal(out[k].numpy(), v.numpy(), err_msg=k)


def test_file_round_trip_and_layout(tmp_path):
    path = tmp_path / "m.safetensors"
    st.save_file(sample(), path, metadata={"epoch": "3"})
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    header = json.loads(raw[8:8 + n])
    assert header["__metadata__"] == {"epoch": "3"}
    assert header["w"]["dtype"] == "F32" and header["w"]["shape"] == [2, 3]
    b, e = header["w"]["data_offsets"]
    assert raw[8 + n + b:8 + n + e] == (np.arange(6, dtype="<f4") / 4).tobytes()
    assert header["b"]["dtype"] == "BOOL" and header["i"]["dtype"] == "I64"
    assert len(raw) == 8 + n + max(v["data_offsets"][1] for k, v in header.items()
                                   if k != "__metadata__")
    out = st.load_file(path)
    check_same(out, sample())
    assert st.metadata(path) == {"epoch": "3"}
    newch.step_end()
    assert all(t.is_persistent and t.is_alive for t in out.values())


def test_bytes_round_trip_and_views_are_written_as_values():
    with newch.persistent():
        base = newch.arange(12, dtype=newch.float32).reshape(3, 4)
    data = st.save({"t": base.t(), "col": base[:, 1]})
    out = st.load(data)
    np.testing.assert_array_equal(out["t"].numpy(), np.arange(12.0).reshape(3, 4).T)
    np.testing.assert_array_equal(out["col"].numpy(), [1.0, 5.0, 9.0])


def test_load_does_not_grow_the_arena():
    data = st.save({"w": newch.ones(256, 64)})
    newch.step_end()
    newch.default_context().reset_peak()
    before = newch.mem_stats()
    st.load(data)
    after = newch.mem_stats()
    assert after["arena_peak_bytes"] == before["arena_bytes_in_use"]
    assert after["arena_bytes_reserved"] == before["arena_bytes_reserved"]


def test_file_written_by_the_safetensors_package():
    with pytest.warns(UserWarning, match=r"2 tensor\(s\).*'bf16'.*'half'|2 tensor\(s\).*'half'"):
        out = st.load_file(FIX / "st_torch.safetensors")
    np.testing.assert_array_equal(out["f32"].numpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(out["f64"].numpy(), np.arange(3) / 8)
    assert out["i64"].tolist() == [-2, -1, 0, 1] and out["i32"].dtype is newch.int32
    assert out["u8"].tolist() == [0, 1, 2] and out["flags"].tolist() == [False, True]
    assert out["half"].dtype is newch.float32 and out["half"].tolist() == [0.0, 0.25, 0.5]
    assert out["bf16"].tolist() == [-0.5, 0.5] and out["scalar"].shape == ()
    assert st.metadata(FIX / "st_torch.safetensors") == {"format": "pt", "step": "12"}


def test_int8_file_is_refused_naming_key():
    with pytest.raises(TypeError, match=r"'small' is int8"):
        st.load_file(FIX / "st_int8.safetensors")


def test_interop_with_the_safetensors_package(tmp_path):
    storch = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "ours.safetensors"
    st.save_file(sample(), path, metadata={"k": "v"})
    theirs = storch.load_file(str(path))
    for k, v in sample().items():
        np.testing.assert_array_equal(theirs[k], v.numpy(), err_msg=k)
    arrays = {"a": np.arange(5, dtype=np.int32), "m": np.ones((2, 2), np.float64)}
    storch.save_file(arrays, str(tmp_path / "theirs.safetensors"))
    back = st.load_file(tmp_path / "theirs.safetensors")
    np.testing.assert_array_equal(back["a"].numpy(), arrays["a"])
    assert back["m"].dtype is newch.float64


def _file(header, data=b""):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


@pytest.mark.parametrize("blob,message", [
    (b"", "too short"),
    (struct.pack("<Q", 1000) + b"{}", "claims 1000 bytes"),
    (struct.pack("<Q", 3) + b"{x}", "not valid JSON"),
    (_file([1, 2]), "not a JSON object"),
    (_file({"a": {"dtype": "F32", "shape": [2]}}), "malformed"),
    (_file({"a": {"dtype": "X9", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "unknown dtype"),
    (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4),
     "needs 8 bytes"),
    (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
     "starts at byte 4"),
    (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 9),
     "truncated or corrupt"),
    (_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "invalid shape"),
])
def test_corrupt_data_is_a_clear_error(blob, message):
    with pytest.raises(ValueError, match=message):
        st.load(blob)


def test_truncated_file_names_the_problem(tmp_path):
    path = tmp_path / "t.safetensors"
    st.save_file({"w": newch.ones(100)}, path)
    raw = path.read_bytes()
    path.write_bytes(raw[:-10])
    with pytest.raises(ValueError, match=r"'w'|truncated"):
        st.load_file(path)


def test_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match="dict of name"):
        st.save([newch.ones(1)])
    with pytest.raises(TypeError, match="not a Tensor"):
        st.save({"a": [1.0]})
    with pytest.raises(ValueError, match="reserved"):
        st.save({"__metadata__": newch.ones(1)})
    with pytest.raises(TypeError, match="metadata"):
        st.save({"a": newch.ones(1)}, metadata={"k": 1})
    with pytest.raises(ValueError, match="CPU"):
        st.load_file(tmp_path / "x", device="cuda")


def test_save_file_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "w.safetensors"
    st.save_file({"w": newch.ones(2)}, path)
    good = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("power cut (simulated)")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="power cut"):
        st.save_file({"w": newch.zeros(50)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == good and os.listdir(tmp_path) == ["w.safetensors"]


def test_interop_with_safetensors_torch(tmp_path):
    pytest.importorskip("safetensors")
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file
    st.save_file(sample(), tmp_path / "ours.safetensors")
    theirs = load_file(str(tmp_path / "ours.safetensors"))
    for k, v in sample().items():
        assert str(theirs[k].dtype) == f"torch.{v.dtype.name}", k
        np.testing.assert_array_equal(theirs[k].numpy(), v.numpy(), err_msg=k)
    save_file({"w": torch.arange(4.0).reshape(2, 2), "h": torch.ones(3, dtype=torch.bfloat16)},
              str(tmp_path / "theirs.safetensors"))
    with pytest.warns(UserWarning, match="'h'"):
        back = st.load_file(tmp_path / "theirs.safetensors")
    assert back["w"].tolist() == [[0.0, 1.0], [2.0, 3.0]] and back["h"].tolist() == [1.0] * 3
