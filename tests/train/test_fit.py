"""Module.fit / evaluate / predict: results against numpy, step scopes, Ctrl-C, progress output."""
import os
import signal

import numpy as np
import pytest

import newch
import newch.nn as nn
import newch.nn.functional as F
from newch.data import DataLoader, TensorDataset
from newch.train import Callback, LambdaCallback


@pytest.fixture(autouse=True)
def _seed():
    newch.manual_seed(0)


def _regression(n=256):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)
    return x, y


def test_fit_reaches_the_least_squares_solution():
    x, y = _regression()
    model = nn.Linear(3, 1)
    h = model.fit(newch.tensor(x), newch.tensor(y), loss="mse", epochs=30, batch_size=32,
                  optimizer=newch.optim.SGD(model.parameters(), lr=0.1), verbose=0)
    sol, *_ = np.linalg.lstsq(np.c_[x, np.ones(len(x))], y, rcond=None)
    np.testing.assert_allclose(model.weight.detach().numpy().ravel(), sol[:3].ravel(), atol=1e-3)
    np.testing.assert_allclose(model.bias.item(), sol[3, 0], atol=1e-3)
    assert list(h.history) == ["loss"] and len(h.history["loss"]) == 30
    assert h.history["loss"][-1] < h.history["loss"][0]


def test_fit_accepts_numpy_dataset_and_loader_alike():
    x, y = _regression(64)
    results = []
    for data in ((x, y), (TensorDataset(newch.tensor(x), newch.tensor(y)),),
                 (DataLoader(TensorDataset(newch.tensor(x), newch.tensor(y)), batch_size=16),)):
        newch.manual_seed(0)
        model = nn.Linear(3, 1)
        model.fit(*data, loss=nn.MSELoss(), batch_size=16, shuffle=False, verbose=0,
                  optimizer=newch.optim.SGD(model.parameters(), lr=0.05))
        results.append(model.weight.detach().numpy().copy())
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


def test_reported_loss_is_the_batch_size_weighted_mean():
    x, y = _regression(10)
    model = nn.Linear(3, 1)
    w0, b0 = model.weight.detach().numpy().copy(), model.bias.detach().numpy().copy()
    h = model.fit(x, y, loss="mse", batch_size=4, shuffle=False, verbose=0,
                  optimizer=newch.optim.SGD(model.parameters(), lr=0.0))
    mse = ((x @ w0.T + b0 - y) ** 2).mean()
    np.testing.assert_allclose(h.history["loss"][0], mse, rtol=1e-5)


