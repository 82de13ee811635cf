"""Image transforms (a subset of ``torchvision.transforms``) on tensors and numpy arrays.

newch has no image library: an "image" is a uint8 tensor or numpy array of
shape (H, W) or (H, W, C), as ``vision.datasets`` items are, and ``ToTensor``
turns it into a float32 (C, H, W) tensor in [0, 1] as torchvision does for PIL
images.
"""
import numpy as np

from .. import dtypes as D
from ..ops.creation import as_tensor, tensor
from ..context import default_context
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


# -- geometry: images as uint8 (H, W[, C]) arrays/tensors, or float tensors (..., C, H, W) ----------

def _unpack(img, op):
    """(numpy array, spatial axes, rebuild) for an image in either layout."""
    if isinstance(img, Tensor):
        a = img.numpy(force=True)
        hwc = a.dtype == np.uint8 and a.ndim in (2, 3)
        rebuild = as_tensor
    else:
        a = np.asarray(img)
        hwc = True
        rebuild = np.ascontiguousarray
    if a.ndim < 2 or (hwc and a.ndim > 3):
        raise ValueError(f"{op}: expected an image (H, W), (H, W, C) or a tensor (..., C, H, W), got "
                         f"shape {a.shape}")
    axes = (0, 1) if hwc else (a.ndim - 2, a.ndim - 1)
    return a, axes, lambda out: rebuild(np.ascontiguousarray(out))


def _size2(op, size):
    if isinstance(size, int):
        return size, size
    size = tuple(size)
    if len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(f"{op}: size must be an int or (h, w), got {size}")
    return size


def _take(a, axes, rows, cols):
    index = [slice(None)] * a.ndim
    index[axes[0]], index[axes[1]] = rows, cols
    return a[tuple(index)]


def _pad(a, axes, top, left, bottom, right, fill=0, mode="constant"):
    widths = [(0, 0)] * a.ndim
    widths[axes[0]], widths[axes[1]] = (top, bottom), (left, right)
    if mode == "constant":
        return np.pad(a, widths, mode="constant", constant_values=fill)
    modes = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}
    if mode not in modes:
        raise ValueError(f"pad: padding_mode must be constant, edge, reflect or symmetric, got {mode!r}")
    return np.pad(a, widths, mode=modes[mode])


