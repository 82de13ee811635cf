"""Training with the normalisation layers and classification losses: several SGD steps agree with
PyTorch (parameters and running statistics), and a model with dropout learns a toy problem."""
import numpy as np

import newch
import newch.nn as nn
import newch.nn.functional as F

RNG = np.random.default_rng(21)


def _model(lib):
    m = lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.BatchNorm1d(8), lib.nn.ReLU(),
                          lib.nn.Linear(8, 8), lib.nn.LayerNorm(8), lib.nn.Tanh(),
                          lib.nn.Linear(8, 3))
    return m


def test_sgd_steps_match_torch(torch):
    t_model, n_model = _model(torch), _model(newch)
    with newch.no_grad():
        for (k, tp), (_, np_) in zip(t_model.state_dict().items(), n_model.state_dict().items()):
            np_.copy_(newch.tensor(tp.numpy()))
    t_opt = torch.optim.SGD(t_model.parameters(), lr=0.1, momentum=0.9)
    n_opt = newch.optim.SGD(n_model.parameters(), lr=0.1, momentum=0.9)
    for step in range(6):
        x = RNG.standard_normal((16, 6)).astype(np.float32)
        y = RNG.integers(0, 3, 16)
        for lib, model, opt in ((torch, t_model, t_opt), (newch, n_model, n_opt)):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y),
                                                   label_smoothing=0.1)
            loss.backward()
            opt.step()
        newch.step_end()
    for (k, tv), (_, nv) in zip(t_model.state_dict().items(), n_model.state_dict().items()):
        np.testing.assert_allclose(nv.numpy(), tv.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)
    t_model.eval()
    n_model.eval()
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    np.testing.assert_allclose(n_model(newch.tensor(x)).detach().numpy(),
                               t_model(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_model_with_dropout_learns_a_toy_problem():
    newch.manual_seed(0)
    centers = RNG.standard_normal((3, 10)).astype(np.float32) * 3
    model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(32, 3))
    opt = newch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(60):
        y = RNG.integers(0, 3, 32)
        x = centers[y] + RNG.standard_normal((32, 10)).astype(np.float32)
        opt.zero_grad()
        loss = F.nll_loss(F.log_softmax(model(newch.tensor(x)), dim=1), newch.tensor(y))
        loss.backward()
        opt.step()
        newch.step_end()
    model.eval()
    y = RNG.integers(0, 3, 200)
    x = centers[y] + RNG.standard_normal((200, 10)).astype(np.float32)
    with newch.no_grad():
        pred = model(newch.tensor(x)).argmax(1).numpy()
    assert (pred == y).mean() > 0.9
