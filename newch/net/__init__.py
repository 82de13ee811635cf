"""``newch.net`` (also ``newch.nn``): modules, layers, losses, ``functional`` and ``init``.

``import newch.nn as nn`` works as in PyTorch. Parameters and buffers always
live in persistent memory (they survive ``step_end()``); building a model
allocates nothing in the step arena.
"""
from . import functional, init, utils
from .activation import ELU, GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from .containers import ModuleDict, ModuleList, Sequential
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import HuberLoss, L1Loss, MSELoss, SmoothL1Loss
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, KLDivLoss, NLLLoss
from .dropout import Dropout, Dropout1d, Dropout2d
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .module import Module
from .parameter import Parameter
from . import parallel
from .parallel import DataParallel
# convolution, pooling, padding, resampling layers (issue 10)
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .pool import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                   AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d)
from .resample import ConstantPad2d, ReflectionPad2d, ReplicationPad2d, Upsample, ZeroPad2d

__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "ModuleDict", "Linear", "Identity",
           "ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
           "Flatten", "Unflatten", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
           "functional", "init", "parallel", "DataParallel",
           "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "Dropout",
           "Dropout1d", "Dropout2d", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "LayerNorm"]
__all__ += ["Conv1d", "Conv2d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
            "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
            "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d", "Upsample"]

# sequence models (issue 14)
from .embedding import Embedding, EmbeddingBag  # noqa: E402
from .rnn_cells import GRUCell, LSTMCell, RNNCell  # noqa: E402
from .rnn import GRU, LSTM, RNN, RNNBase  # noqa: E402
__all__ += ["Embedding", "EmbeddingBag", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU"]
from .attention import MultiheadAttention  # noqa: E402
__all__ += ["MultiheadAttention"]
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: E402
                          TransformerEncoder, TransformerEncoderLayer)
__all__ += ["Transformer", "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder",
            "TransformerDecoderLayer"]
