"""Image transforms (a subset of ``torchvision.transforms``) on tensors and numpy arrays.

newch has no image library: an "image" is a uint8 tensor or numpy array of
shape (H, W) or (H, W, C), as ``vision.datasets`` items are, and ``ToTensor``
turns it into a float32 (C, H, W) tensor in [0, 1] as torchvision does for PIL
images.
"""
import numpy as np

from .. import dtypes as D
from ..ops.creation import as_tensor, tensor
from ..tensor import Tensor


class Compose:
    """Apply ``transforms`` one after the other.

    Example:
        >>> t = Compose([ToTensor(), Normalize((0.5,), (0.5,))])
        >>> t(np.full((2, 2), 255, np.uint8)).tolist()
        [[[1.0, 1.0], [1.0, 1.0]]]
    """

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        inner = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({inner}\n)"


class ToTensor:
    """uint8 (H, W) or (H, W, C) image -> float32 (C, H, W) tensor scaled to [0, 1].

    Arrays of other dtypes are moved to (C, H, W) without scaling, as torchvision does.

    Example:
        >>> ToTensor()(np.array([[0, 255]], np.uint8)).tolist()
        [[[0.0, 1.0]]]
    """

    def __call__(self, pic):
        if isinstance(pic, Tensor):
            pic = pic.numpy(force=True)
        a = np.asarray(pic)
        if a.ndim not in (2, 3):
            raise ValueError(f"ToTensor: expected an image of shape (H, W) or (H, W, C), got "
                             f"shape {a.shape}")
        if a.ndim == 2:
            a = a[:, :, None]
        chw = np.ascontiguousarray(a.transpose(2, 0, 1))
        if chw.dtype == np.uint8:
            return as_tensor(chw.astype(np.float32) / np.float32(255))
        return as_tensor(chw)

    def __repr__(self):
        return "ToTensor()"


class Normalize:
    """Per channel ``(x - mean) / std`` of a float (C, H, W) or (N, C, H, W) tensor.

    Example:
        >>> Normalize((1.0,), (2.0,))(newch.ones(1, 1, 2)).tolist()
        [[[0.0, 0.0]]]
    """

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = tuple(mean), tuple(std), inplace
        if any(s == 0 for s in self.std):
            raise ValueError(f"Normalize: std evaluated to zero after conversion to float, leading "
                             f"to division by zero (std={self.std})")

    def __call__(self, x):
        if not isinstance(x, Tensor) or not x.dtype.is_floating_point:
            raise TypeError(f"Normalize: expected a float tensor, got "
                            f"{x.dtype if isinstance(x, Tensor) else type(x).__name__}")
        if x.ndim < 3:
            raise ValueError(f"Normalize: expected a tensor image of shape (..., C, H, W), got "
                             f"shape {tuple(x.shape)}")
        mean = tensor(self.mean, dtype=x.dtype).reshape(-1, 1, 1)
        std = tensor(self.std, dtype=x.dtype).reshape(-1, 1, 1)
        if self.inplace:
            return x.sub_(mean).div_(std)
        return (x - mean) / std

    def __repr__(self):
        return f"Normalize(mean={self.mean}, std={self.std})"


class Lambda:
    """Apply a user function as a transform.

    Example:
        >>> Lambda(lambda x: x * 2)(3)
        6
    """

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Lambda: argument should be callable, got {type(lambd).__name__}")
        self.lambd = lambd

    def __call__(self, x):
        return self.lambd(x)

    def __repr__(self):
        return "Lambda()"


class ConvertImageDtype:
    """Convert a tensor image to ``dtype``, scaling uint8 to [0, 1] for float dtypes."""

    def __init__(self, dtype):
        self.dtype = D.from_any(dtype)

    def __call__(self, x):
        if x.dtype == D.uint8 and self.dtype.is_floating_point:
            return x.to(self.dtype) / 255
        return x.to(self.dtype)
