"""The names PyTorch's files use (storage classes, dtypes, nn module files) and newch's for them.

A checkpoint pickle refers to Python objects by ``module.name``: a tensor is
``torch._utils._rebuild_tensor_v2`` applied to a ``torch.FloatStorage``, a
whole model is ``torch.nn.modules.linear.Linear``... These tables translate
between those names and newch's, in both directions, without importing torch.
They are facts about PyTorch's format, checked by tests against torch 2.13.
"""
import numpy as np

from .. import dtypes as D


class TorchGlobal:
    """A global name (``module``, ``name``) written into a pickle as is; torch need not exist."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module = module
        self.name = name

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __call__(self, *args):
        # NOTE: pickle wants a callable in a reduce tuple; this one only ever gets written.
        raise TypeError(f"{self!r} is a name written into files, not a function")


class ForeignDtype:
    """A PyTorch dtype newch lacks (``torch.float16``...), met as a value in a loaded file."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __eq__(self, other):
        return isinstance(other, ForeignDtype) and other.name == self.name

    def __hash__(self):
        return hash(("ForeignDtype", self.name))


REBUILD_TENSOR = TorchGlobal("torch._utils", "_rebuild_tensor_v2")
REBUILD_PARAMETER = TorchGlobal("torch._utils", "_rebuild_parameter")
TORCH_SIZE = TorchGlobal("torch", "Size")

# torch storage class -> numpy dtype of its elements (little-endian in the file)
STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
    "QInt8Storage": "qint8", "QUInt8Storage": "quint8", "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}
STORAGE_OF = {v: k for k, v in STORAGE_DTYPES.items() if not v.startswith("q")}

# every dtype name torch pickles as ``torch.<name>`` (aliases included)
TORCH_DTYPE_NAMES = {
    "float32", "float", "float64", "double", "float16", "half", "bfloat16", "int64", "long",
    "int32", "int", "int16", "short", "int8", "uint8", "bool", "uint16", "uint32", "uint64",
    "complex64", "cfloat", "complex128", "cdouble", "complex32", "chalf", "qint8", "quint8",
    "qint32", "quint4x2", "quint2x4", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8", "bits16",
}
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
            "int": "int32", "short": "int16", "cfloat": "complex64", "cdouble": "complex128",
            "chalf": "complex32"}

# dtypes newch reads as float32 (with a warning); other foreign dtypes are refused
WIDENED = ("float16", "bfloat16")


def canonical_dtype_name(name):
    """``'half'`` -> ``'float16'``: the name torch prints for a dtype."""
    return _ALIASES.get(name, name)


def dtype_value(name):
    """What ``torch.<name>`` (a dtype) becomes in newch: a newch dtype or a ForeignDtype."""
    name = canonical_dtype_name(name)
    try:
        return D.from_any(name)
    except TypeError:
        return ForeignDtype(name)


def numpy_dtype(name):
    """The little-endian numpy dtype of a torch element type name, or None when numpy lacks it."""
    if name == "bfloat16":
        return np.dtype("<u2")          # NOTE: read as raw bits, widened to float32 by hand
    if name in ("bool", "uint8", "int8"):
        return np.dtype(name)
    try:
        return np.dtype(name).newbyteorder("<")
    except TypeError:
        return None


def element_size(name):
    """Bytes per element of a torch dtype name (1 for the 8-bit and packed types)."""
    dt = numpy_dtype(name)
    if dt is not None:
        return dt.itemsize
    return {"complex32": 4, "qint32": 4}.get(name, 1)


# torch.nn.modules.<file> of each layer class, so a whole newch model pickles under torch's names
_NN_FILES = {
    "module": "Module",
    "linear": "Identity Linear Bilinear LazyLinear",
    "activation": "Threshold ReLU RReLU Hardtanh ReLU6 Sigmoid Hardsigmoid Tanh SiLU Mish "
                  "Hardswish ELU CELU SELU GLU GELU Hardshrink LeakyReLU LogSigmoid Softplus "
                  "Softshrink MultiheadAttention PReLU Softsign Tanhshrink Softmin Softmax "
                  "Softmax2d LogSoftmax",
    "container": "Container Sequential ModuleList ModuleDict ParameterList ParameterDict",
    "flatten": "Flatten Unflatten",
    "loss": "L1Loss NLLLoss NLLLoss2d PoissonNLLLoss GaussianNLLLoss KLDivLoss MSELoss BCELoss "
            "BCEWithLogitsLoss HingeEmbeddingLoss MultiLabelMarginLoss SmoothL1Loss HuberLoss "
            "SoftMarginLoss CrossEntropyLoss MultiLabelSoftMarginLoss CosineEmbeddingLoss "
            "MarginRankingLoss MultiMarginLoss TripletMarginLoss "
            "TripletMarginWithDistanceLoss CTCLoss",
    "conv": "Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d",
    "pooling": "MaxPool1d MaxPool2d MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d AvgPool1d "
               "AvgPool2d AvgPool3d FractionalMaxPool2d FractionalMaxPool3d LPPool1d LPPool2d "
               "LPPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d "
               "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d",
    "batchnorm": "BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm",
    "instancenorm": "InstanceNorm1d InstanceNorm2d InstanceNorm3d",
    "normalization": "LocalResponseNorm CrossMapLRN2d LayerNorm GroupNorm RMSNorm",
    "dropout": "Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout",
    "sparse": "Embedding EmbeddingBag",
    "rnn": "RNNBase RNN LSTM GRU RNNCellBase RNNCell LSTMCell GRUCell",
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "upsampling": "Upsample UpsamplingNearest2d UpsamplingBilinear2d",
    "distance": "PairwiseDistance CosineSimilarity",
    "channelshuffle": "ChannelShuffle",
    "fold": "Fold Unfold",
    "padding": "CircularPad1d CircularPad2d CircularPad3d ConstantPad1d ConstantPad2d "
               "ConstantPad3d ReflectionPad1d ReflectionPad2d ReflectionPad3d "
               "ReplicationPad1d ReplicationPad2d ReplicationPad3d ZeroPad1d ZeroPad2d ZeroPad3d",
    "transformer": "Transformer TransformerEncoder TransformerDecoder "
                   "TransformerEncoderLayer TransformerDecoderLayer",
}
NN_FILE_OF = {cls: f for f, names in _NN_FILES.items() for cls in names.split()}

# attributes torch's Module keeps and newch's does not (hook tables): added on save, dropped on load
TORCH_MODULE_TABLES = (
    "_backward_pre_hooks", "_backward_hooks", "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called", "_forward_pre_hooks_with_kwargs", "_state_dict_hooks",
    "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
)
