"""Files written by PyTorch 2.13 (committed fixtures, see fixtures/make_fixtures.py) load in newch.

These run without torch. The values are formulas of arange, known here by hand.
"""
import io
import pickletools
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import newch

FIX = Path(__file__).parent / "fixtures"


def test_state_dict_written_by_torch():
    sd = newch.load(FIX / "torch_state.pt")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(sd["matrix"].numpy(), a)
    np.testing.assert_array_equal(sd["column"].numpy(), a[:, 1])
    np.testing.assert_array_equal(sd["transposed"].numpy(), a.T)
    np.testing.assert_array_equal(sd["f64"].numpy(), np.arange(5) / 4)
    assert sd["f64"].dtype is newch.float64
    np.testing.assert_array_equal(sd["i64"].numpy(), np.arange(-3, 3))
    assert sd["i32"].dtype is newch.int32 and sd["i32"].tolist() == [0, 7, 14, 21]
    assert sd["u8"].dtype is newch.uint8 and sd["u8"].tolist() == [250, 251, 252, 253, 254, 255]
    assert sd["flags"].tolist() == [True, False, True]
    assert sd["scalar"].shape == () and sd["scalar"].item() == 2.5
    assert tuple(sd["empty"].shape) == (0, 3)
    assert isinstance(sd["param"], newch.nn.Parameter) and sd["param"].requires_grad
    assert sd["param"].tolist() == [-1.0, 0.0, 1.0]
    meta = sd["meta"]
    assert meta["size"] == (3, 4) and isinstance(meta["size"], newch.Size)
    assert meta["dtype"] is newch.float64
    assert (meta["epoch"], meta["lr"], meta["name"], meta["tags"], meta["none"], meta["ids"],
            meta["blob"]) == (7, 0.125, "run-1", ("a", "b"), None, [1, 2, 3], b"\x00\xffbytes")
    sd["matrix"].numpy()[0, 1] = -5.0           # views share memory as they did in torch
    assert sd["column"][0].item() == -5.0 and sd["transposed"][1, 0].item() == -5.0
    newch.step_end()
    assert all(v.is_alive for v in sd.values() if isinstance(v, newch.Tensor))


def test_mmap_of_a_torch_file_gives_the_same_values():
    mapped = newch.load(FIX / "torch_state.pt", mmap=True)
    read = newch.load(FIX / "torch_state.pt")
    for k, v in read.items():
        if isinstance(v, newch.Tensor):
            np.testing.assert_array_equal(mapped[k].detach().numpy(), v.detach().numpy())
    with pytest.warns(UserWarning, match="'half'"):
        half = newch.load(FIX / "torch_half.pt", mmap=True)    # widened: copied, not mapped
    assert half["half"].tolist() == [0.0, 0.5, 1.0, 1.5]


def test_float16_and_bfloat16_load_as_float32_with_one_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sd = newch.load(FIX / "torch_half.pt")
    msgs = [str(w.message) for w in caught]
    assert len(msgs) == 1 and "'half'" in msgs[0] and "'bf16'" in msgs[0]
    assert "'f32'" not in msgs[0]
    assert sd["half"].dtype is newch.float32 and sd["half"].tolist() == [0.0, 0.5, 1.0, 1.5]
    assert sd["bf16"].dtype is newch.float32 and sd["bf16"].tolist() == [-0.5, 0.5, 1.5]


def test_int8_and_int16_are_refused_naming_key_and_dtype():
    with pytest.raises(TypeError, match=r"'small' is int8; 'short' is int16"):
        newch.load(FIX / "torch_int8.pt")


def test_whole_module_written_by_torch():
    with pytest.raises(Exception, match="torch.nn.modules.container.Sequential"):
        newch.load(FIX / "torch_module.pt")
    model = newch.load(FIX / "torch_module.pt", weights_only=False)
    assert isinstance(model, newch.nn.Sequential)
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear"]
    params = [(np.arange(p.numel(), dtype=np.float32).reshape(tuple(p.shape)) - i) / 4
              for i, p in enumerate(model.parameters())]
    for p, want in zip(model.parameters(), params):
        np.testing.assert_array_equal(p.detach().numpy(), want)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    h = np.maximum(x @ params[0].T + params[1], 0)
    want = h @ params[2].T + params[3]
    np.testing.assert_allclose(model(newch.tensor(x)).detach().numpy(), want, rtol=1e-6)
    model.eval()
    assert not model[0].training


