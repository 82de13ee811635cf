"""Generator: a seedable random stream for ``generator=`` arguments (``torch.Generator``).

A newch Generator wraps numpy's PCG64. The same seed gives the same numbers on
every machine and thread count; the streams are not PyTorch's (docs/data.md
says so). ``newch.default_generator`` stands for the default context's stream.
"""
import json
import os

import numpy as np

from .context import default_context
from .tensor import Tensor


def _fresh_seed():
    return int.from_bytes(os.urandom(8), "little") >> 1


class Generator:
    """A random number generator to pass as ``generator=`` to random ops, samplers and loaders.

    Args:
        device: accepted for PyTorch compatibility; only ``"cpu"`` exists.

    Example:
        >>> g = Generator().manual_seed(0)
        >>> a = newch.randperm(5, generator=g).tolist()
        >>> b = newch.randperm(5, generator=Generator().manual_seed(0)).tolist()
        >>> a == b
        True
    """

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError(f"Generator: newch runs on the CPU only, got device={device!r}")
        self._init_seed = _fresh_seed()
        self._np = np.random.Generator(np.random.PCG64(self._init_seed))

    @property
    def device(self):
        return "cpu"

    @property
    def _rng(self):
        """The numpy Generator that random ops draw from."""
        return self._np

    def manual_seed(self, seed):
        """Reseed the stream with ``seed`` (an int); returns self."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"manual_seed: expected an int seed, got {type(seed).__name__}")
        seed = int(seed)
        if seed < 0:
            seed &= (1 << 64) - 1      # NOTE: PyTorch maps negative seeds into uint64 as well
        self._init_seed = seed
        self._np = np.random.Generator(np.random.PCG64(seed))
        return self

    def initial_seed(self):
        """The seed the stream was last seeded with."""
        return self._init_seed

    def seed(self):
        """Reseed from the OS's entropy and return the new seed."""
        s = _fresh_seed()
        self.manual_seed(s)
        return s

    def get_state(self):
        """The stream's state as a uint8 tensor (pass it to ``set_state`` to rewind)."""
        raw = json.dumps({"seed": self._init_seed, "pcg64": self._rng.bit_generator.state}).encode()
        st = default_context().alloc(len(raw), persistent=True)
        a = st.buf[:len(raw)]
        a[...] = np.frombuffer(raw, np.uint8)
        return Tensor._make(a, st)

    def set_state(self, new_state):
        """Restore a state from ``get_state()``; returns self."""
        try:
            raw = bytes(np.asarray(new_state.numpy() if hasattr(new_state, "numpy") else new_state,
                                   np.uint8))
            st = json.loads(raw.decode())
            bg = np.random.PCG64()
            bg.state = st["pcg64"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
            raise RuntimeError(f"set_state: expected a state from Generator.get_state() "
                               f"(a uint8 tensor), could not read it: {e}") from None
        self._set(np.random.Generator(bg), st["seed"])
        return self

    def _set(self, np_gen, seed):
        self._np = np_gen
        self._init_seed = seed

    def __repr__(self):
        return f"<newch.Generator seed={self._init_seed}>"


class ContextGenerator(Generator):
    """The default context's random stream seen as a Generator (``newch.default_generator``).

    It always follows the current default context, so ``newch.manual_seed`` and
    ``default_generator.manual_seed`` reseed the same stream.
    """

    def __init__(self):   # noqa: D401  (no stream of its own)
        pass

    @staticmethod
    def _ctx():
        return default_context()

    @property
    def _rng(self):
        return self._ctx().rng

    def manual_seed(self, seed):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"manual_seed: expected an int seed, got {type(seed).__name__}")
        self._ctx().manual_seed(int(seed) & ((1 << 64) - 1))
        return self

    def initial_seed(self):
        s = self._ctx().seed
        return s if s is not None else 0

    def _set(self, np_gen, seed):
        ctx = self._ctx()
        ctx.rng, ctx.seed = np_gen, seed

    def __repr__(self):
        return "<newch.default_generator>"


def rng_of(generator):
    """The numpy stream to draw from: ``generator``'s, else the default context's."""
    if generator is None:
        return default_context().rng
    if not isinstance(generator, Generator):
        raise TypeError(f"generator: expected a newch.Generator or None, got "
                        f"{type(generator).__name__}")
    return generator._rng
