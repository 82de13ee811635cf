"""python -m newch.run: the import hook, argv / __file__ / exit code, NotProvided errors, the report."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(tmp_path, code, *args, report=False, module=False):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    cmd = [sys.executable, "-m", "newch.run"] + (["--report"] if report else [])
    cmd += (["-m", "script"] if module else [str(script)]) + list(args)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + str(tmp_path),
               NEWCH_BACKEND=os.environ.get("NEWCH_BACKEND", "ref"))
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def test_torch_is_newch_and_argv_file_exit_code_are_the_scripts(tmp_path):
    res = run(tmp_path, """
        import sys, torch, torch.nn as nn, torch.nn.functional as F
        import newch
        print(torch.Tensor is newch.Tensor, torch.nn.Linear is newch.nn.Linear, F.relu is newch.nn.functional.relu)
        print(__name__, sys.argv[1:], __file__.endswith("script.py"))
        print(torch.__version__.startswith("2.13.0+newch"), newch.__version__ != torch.__version__)
        sys.exit(7)
    """, "--flag", "x")
    assert res.returncode == 7, res.stderr
    assert res.stdout.splitlines() == ["True True True", "__main__ ['--flag', 'x'] True",
                                       "True True"]


def test_module_mode(tmp_path):
    res = run(tmp_path, """
        import sys, torch
        print(__name__, sys.argv[1:], torch.zeros(2).tolist())
    """, "a", module=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "__main__ ['a'] [0.0, 0.0]"


def test_exceptions_propagate_with_exit_code_1(tmp_path):
    res = run(tmp_path, "raise ValueError('boom')\n")
    assert res.returncode == 1 and "ValueError: boom" in res.stderr


def test_missing_names_are_attribute_errors_that_say_so(tmp_path):
    res = run(tmp_path, """
        import torch
        print(hasattr(torch, "no_such_op"), hasattr(torch.nn, "NoSuchLayer"))
        try:
            torch.no_such_op(1)
        except AttributeError as e:
            print(type(e).__name__, "|", e)
        try:
            import torch.no_such_module
        except ImportError as e:
            print("ImportError |", e)
    """)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "False False"
    assert lines[1].startswith("NotProvided | torch.no_such_op: newch does not provide")
    assert "docs/conformance.md" in lines[1]
    assert lines[2].startswith("ImportError | torch.no_such_module: newch does not provide")


def test_report_lists_what_was_touched(tmp_path):
    res = run(tmp_path, """
        import torch
        x = torch.ones(2)
        hasattr(torch, "fancy_new_op")
    """, report=True)
    assert res.returncode == 0, res.stderr
    assert "missing  torch.fancy_new_op" in res.stderr and "ok       torch.ones" in res.stderr


def test_device_surface_as_scripts_use_it(tmp_path):
    res = run(tmp_path, """
        import torch, torch.nn as nn
        import torch.backends.cudnn as cudnn
        from torch.nn.parallel import DataParallel
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        cudnn.benchmark = True
        torch.cuda.manual_seed_all(1)
        m = DataParallel(nn.Linear(2, 1)).to(device)
        x = torch.randn(3, 2, device=device).to(device)
        print(device, device.type, x.device == device, x.is_cuda, m(x).shape[0],
              torch.backends.mps.is_available(), torch.accelerator.is_available(),
              torch.cuda.device_count())
        try:
            x.cuda()
        except AssertionError as e:
            print("cuda:", type(e).__name__)
        torch.set_num_threads(1)
        print(torch.get_num_threads(), torch.compile(m) is m)
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["cpu cpu True False 3 False False 0",
                                       "cuda: DeviceUnavailable", "1 True"]


def test_torchvision_resolves_to_newch_vision(tmp_path):
    res = run(tmp_path, """
        import torchvision, newch.vision
        from torchvision import datasets, transforms
        from torchvision.utils import make_grid
        print(torchvision.datasets.MNIST is newch.vision.datasets.MNIST, callable(make_grid))
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "True True"


def test_onnx_export_is_not_provided(tmp_path):
    res = run(tmp_path, """
        import torch, torch.onnx
        try:
            torch.onnx.export(None, None, "x.onnx")
        except NotImplementedError as e:
            print("refused:", "newch does not provide" in str(e))
    """)
    assert res.stdout.strip() == "refused: True", res.stderr


def test_usage_errors():
    res = subprocess.run([sys.executable, "-m", "newch.run"], capture_output=True, text=True,
                         cwd=ROOT)
    assert res.returncode != 0 and "usage" in res.stderr
    res = subprocess.run([sys.executable, "-m", "newch.run", "nope_missing.py"], capture_output=True,
                         text=True, cwd=ROOT)
    assert res.returncode != 0 and "can't open file" in res.stderr


def test_hook_in_process_is_reversible():
    from newch import torch_hook
    before = sys.modules.get("torch")
    torch_hook.install()
    try:
        import torch
        import newch
        assert torch.ones is newch.ones
    finally:
        torch_hook.uninstall()
    assert sys.modules.get("torch") is before       # a real torch imported earlier is back


def test_a_loop_without_step_end_stays_bounded_under_the_runner(tmp_path):
    res = run(tmp_path, """
        import torch, torch.nn as nn, torch.nn.functional as F
        import newch
        model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        reserved = []
        for step in range(300):
            x, y = torch.randn(32, 64), torch.randn(32, 1)
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            running = loss.item()
            if step % 50 == 49:
                reserved.append(newch.mem_stats()["arena_bytes_reserved"])
        print(len(set(reserved)), newch.mem_stats()["arena_bytes_in_use"] < 1 << 20)
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "1 True"