def test_sgd_state_written_by_torch_resumes_identically():
    ck = newch.load(FIX / "torch_sgd.pt")
    with newch.persistent():
        p = newch.nn.Parameter(ck["param"].clone())
    group = ck["optim"]["param_groups"][0]
    opt = newch.optim.SGD([p], lr=1.0)
    opt.load_state_dict(ck["optim"])
    assert opt.param_groups[0]["lr"] == group["lr"] == 0.05
    assert opt.param_groups[0]["nesterov"] is True
    for want in ck["next"]:
        opt.zero_grad()
        (0.5 * (ck["coef"] * p * p).sum()).backward()
        opt.step()
        np.testing.assert_allclose(p.detach().numpy(), want.numpy(), rtol=1e-13, atol=1e-15)


def test_legacy_format_written_by_torch():
    sd = newch.load(FIX / "torch_legacy.pt")
    assert sd["w"].dtype is newch.float32 and sd["w"].tolist() == [0.0, 1.0, 2.0]
    assert sd["w"].is_persistent
    data = (FIX / "torch_legacy.pt").read_bytes()
    with pytest.raises(RuntimeError, match=r"storage \d+ \(the data of 'w'\).*truncated"):
        newch.load(io.BytesIO(data[:-2]))
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        newch.load(io.BytesIO(data[:40]))


def test_newch_file_has_torchs_layout_and_only_allowlisted_globals():
    """Without torch: our archive matches the torch-written fixture record for record."""
    with zipfile.ZipFile(FIX / "torch_state.pt") as z:
        prefix = z.namelist()[0].split("/")[0]
        theirs = {n.split("/", 1)[1] for n in z.namelist()} - {".data/serialization_id"}
        their_globals = _globals(z.read(f"{prefix}/data.pkl"))
    sd = newch.load(FIX / "torch_state.pt")
    buf = io.BytesIO()
    newch.save(sd, buf)
    with zipfile.ZipFile(buf) as z:
        ours = {n.split("/", 1)[1] for n in z.namelist()}
        our_globals = _globals(z.read("archive/data.pkl"))
        for name in (".format_version", ".storage_alignment", "byteorder", "version"):
            assert z.read(f"archive/{name}") == _fixture_record(name)
    assert ours == theirs
    assert our_globals == their_globals


def _fixture_record(name):
    with zipfile.ZipFile(FIX / "torch_state.pt") as z:
        return z.read(f"{z.namelist()[0].split('/')[0]}/{name}")


def _globals(pkl):
    return {arg for op, arg, _ in pickletools.genops(pkl) if op.name == "GLOBAL"}


def test_truncated_and_corrupt_fixtures_are_clear_errors():
    data = (FIX / "torch_state.pt").read_bytes()
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        newch.load(io.BytesIO(data[:len(data) // 2]))
    with pytest.raises(RuntimeError, match="is empty"):
        newch.load(io.BytesIO(b""))
    with pytest.raises(RuntimeError, match="not a PyTorch checkpoint"):
        newch.load(io.BytesIO(b"hello world, not a checkpoint"))
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo("torch_state/data/0")
    start = info.header_offset + 30 + len(info.filename) + _extra_len(data, info.header_offset)
    bad = bytearray(data)
    bad[start + 5] ^= 0xFF                            # one flipped bit pattern in matrix's bytes
    with pytest.raises(RuntimeError, match=r"data/0 \(the data of 'matrix', 'column', "
                                           r"'transposed'\).*CRC"):
        newch.load(io.BytesIO(bytes(bad)))


def _extra_len(data, offset):
    return int.from_bytes(data[offset + 28:offset + 30], "little")
