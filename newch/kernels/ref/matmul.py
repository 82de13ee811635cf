"""Numpy twins of ``kernels/matmul.py``: same names, same signatures, obvious code.

They are the test oracle and the fallback where numba is missing. numpy (BLAS)
sums in its own order, so floats agree with the JIT kernels to rounding, not
bit for bit. They need no scratch.
"""
import numpy as np

__all__ = ["gemm_scratch", "gemm", "bgemm_scratch", "bgemm"]


def gemm_scratch(M, N, K):
    """Scratch elements ``gemm`` needs: none (numpy allocates its own)."""
    return 0


def gemm(a, b, out, scratch, accumulate=False):
    """out[:] = a @ b (or +=). a (M, K), b (K, N) any strides; out (M, N) C-contiguous; scratch ignored."""
    bgemm(a[None], b[None], out[None], scratch, accumulate)


def bgemm_scratch(B, M, N, K):
    """Scratch elements ``bgemm`` needs: none."""
    return 0


def bgemm(a, b, out, scratch, accumulate=False):
    """out[i] = a[i] @ b[i] (``accumulate``: +=). a (B, M, K), b (B, K, N) any strides; out (B, M, N);
    scratch ignored."""
    if accumulate:
        out += np.matmul(a, b)
    else:
        np.matmul(a, b, out=out)