def test_validation_split_holds_out_the_last_rows_and_metrics():
    x = np.random.default_rng(1).standard_normal((100, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    model = nn.Linear(4, 2)
    def xent(o, t):
        return -F.log_softmax(o, 1).gather(1, t.unsqueeze(1)).mean()
    h = model.fit(x, y, loss=xent,
                  optimizer=newch.optim.SGD(model.parameters(), lr=0.5), epochs=3,
                  validation_split=0.2, metrics=["accuracy"], verbose=0)
    assert set(h.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    res = model.evaluate(x[80:], y[80:], metrics=["accuracy"])
    np.testing.assert_allclose(res["accuracy"], h.history["val_accuracy"][-1])
    with newch.no_grad():
        pred = model(newch.tensor(x[80:])).argmax(1).numpy()
    np.testing.assert_allclose(res["accuracy"], (pred == y[80:]).mean())


def test_predict_equals_the_model_and_is_persistent_and_restores_mode():
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh())
    model.train()
    x = newch.randn(23, 3)
    out = model.predict(x, batch_size=5)
    assert out.is_persistent and tuple(out.shape) == (23, 5) and model.training
    with newch.no_grad():
        ref = model(x).numpy()
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    newch.step_end()
    assert out.sum().item() == pytest.approx(float(ref.sum()), rel=1e-5)
    assert isinstance(model.predict(x.numpy() if x.is_alive else np.zeros((2, 3), np.float32),
                                    numpy=True), np.ndarray)


def test_callers_temporaries_survive_fit_evaluate_predict():
    x, y = newch.randn(64, 3), newch.randn(64, 1)
    mine = newch.randn(4)
    model = nn.Linear(3, 1)
    model.fit(x, y, loss="mse", optimizer=newch.optim.SGD(model.parameters(), lr=0.1),
              epochs=2, verbose=0)
    model.evaluate(x, y)
    model.predict(x)
    assert mine.is_alive and x.is_alive and mine.sum().item() == mine.sum().item()
    newch.step_end()
    assert not mine.is_alive


def test_fit_frees_each_batch():
    x, y = newch.randn(512, 64), newch.randn(512, 1)
    model = nn.Linear(64, 1)
    in_use = []
    model.fit(x, y, loss="mse", optimizer=newch.optim.SGD(model.parameters(), lr=0.01),
              epochs=2, batch_size=32, verbose=0,
              callbacks=[LambdaCallback(on_train_batch_end=lambda b, logs: in_use.append(
                  newch.mem_stats()["arena_bytes_in_use"]))])
    assert len(set(in_use)) == 1          # the same bytes after every batch: nothing piles up


def test_callback_hooks_run_in_order():
    calls = []

    class Spy(Callback):
        def on_train_begin(self, logs=None): calls.append("train_begin")
        def on_epoch_begin(self, epoch, logs=None): calls.append(f"epoch_begin {epoch}")
        def on_train_batch_end(self, batch, logs=None): calls.append(f"batch {batch}")
        def on_epoch_end(self, epoch, logs=None): calls.append(f"epoch_end {epoch} {sorted(logs)}")
        def on_train_end(self, logs=None): calls.append("train_end")

    model = nn.Linear(2, 1)
    model.fit(newch.randn(8, 2), newch.randn(8, 1), loss="mse", batch_size=4, epochs=2,
              optimizer=newch.optim.SGD(model.parameters(), lr=0.1), callbacks=[Spy()], verbose=0)
    assert calls == ["train_begin", "epoch_begin 0", "batch 0", "batch 1", "epoch_end 0 ['loss']",
                     "epoch_begin 1", "batch 0", "batch 1", "epoch_end 1 ['loss']", "train_end"]


def test_ctrl_c_stops_after_the_current_batch_and_returns_history():
    steps = []
    model = nn.Linear(3, 1)
    opt = newch.optim.SGD(model.parameters(), lr=0.1)
    orig_step = opt.step

    def counted_step(*a, **k):
        steps.append(1)
        return orig_step(*a, **k)
    opt.step = counted_step

    def interrupt(batch, logs):
        if batch == 2:
            os.kill(os.getpid(), signal.SIGINT)
    handler = signal.getsignal(signal.SIGINT)
    h = model.fit(newch.randn(320, 3), newch.randn(320, 1), loss="mse", batch_size=32, epochs=5,
                  optimizer=opt, verbose=0,
                  callbacks=[LambdaCallback(on_train_batch_begin=interrupt)])
    assert h.interrupted and len(steps) == 3 and h.epoch == [0]
    assert np.isfinite(model.weight.detach().numpy()).all()
    assert signal.getsignal(signal.SIGINT) is handler      # the user's handler is back


def test_early_stopping_restores_best_weights():
    from newch.train import EarlyStopping
    model = nn.Linear(1, 1)
    x, y = newch.randn(32, 1), newch.randn(32, 1)
    stop = EarlyStopping(monitor="loss", patience=1, restore_best_weights=True)
    # lr so large that the loss diverges after the first epoch
    h = model.fit(x, y, loss="mse", optimizer=newch.optim.SGD(model.parameters(), lr=5.0),
                  epochs=20, batch_size=32, callbacks=[stop], verbose=0, shuffle=False)
    assert h.stopped_early and len(h.epoch) < 20
    best = int(np.argmin(h.history["loss"]))
    assert stop.best_epoch == best


def test_progress_bar_and_silence(capsys):
    model = nn.Linear(2, 1)
    kw = dict(loss="mse", optimizer=newch.optim.SGD(model.parameters(), lr=0.1), epochs=1)
    model.fit(newch.randn(8, 2), newch.randn(8, 1), verbose=0, **kw)
    assert capsys.readouterr().out == ""
    model.fit(newch.randn(8, 2), newch.randn(8, 1), verbose=1, batch_size=4, **kw)
    out = capsys.readouterr().out
    assert "Epoch 1/1" in out and "2/2 [" in out and "loss:" in out and "steps/s" in out


def test_bad_arguments_are_clear():
    model = nn.Linear(2, 1)
    opt = newch.optim.SGD(model.parameters(), lr=0.1)
    x, y = newch.randn(4, 2), newch.randn(4, 1)
    with pytest.raises(ValueError, match="fit: unknown loss"):
        model.fit(x, y, loss="nope", optimizer=opt)
    with pytest.raises(TypeError, match="fit: optimizer"):
        model.fit(x, y, loss="mse", optimizer="sgd")
    with pytest.raises(ValueError, match="fit: unknown metric"):
        model.fit(x, y, loss="mse", optimizer=opt, metrics=["f1"])
    with pytest.raises(ValueError, match="validation_split"):
        model.fit(x, y, loss="mse", optimizer=opt, validation_split=1.5)
    with pytest.raises(ValueError, match="evaluate: nothing to compute"):
        nn.Linear(2, 1).evaluate(x, y)
    with pytest.raises(ValueError, match="pairs"):
        model.fit(x, loss="mse", optimizer=opt, verbose=0)
    newch.step_end()
    with pytest.raises(newch.NcError):
        model.fit(x, y, loss="mse", optimizer=opt)


def test_model_checkpoint_writes_loadable_files_atomically(tmp_path):
    from newch.train import ModelCheckpoint
    model = nn.Linear(3, 1)
    x, y = newch.randn(40, 3), newch.randn(40, 1)
    best = tmp_path / "best.pt"
    every = str(tmp_path / "ckpt-{epoch:02d}.pt")
    model.fit(x, y, loss="mse", optimizer=newch.optim.SGD(model.parameters(), lr=0.05), epochs=3,
              validation_split=0.25, verbose=0,
              callbacks=[ModelCheckpoint(str(best), monitor="val_loss", save_best_only=True,
                                         save_weights_only=True),
                         ModelCheckpoint(every, save_weights_only=False)])
    sd = newch.load(str(best))               # weights_only=True: a plain state_dict
    assert set(sd) == {"weight", "bias"}
    assert sorted(os.listdir(tmp_path)) == ["best.pt", "ckpt-01.pt", "ckpt-02.pt", "ckpt-03.pt"]
    whole = newch.load(str(tmp_path / "ckpt-03.pt"), weights_only=False)
    np.testing.assert_array_equal(whole.weight.detach().numpy(), model.weight.detach().numpy())
