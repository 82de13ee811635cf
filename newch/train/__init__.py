"""Training made easy: ``fit`` / ``evaluate`` / ``predict``, callbacks, metrics, progress, History.

Usually reached as methods of a module: ``model.fit(x, y, loss=..., optimizer=...)``.
See docs/training.md.
"""
from .callbacks import (Callback, EarlyStopping, LambdaCallback, LearningRateScheduler,
                        ModelCheckpoint)
from .history import History
from .loop import evaluate, fit, predict
from .metrics import accuracy
from .progress import Progress

__all__ = ["fit", "evaluate", "predict", "History", "Callback", "EarlyStopping",
           "ModelCheckpoint", "LambdaCallback", "LearningRateScheduler", "accuracy", "Progress"]
