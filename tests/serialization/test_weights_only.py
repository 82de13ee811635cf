"""weights_only=True refuses all but data globals and runs nothing; weights_only=False: anything."""
import copyreg
import io
import pickle
import struct
import zipfile

import numpy as np
import pytest

import newch


def archive(pkl, records=()):
    """A checkpoint zip holding ``pkl`` as data.pkl (plus extra records)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        for name, data in records:
            z.writestr(f"archive/{name}", data)
        z.writestr("archive/version", b"3\n")
    buf.seek(0)
    return buf


def global_call(module, name, *args):
    """Protocol-2 pickle bytes of ``module.name(*args)`` with string args."""
    out = b"\x80\x02c" + f"{module}\n{name}\n".encode()
    out += b"(" + b"".join(pickle.dumps(a, 2)[2:-1] for a in args) + b"tR."
    return out


class _Touch:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return open, (self.path, "w")


@pytest.mark.parametrize("module,name", [
    ("os", "system"), ("posix", "system"), ("nt", "system"), ("subprocess", "Popen"),
    ("builtins", "eval"), ("builtins", "exec"), ("builtins", "open"), ("__builtin__", "open"),
    ("builtins", "getattr"), ("builtins", "__import__"), ("importlib", "import_module"),
    ("torch", "load"), ("torch._utils", "_rebuild_qtensor"), ("numpy", "load"),
    ("collections", "defaultdict"), ("shutil", "rmtree"),
])
def test_hostile_global_is_refused_and_nothing_runs(tmp_path, module, name):
    marker = tmp_path / "pwned"
    pkl = global_call(module, name, f"touch {marker}" if name == "system" else str(marker))
    shown = "builtins" if module == "__builtin__" else module
    with pytest.raises(pickle.UnpicklingError, match=f"refuses the global {shown}.{name}") as e:
        newch.load(archive(pkl))
    assert "weights_only=False" in str(e.value)
    assert not marker.exists()


def test_reduce_payload_inside_a_real_state_dict_is_refused(tmp_path):
    marker = tmp_path / "written"
    buf = io.BytesIO()
    newch.save({"w": newch.ones(2), "x": "placeholder"}, buf)
    buf.seek(0)
    with zipfile.ZipFile(buf) as z:
        records = [(n.split("/", 1)[1], z.read(n)) for n in z.namelist()
                   if not n.endswith(("data.pkl", "version"))]
        pkl = z.read("archive/data.pkl")
    evil = pickle.dumps(_Touch(str(marker)), 2)[2:-1]        # GLOBAL io open + REDUCE
    pkl = pkl.replace(b"X\x0b\x00\x00\x00placeholder", evil)   # the last value: "x" -> open(...)
    assert b"cio\nopen" in pkl
    with pytest.raises(pickle.UnpicklingError, match=r"global io\.open"):
        newch.load(archive(pkl, records))
    assert not marker.exists()


def test_stack_global_and_extension_codes_are_refused(tmp_path):
    marker = tmp_path / "pwned"
    proto4 = pickle.dumps(_Touch(str(marker)), 4)             # STACK_GLOBAL
    with pytest.raises(pickle.UnpicklingError, match=r"global io\.open"):
        newch.load(archive(proto4))
    copyreg.add_extension("io", "open", 0x7FFF00)
    try:
        ext = pickle.dumps(_Touch(str(marker)), 2)            # EXT4 code instead of a name
        # the name is gone (the temporary path itself may contain "open", as xdist's "popen-gw0")
        assert b"io\nopen" not in ext and b"\x8c\x04open" not in ext and b"\x84\x00\xff\x7f\x00" in ext
        with pytest.raises(pickle.UnpicklingError, match=r"global io\.open"):
            newch.load(archive(ext))
    finally:
        copyreg.remove_extension("io", "open", 0x7FFF00)
    assert not marker.exists()


def test_weights_only_false_does_run_what_the_file_names(tmp_path):
    marker = tmp_path / "created"
    out = newch.load(archive(pickle.dumps(_Touch(str(marker)), 2)), weights_only=False)
    out.close()
    assert marker.exists()     # the reason weights_only=True is the default


def test_codecs_encode_only_rebuilds_bytes():
    assert newch.load(archive(pickle.dumps(b"\x00ab", 2))) == b"\x00ab"
    with pytest.raises(pickle.UnpicklingError, match="_codecs.encode"):
        newch.load(archive(global_call("_codecs", "encode", "x", "rot13")))


def tensor_pickle(offset, size, stride, numel=4, storage="FloatStorage", location="cpu"):
    """A pickle of one tensor built by torch._utils._rebuild_tensor_v2 on storage '0'."""
    def tup(xs):
        return b"(" + b"".join(pickle.dumps(x, 2)[2:-1] for x in xs) + b"t"
    pid = (b"(" + pickle.dumps("storage", 2)[2:-1] + b"ctorch\n" + storage.encode() + b"\n"
           + pickle.dumps("0", 2)[2:-1] + pickle.dumps(location, 2)[2:-1]
           + pickle.dumps(numel, 2)[2:-1] + b"tQ")
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" + pid
            + pickle.dumps(offset, 2)[2:-1] + tup(size) + tup(stride)
            + b"\x89ccollections\nOrderedDict\n)RtR.")


def test_tensor_pickle_helper_builds_a_real_tensor():
    data = ("data/0", np.arange(4, dtype="<f4").tobytes())
    t = newch.load(archive(tensor_pickle(1, (2,), (2,)), [data]))
    np.testing.assert_array_equal(t.numpy(), [1.0, 3.0])


def test_a_gpu_saved_tensor_loads_on_the_cpu_without_map_location():
    data = ("data/0", np.arange(4, dtype="<f4").tobytes())
    t = newch.load(archive(tensor_pickle(0, (4,), (1,), location="cuda:0"), [data]))
    assert t.device == "cpu" and t.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("offset,size,stride", [
    (4, (1,), (1,)), (0, (5,), (1,)), (0, (2, 2), (1, 3)), (2 ** 40, (1,), (1,)),
    (-1, (1,), (1,)), (0, (2,), (-1,)), (0, (-2,), (1,)), (0, (2,), (1, 1)),
])
def test_out_of_bounds_tensor_layout_is_an_error_not_a_read(offset, size, stride):
    data = ("data/0", np.arange(4, dtype="<f4").tobytes())
    with pytest.raises(RuntimeError, match="storage 0"):
        newch.load(archive(tensor_pickle(offset, size, stride), [data]))


def test_storage_record_of_the_wrong_size_names_the_key():
    pkl = b"\x80\x02}X\x06\x00\x00\x00weight" + tensor_pickle(0, (4,), (1,))[2:-1] + b"s."
    short = ("data/0", np.arange(3, dtype="<f4").tobytes())
    with pytest.raises(RuntimeError, match=r"'weight'.*holds 12 bytes"):
        newch.load(archive(pkl, [short]))
    with pytest.raises(RuntimeError, match=r"storage 0 \(the data of 'weight'\).*"
                                           r"archive/data/0 is missing"):
        newch.load(archive(pkl))


def test_huge_declared_storage_is_refused_before_allocating():
    data = ("data/0", np.arange(4, dtype="<f4").tobytes())
    before = newch.mem_stats()["persistent_bytes"]
    with pytest.raises(RuntimeError, match=r"needs 4503599627370496 bytes.*holds 16 bytes"):
        newch.load(archive(tensor_pickle(0, (4,), (1,), numel=2 ** 50), [data]))
    assert newch.mem_stats()["persistent_bytes"] == before


def test_forged_zip_sizes_are_refused_before_allocating():
    """A central directory claiming a huge record must not make newch allocate it."""
    pkl = b"\x80\x02}X\x01\x00\x00\x00w" + tensor_pickle(0, (1,), (1,), numel=2 ** 29)[2:-1] + b"s."
    buf = archive(pkl, [("data/0", b"\0" * 16)])
    data = bytearray(buf.getvalue())
    entry = data.find(b"PK\x01\x02", data.find(b"archive/data/0") + 1)  # its central entry
    while data[entry + 46:entry + 46 + 14] != b"archive/data/0":
        entry = data.find(b"PK\x01\x02", entry + 1)
    data[entry + 20:entry + 28] = struct.pack("<II", 2 ** 31, 2 ** 31)     # = 2**29 floats
    before = newch.mem_stats()["persistent_bytes"]
    with pytest.raises(RuntimeError, match=r"'w'.*claims 2147483648 bytes, more than the file"):
        newch.load(io.BytesIO(bytes(data)))
    assert newch.mem_stats()["persistent_bytes"] == before


def test_unknown_persistent_id_is_refused():
    pkl = b"\x80\x02(X\x04\x00\x00\x00evilK\x01tQ."
    with pytest.raises(pickle.UnpicklingError, match="persistent id"):
        newch.load(archive(pkl))


def test_plain_newch_module_needs_weights_only_false():
    model = newch.nn.Sequential(newch.nn.Linear(3, 2), newch.nn.ReLU())
    buf = io.BytesIO()
    newch.save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        newch.load(buf)
    buf.seek(0)
    back = newch.load(buf, weights_only=False)
    assert isinstance(back, newch.nn.Sequential) and isinstance(back[0], newch.nn.Linear)
    x = newch.randn(4, 3)
    np.testing.assert_allclose(back(x).detach().numpy(), model(x).detach().numpy())
    assert back[0].weight.is_persistent and back[0].weight.requires_grad
    assert set(back[0].__dict__) == set(model[0].__dict__)     # torch's hook tables are gone


class Net(newch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = newch.nn.Linear(2, 2)
        self.register_buffer("steps", newch.zeros(1, dtype=newch.int64))
        self.note = {"created": "test"}

    def forward(self, x):
        return self.fc(x) * 2


def test_custom_module_round_trips_with_weights_only_false(tmp_path):
    net = Net()
    net.steps += 3
    newch.save(net, tmp_path / "net.pt")
    back = newch.load(tmp_path / "net.pt", weights_only=False)
    assert type(back) is Net and back.note == {"created": "test"}
    assert back.steps.item() == 3
    x = newch.randn(3, 2)
    np.testing.assert_allclose(back(x).detach().numpy(), net(x).detach().numpy())
    back.load_state_dict(net.state_dict())


def test_load_state_dict_names_the_mismatched_key():
    buf = io.BytesIO()
    newch.save(newch.nn.Linear(3, 2).state_dict(), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match=r"size mismatch for weight.*\[2, 3\].*\[2, 4\]"):
        newch.nn.Linear(4, 2).load_state_dict(newch.load(buf))


def test_garbage_pickles_are_corrupt_file_errors():
    for pkl in (b"\x80\x02", b"garbage", b"\x80\x02ccollections\nOrderedDict\nK\x01\x85R.",
                b"\x80\x02K\x01K\x02s."):
        with pytest.raises(RuntimeError, match="data.pkl of the file is corrupt"):
            newch.load(archive(pkl))


def test_a_missing_class_with_weights_only_false_is_pythons_error():
    pkl = b"\x80\x02c" + __name__.encode() + b"\nNoSuchClass\n)\x81."
    with pytest.raises(AttributeError, match="NoSuchClass"):
        newch.load(archive(pkl), weights_only=False)


class Config:
    """A user class a checkpoint may carry (pickled by module and name)."""

    def __init__(self, depth):
        self.depth = depth


def _ckpt(obj):
    buf = io.BytesIO()
    newch.save(obj, buf)
    buf.seek(0)
    return buf


def test_safe_globals_allow_a_user_class_only_when_asked():
    from newch import serialization as S
    data = _ckpt({"w": newch.ones(1), "cfg": Config(4)}).getvalue()
    assert S.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == [f"{__name__}.Config"]
    with pytest.raises(pickle.UnpicklingError, match=rf"{__name__}\.Config.*add_safe_globals"):
        newch.load(io.BytesIO(data))
    with S.safe_globals([Config]):
        assert S.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == []
        assert newch.load(io.BytesIO(data))["cfg"].depth == 4
    assert Config not in S.get_safe_globals()                # the block's allowance ended
    with pytest.raises(pickle.UnpicklingError):
        newch.load(io.BytesIO(data))
    S.add_safe_globals([(Config, f"{__name__}.Config")])
    try:
        assert S.get_safe_globals() == [Config]
        assert newch.load(io.BytesIO(data))["cfg"].depth == 4
    finally:
        S.clear_safe_globals()
    assert S.get_safe_globals() == []


def test_unsafe_globals_of_torch_files_are_listed_without_running_them():
    from pathlib import Path
    from newch import serialization as S
    fix = Path(__file__).parent / "fixtures"
    assert S.get_unsafe_globals_in_checkpoint(fix / "torch_state.pt") == []
    assert S.get_unsafe_globals_in_checkpoint(fix / "torch_module.pt") == [
        "torch.nn.modules.container.Sequential", "torch.nn.modules.linear.Linear",
        "torch.nn.modules.activation.ReLU"]
    proto4 = pickle.dumps({"a": [collections_ordered()], "b": [collections_ordered()]}, 4)
    assert S.get_unsafe_globals_in_checkpoint(archive(proto4)) == []


def collections_ordered():
    import collections
    return collections.OrderedDict(x=1)
