"""The Tensor: a typed, shaped numpy view into a Storage, plus autograd bookkeeping.

Every read of the data goes through ``ops.alloc.data`` (or ``_check``), which
first checks the storage's generation: a temporary whose step has ended raises
``NcError`` instead of exposing freed memory. Operations live in ``ops/`` and
are bound as methods by ``newch.ops`` (``ops/methods.py``) when it loads.
"""
import weakref

import numpy as np

from . import dtypes as D
from .context import default_context
from .device import CPU, check_device
from .format import tensor_repr

_BY_NP = D._BY_NP


class _Upper:
    """What the Tensor calls in the layers above it, filled in by those layers as newch imports.

    Imports point down: ``tensor.py`` never imports ``ops/`` or ``autograd/``. The ops package
    (``ops/methods.py``, with the methods it binds) sets the ops entries, and ``autograd/``
    sets ``backward``; every entry is set once ``import newch`` has finished.
    """
    norm_dim = view_of = stale = own = persistent_copy_of = backward = None


UPPER = _Upper()


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints like ``newch.Size([2, 3])``."""

    def __repr__(self):
        return f"newch.Size({list(self)})"

    def numel(self):
        """The number of elements of a tensor of this shape."""
        n = 1
        for s in self:
            n *= s
        return n

    # NOTE: slicing and joining give a Size again, as torch.Size does (x.shape[1:])
    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


class Tensor:
    """An n-dimensional array in newch memory (arena or persistent pool).

    Create tensors with ``newch.tensor``, ``zeros``, ``randn``... rather than
    this class. Temporaries die at ``step_end()``; persistent tensors live while
    referenced. ``t.numpy()`` copies a temporary and views a persistent tensor.
    """
    __slots__ = ("_a", "_s", "_rg", "_grad", "_node", "_acc", "_retain", "__weakref__")
    __hash__ = object.__hash__

    @staticmethod
    def _make(array, storage, requires_grad=False, cls=None):
        t = object.__new__(cls or Tensor)
        t._a = array
        t._s = storage
        t._rg = requires_grad
        t._grad = None
        t._node = None
        t._acc = None
        t._retain = False
        if storage.views is not None:
            storage.views.add(t)
        return t

    def __init__(self, *args, **kwargs):
        raise TypeError("Tensor: create tensors with newch.tensor(data), newch.zeros(shape), "
                        "newch.randn(shape), ...")

    # -- metadata (no data read, valid even for a freed tensor) ----------------
    @property
    def shape(self):
        """The size of each dimension, a ``newch.Size``."""
        return Size(self._a.shape)

    @property
    def dtype(self):
        """The element type, e.g. ``newch.float32``."""
        try:
            return _BY_NP[self._a.dtype]
        except KeyError:          # NOTE: never for a tensor newch made; names the dtypes if so
            return D.from_numpy_dtype(self._a.dtype)

    @property
    def ndim(self):
        """The number of dimensions."""
        return self._a.ndim

    @property
    def device(self):
        """Where the tensor lives: always ``newch.device("cpu")``."""
        return CPU

    @property
    def is_cuda(self):
        """Always False: newch has no CUDA device."""
        return False

    @property
    def is_cpu(self):
        """Always True."""
        return True

    @property
    def is_persistent(self):
        """True for parameters, buffers and tensors made inside ``persistent()``."""
        return self._s.views is not None

    @property
    def is_alive(self):
        """False once the memory behind this tensor was freed (step_end() or release())."""
        return self._s.gen.alive

    def dim(self):
        """The number of dimensions (``ndim``)."""
        return self._a.ndim

    def size(self, dim=None):
        """The shape, or the size of dimension ``dim``."""
        if dim is None:
            return Size(self._a.shape)
        return self._a.shape[UPPER.norm_dim("size", dim, self._a.ndim)]

    def numel(self):
        """The number of elements."""
        return self._a.size

    nelement = numel

    def element_size(self):
        """Bytes per element."""
        return self._a.itemsize

    @property
    def itemsize(self):
        """Bytes per element (``element_size()``)."""
        return self._a.itemsize

    @property
    def nbytes(self):
        """Bytes of the elements: ``numel() * element_size()``."""
        return self._a.size * self._a.itemsize

    def ndimension(self):
        """The number of dimensions (``dim()``)."""
        return self._a.ndim

    def is_floating_point(self):
        """True for float32 and float64 tensors."""
        return self.dtype.is_floating_point

    def is_complex(self):
        """Always False: newch has no complex dtypes."""
        return False

    def stride(self, dim=None):
        """Steps in elements between neighbours along each dimension (one dim's with ``dim``).

        Example:
            >>> newch.zeros(2, 3).stride(), newch.zeros(2, 3).t().stride(0)
            ((3, 1), 1)
        """
        a = self._a
        st = tuple(s // a.itemsize for s in a.strides)
        return st if dim is None else st[UPPER.norm_dim("stride", dim, a.ndim)]

    def is_contiguous(self, memory_format=None):
        """True when the elements lie in row-major order with no gaps (what ``contiguous()``
        returns as is). Only the default ``torch.contiguous_format`` is known to newch.

        Example:
            >>> x = newch.zeros(2, 3); x.is_contiguous(), x.t().is_contiguous()
            (True, False)
        """
        if memory_format is not None and str(memory_format) != "torch.contiguous_format":
            raise ValueError(f"is_contiguous: newch tensors have one memory format "
                             f"(torch.contiguous_format), got {memory_format}")
        return bool(self._a.flags.c_contiguous)

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._a.shape[0]

    # -- autograd bookkeeping ------------------------------------------------
    @property
    def requires_grad(self):
        """Whether autograd records operations on this tensor."""
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        """Set whether autograd records operations on this (leaf) tensor; returns self."""
        if self._node is not None and not requires_grad:
            raise RuntimeError("requires_grad_: you can only change requires_grad of leaf tensors; "
                               "use .detach() to get a tensor that does not require grad")
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(f"requires_grad_: only floating point tensors can require "
                               f"gradients, got {self.dtype}")
        self._rg = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        """True for tensors not made by a recorded op (inputs, parameters)."""
        return self._node is None

    @property
    def grad_fn(self):
        """The graph node that made this tensor (None for a leaf)."""
        return self._node

    @property
    def grad(self):
        """The gradient accumulated by ``backward()`` (None until then)."""
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"grad: expected a Tensor or None, got {type(value).__name__}")
            if value._a.shape != self._a.shape:
                raise ValueError(f"grad: assigned grad of shape {tuple(value.shape)} to a tensor "
                                 f"of shape {tuple(self.shape)}")
        self._grad = value

    def retain_grad(self):
        """Keep ``.grad`` of this non-leaf tensor after backward."""
        if self._node is None:
            return
        if not self._rg:
            raise RuntimeError("retain_grad: can't retain_grad on a tensor that has requires_grad=False")
        self._node.retain = weakref.ref(self)
        self._retain = True

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor w.r.t. the graph's leaves into their ``.grad``."""
        UPPER.backward(self, gradient, retain_graph, create_graph, inputs)

    @property
    def retains_grad(self):
        """True after ``retain_grad()`` on a non-leaf tensor."""
        return self._retain

    @property
    def data(self):
        """A tensor sharing this one's memory, detached from the graph.

        Inside ``persistent()``, ``.data`` of a temporary is a persistent copy.
        """
        return UPPER.view_of(self, self._a)

    @data.setter
    def data(self, other):
        """Point this tensor at ``other``'s memory (shape and dtype may change).

        A persistent tensor stays persistent: a temporary ``other`` is copied in,
        so sharing with ``other`` is lost (``w.data = w.data - lr * w.grad``
        keeps ``w`` alive across ``step_end()``).
        """
        if not isinstance(other, Tensor):
            raise TypeError(f"data: expected a Tensor, got {type(other).__name__}")
        other._data("data")
        if self._s.views is not None and other._s.views is None:
            other = _persistent_clone(other)
        _rebind(self, other._a, other._s)

    # -- pickle and copy ------------------------------------------------------
    def __reduce__(self):
        """Pickle the values only (a copy: dtype, shape, requires_grad), never the arena."""
        a = self._data("pickle")
        return (_rebuild, (type(self), a.copy(), self._rg))

    def __deepcopy__(self, memo):
        """A persistent copy of the values (and of ``.grad``), as pickling would make."""
        if id(self) in memo:
            return memo[id(self)]
        if self._node is not None:
            raise RuntimeError("deepcopy: only tensors created explicitly by the user (graph "
                               "leaves) support deepcopy; deepcopy x.detach() instead")
        new = _rebuild(type(self), self._data("deepcopy"), self._rg)
        memo[id(self)] = new
        if self._grad is not None and self._grad.is_alive:
            new._grad = self._grad.__deepcopy__(memo)
        return new

    def __copy__(self):
        """A new tensor sharing this one's memory (as ``copy.copy`` of a torch tensor does)."""
        self._data("copy")
        t = UPPER.view_of(self, self._a)
        if type(self) is not Tensor:
            t = Tensor._make(t._a, t._s, cls=type(self))
        t._rg = self._rg
        return t

    # -- reading values ------------------------------------------------------
    def _data(self, op):
        """The numpy array behind this tensor, after checking it is alive (``NcError`` naming
        ``op`` if not). The one way code above ``ops/`` reads or writes a tensor's memory."""
        if not self._s.gen.alive:
            raise UPPER.stale(self, op)
        return self._a

    # NOTE: the internal API of code above ops/ (net/, optim/, autograd/, serialization/, train/,
    # data/): with _data above and the public properties (grad, grad_fn, is_leaf, requires_grad,
    # is_alive, is_persistent), these are all it touches of a Tensor; only tensor.py and ops/ read
    # the slots. tests/structure/test_private_slots.py holds the line.
    def _bump_version(self):
        """Record an in-place write made through ``_data`` (saved tensors of the old values then
        fail backward); for optim/ and net/ code that updates a tensor's memory itself."""
        self._s.version += 1

    @property
    def _storage(self):
        """The Storage holding this tensor's bytes, shared with its views; for serialization/,
        which writes shared memory once."""
        return self._s

    def _alias(self, cls=None):
        """A new leaf tensor (of class ``cls``, default Tensor) over this tensor's memory, cut from
        the graph; for net/parameter.py. Reads nothing, so checks nothing."""
        return Tensor._make(self._a, self._s, cls=cls)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        a = self._data("item")
        if a.size != 1:
            raise ValueError(f"item: a Tensor with {a.size} elements cannot be converted to a scalar")
        return a.reshape(()).item()

    def tolist(self):
        """The values as (nested) Python lists of numbers."""
        return self._data("tolist").tolist()

    def numpy(self, *, force=False):
        """A numpy array: a copy for a temporary, a view for a persistent tensor."""
        a = self._data("numpy")
        if self._rg and not force:
            raise RuntimeError("numpy: can't call numpy() on a tensor that requires grad; "
                               "use tensor.detach().numpy()")
        return a if self._s.views is not None and not force else a.copy()

    def __array__(self, dtype=None, copy=None):
        a = self._data("__array__").copy()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return tensor_repr(self)

    __str__ = __repr__

    def __bool__(self):
        a = self._data("__bool__")
        if a.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {a.size} values is ambiguous")
        return bool(a.reshape(()).item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._a.shape[0]))

    def cpu(self, memory_format=None):
        """This tensor (it is on the CPU already); inside ``persistent()`` a persistent copy."""
        return UPPER.own(self)

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """Always an error: newch has no CUDA device."""
        check_device("cuda", device if device is not None else "cuda")

    def __format__(self, spec):
        if self._a.ndim == 0:
            return format(self.item(), spec)
        return repr(self)


