"""The MNIST Net trained 10 steps: bit-identical parameters on 1, 2 and 3 threads; ref close to JIT."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TRAIN = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as np
    import newch as torch
    import newch.nn as nn
    import newch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = x * (torch.rand(tuple(x.shape)) >= 0.25) * (1 / 0.75)   # dropout from the context RNG
            x = F.relu(self.fc1(torch.flatten(x, 1)))
            return F.log_softmax(self.fc2(x), dim=1)

    def train(threads):
        torch.set_default_context(torch.Context(seed=0, threads=threads))
        rng = np.random.default_rng(0)
        with torch.persistent():
            x = torch.tensor(rng.standard_normal((16, 1, 28, 28)).astype(np.float32))
            y = torch.tensor(rng.integers(0, 10, 16))
        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        for _ in range(10):
            opt.zero_grad()
            out = model(x)
            loss = -(out.gather(1, y.unsqueeze(1))).mean()
            loss.backward()
            opt.step()
            torch.step_end()
        return {k: v.detach().numpy().tolist() for k, v in model.state_dict().items()}

    runs = [train(int(n)) for n in sys.argv[1].split(",")]
    digests = [hashlib.sha256(json.dumps(r).encode()).hexdigest() for r in runs]
    print(json.dumps({"digests": digests, "first": runs[0]}))
""")


def _train(threads, backend=None):
    env = dict(os.environ, NUMBA_NUM_THREADS="3")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if backend:
        env["NEWCH_BACKEND"] = backend
    p = subprocess.run([sys.executable, "-c", TRAIN, threads], env=env, capture_output=True,
                       text=True, timeout=1800)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_ten_steps_bit_identical_on_1_2_3_threads_and_ref_agrees():
    jit = _train("1,2,3")
    assert len(set(jit["digests"])) == 1, jit["digests"]
    ref = _train("1", backend="ref")
    for k, v in jit["first"].items():
        np.testing.assert_allclose(np.array(ref["first"][k]), np.array(v), rtol=1e-3, atol=1e-4,
                                   err_msg=k)
