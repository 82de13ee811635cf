"""``newch.nn.functional`` (``import newch.nn.functional as F``): layers as plain functions.

Same names, signatures and defaults as ``torch.nn.functional``. Everything is
built from newch ops, so autograd and the memory model apply unchanged.
"""
from .activation import (elu, elu_, gelu, leaky_relu, leaky_relu_, log_softmax, relu, relu_,
                         sigmoid, silu, softmax, tanh)
from .linear import linear
from .loss import huber_loss, l1_loss, mse_loss, smooth_l1_loss
from .classification_loss import (binary_cross_entropy, binary_cross_entropy_with_logits,
                                  cross_entropy, kl_div, nll_loss, one_hot)
from .dropout import dropout, dropout1d, dropout2d
from .normalization import batch_norm, group_norm, layer_norm
from .distance import cosine_similarity, normalize
from .embedding import embedding, embedding_bag
from .attention import scaled_dot_product_attention

# convolution, pooling, padding, resampling (issue 10)
from .conv import conv1d, conv2d, conv_transpose2d, pad
from .pool import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d,
                   avg_pool1d, avg_pool2d, max_pool1d, max_pool2d)
from .resample import interpolate

__all__ = ["linear", "relu", "relu_", "leaky_relu", "leaky_relu_", "elu", "elu_", "gelu", "silu",
           "sigmoid", "tanh", "softmax", "log_softmax", "mse_loss", "l1_loss", "smooth_l1_loss",
           "huber_loss",
           "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "kl_div", "one_hot", "dropout", "dropout1d", "dropout2d", "batch_norm", "layer_norm",
           "group_norm"]
__all__ += ["conv1d", "conv2d", "conv_transpose2d", "pad", "max_pool1d", "max_pool2d", "avg_pool1d",
            "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
            "adaptive_max_pool2d", "interpolate"]
__all__ += ["normalize", "cosine_similarity", "embedding", "embedding_bag", "scaled_dot_product_attention"]