def _linear_weights(n_in, n_out):
    """Source indices and weights of a 1-d linear resize with half-pixel centres."""
    pos = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
    pos = np.clip(pos, 0, n_in - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, (pos - lo)


class Resize:
    """Resize an image to ``size`` ((h, w), or an int for the shorter side, keeping the aspect).

    Bilinear with half-pixel centres (no antialiasing, unlike PIL's downscaling); ``NEAREST``
    interpolation is accepted as ``interpolation="nearest"``.

    Example:
        >>> tuple(Resize((4, 6))(np.zeros((8, 12, 3), np.uint8)).shape)
        (4, 6, 3)
    """

    def __init__(self, size, interpolation="bilinear", max_size=None, antialias=True):
        self.size, self.interpolation, self.max_size = size, str(interpolation).lower(), max_size
        if not any(k in self.interpolation for k in ("bilinear", "nearest")):
            raise ValueError(f"Resize: interpolation must be bilinear or nearest, got {interpolation}")

    def _target(self, h, w):
        if isinstance(self.size, int) or len(tuple(self.size)) == 1:
            s = self.size if isinstance(self.size, int) else tuple(self.size)[0]
            short, long = (h, w) if h <= w else (w, h)
            new_long = int(s * long / short)
            if self.max_size is not None and new_long > self.max_size:
                s, new_long = int(self.max_size * s / new_long), self.max_size
            return (s, new_long) if h <= w else (new_long, s)
        return _size2("Resize", self.size)

    def __call__(self, img):
        a, (ya, xa), rebuild = _unpack(img, "Resize")
        oh, ow = self._target(a.shape[ya], a.shape[xa])
        src = a.astype(np.float64)
        if "nearest" in self.interpolation:
            rows = np.minimum((np.arange(oh) * a.shape[ya] / oh).astype(np.int64), a.shape[ya] - 1)
            cols = np.minimum((np.arange(ow) * a.shape[xa] / ow).astype(np.int64), a.shape[xa] - 1)
            out = np.take(np.take(src, rows, ya), cols, xa)
        else:
            lo, hi, t = _linear_weights(a.shape[ya], oh)
            shape = [1] * a.ndim
            shape[ya] = oh
            src = np.take(src, lo, ya) * (1 - t).reshape(shape) + np.take(src, hi, ya) * t.reshape(shape)
            lo, hi, t = _linear_weights(a.shape[xa], ow)
            shape = [1] * a.ndim
            shape[xa] = ow
            out = np.take(src, lo, xa) * (1 - t).reshape(shape) + np.take(src, hi, xa) * t.reshape(shape)
        if a.dtype == np.uint8:
            out = np.clip(np.rint(out), 0, 255)
        return rebuild(out.astype(a.dtype))

    def __repr__(self):
        return f"Resize(size={self.size}, interpolation={self.interpolation})"


class CenterCrop:
    """The central ``size`` region (zero-padded first if the image is smaller).

    Example:
        >>> CenterCrop(2)(np.arange(16, dtype=np.uint8).reshape(4, 4)).tolist()
        [[5, 6], [9, 10]]
    """

    def __init__(self, size):
        self.size = _size2("CenterCrop", size)

    def __call__(self, img):
        a, axes, rebuild = _unpack(img, "CenterCrop")
        (ch, cw), h, w = self.size, a.shape[axes[0]], a.shape[axes[1]]
        if ch > h or cw > w:
            ph, pw = max(ch - h, 0), max(cw - w, 0)
            a = _pad(a, axes, ph // 2, pw // 2, (ph + 1) // 2, (pw + 1) // 2)
            h, w = a.shape[axes[0]], a.shape[axes[1]]
        top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
        return rebuild(_take(a, axes, slice(top, top + ch), slice(left, left + cw)))

    def __repr__(self):
        return f"CenterCrop(size={self.size})"


class RandomCrop:
    """A random ``size`` region, after optional ``padding`` (drawn from the default context's stream).

    Example:
        >>> tuple(RandomCrop(28, padding=4)(np.zeros((28, 28), np.uint8)).shape)
        (28, 28)
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = _size2("RandomCrop", size)
        self.padding, self.pad_if_needed = padding, pad_if_needed
        self.fill, self.padding_mode = fill, padding_mode

    def __call__(self, img):
        a, axes, rebuild = _unpack(img, "RandomCrop")
        if self.padding is not None:
            p = self.padding
            p = (p, p, p, p) if isinstance(p, int) else tuple(p) * (2 if len(tuple(p)) == 2 else 1)
            left, top, right, bottom = p
            a = _pad(a, axes, top, left, bottom, right, self.fill, self.padding_mode)
        (ch, cw), h, w = self.size, a.shape[axes[0]], a.shape[axes[1]]
        if self.pad_if_needed and (h < ch or w < cw):
            a = _pad(a, axes, max(ch - h, 0), max(cw - w, 0), max(ch - h, 0), max(cw - w, 0),
                     self.fill, self.padding_mode)
            h, w = a.shape[axes[0]], a.shape[axes[1]]
        if h < ch or w < cw:
            raise ValueError(f"RandomCrop: required crop size {(ch, cw)} is larger than the input "
                             f"image size {(h, w)}")
        rng = default_context().rng
        top, left = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        return rebuild(_take(a, axes, slice(top, top + ch), slice(left, left + cw)))

    def __repr__(self):
        return f"RandomCrop(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Mirror the image left-right with probability ``p``.

    Example:
        >>> RandomHorizontalFlip(p=1.0)(np.array([[1, 2, 3]], np.uint8)).tolist()
        [[3, 2, 1]]
    """

    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        if default_context().rng.random() >= self.p:
            return img
        a, axes, rebuild = _unpack(img, "RandomHorizontalFlip")
        return rebuild(np.flip(a, axes[1]))

    def __repr__(self):
        return f"RandomHorizontalFlip(p={self.p})"