def release(*tensors):
    """Free the memory of ``tensors`` now; they (and every view of them) become unusable.

    Persistent tensors give their bytes back at once; temporaries return them to
    the arena for reuse within the step.

    Example:
        >>> with newch.persistent():
        ...     big = newch.zeros(1000)
        >>> newch.release(big)
    """
    from numpy.lib.stride_tricks import as_strided
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"release: expected Tensors, got {type(t).__name__}")
        st = t._s
        if not st.gen.alive:
            continue
        if st.views is not None:
            # NOTE: drop every view's array so the bytes really go back to the OS;
            # a zero-stride stand-in keeps shape and dtype readable.
            for v in list(st.views):
                v._a = as_strided(np.zeros(1, v._a.dtype), v._a.shape, (0,) * v._a.ndim)
        st.release()


def _rebind(t, array, storage):
    """Make ``t`` view ``array`` in ``storage``, leaving its old storage's view set."""
    old = t._s
    if old.views is not None and old is not storage:
        # NOTE: WeakSet.discard would compare tensors with == (elementwise); rebuild instead.
        old.views = weakref.WeakSet(v for v in old.views if v is not t)
    t._a, t._s = array, storage
    if storage.views is not None:
        storage.views.add(t)


def _persistent_clone(t):
    """A persistent copy of ``t``'s values, cut from the graph."""
    return UPPER.persistent_copy_of(t._data("data"), t.dtype)


def _rebuild(cls, array, requires_grad):
    """Unpickling and deepcopy: a persistent tensor (of class ``cls``) holding ``array``'s values."""
    D.from_numpy_dtype(array.dtype)       # refuses dtypes newch does not have
    st = default_context().pool.alloc(array.nbytes)
    a = st.buf[:array.nbytes].view(array.dtype).reshape(array.shape)
    a[...] = array
    t = Tensor._make(a, st, cls=cls)
    t._rg = bool(requires_grad)
    return t
