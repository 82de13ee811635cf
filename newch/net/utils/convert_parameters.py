"""Parameters to one flat vector and back (``torch.nn.utils.parameters_to_vector`` and inverse)."""
from ...graph import no_grad
from ...ops.join import cat
from ...tensor import Tensor


def _params(op, parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    out = list(parameters)
    for i, p in enumerate(out):
        if not isinstance(p, Tensor):
            raise TypeError(f"{op}: parameters must be Tensors, but item {i} is a "
                            f"{type(p).__name__}")
    return out


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated into one 1-D tensor (a temporary).

    The result is part of the autograd graph, as in PyTorch.

    Example:
        >>> vec = newch.nn.utils.parameters_to_vector(model.parameters())
        >>> vec.shape   # model = nn.Linear(4, 2): 8 weights, 2 biases
        newch.Size([10])
    """
    ps = _params("parameters_to_vector", parameters)
    if not ps:
        raise ValueError("parameters_to_vector: got no parameters")
    return cat([p.reshape(-1) for p in ps])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters``, in order.

    Differs from PyTorch in one way the memory model needs: the values are
    copied into each parameter's own (persistent) memory instead of making
    the parameter a view of ``vec``, so ``vec`` may be a temporary and the
    parameters stay the same tensors (optimizers keep working).

    Example:
        >>> vec = newch.nn.utils.parameters_to_vector(model.parameters()).detach()
        >>> newch.nn.utils.vector_to_parameters(vec * 0.5, model.parameters())
    """
    op = "vector_to_parameters"
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"{op}: vec must be 1-D, got shape {tuple(vec.shape)}")
    ps = _params(op, parameters)
    need = sum(p.numel() for p in ps)
    if vec.numel() != need:
        raise ValueError(f"{op}: vec has {vec.numel()} elements, the parameters hold {need}")
    start = 0
    with no_grad():
        for p in ps:
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(tuple(p.shape)))
            start += n
