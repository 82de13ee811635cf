"""``einsum`` (one- and two-operand forms, lowered to permute / sum / bmm) and ``baddbmm``.

``...`` stands for the dims no letter names; they broadcast between operands as in numpy:
each is given a free letter (right-aligned across operands), and an operand whose such dim has
size 1 where another's is larger drops it, so the product broadcasts along it.
"""
import string

from .alloc import check_tensor
from .matrix import bmm
from .reduce import sum as _sum

__all__ = ["baddbmm", "einsum"]
TENSOR_METHODS = ["baddbmm"]   # also bound as Tensor methods (ops/methods.py)


def _parse(equation, n):
    eq = equation.replace(" ", "")
    if "." in eq:
        raise ValueError(f"einsum: '.' may only appear as '...', once per term, got {equation!r}")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != n:
        raise ValueError(f"einsum: the equation names {len(ins)} operands but {n} were given")
    if not arrow:
        letters = "".join(ins)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for s in ins + [out]:
        if not all(c.isalpha() for c in s):
            raise ValueError(f"einsum: subscripts must be letters, got {equation!r}")
        if len(set(s)) != len(s):
            raise NotImplementedError(f"einsum: a letter repeated within one term ({s!r}, a "
                                      f"diagonal) is not supported")
    if set(out) - set("".join(ins)):
        raise ValueError(f"einsum: output subscript {out!r} names a letter no operand has")
    return ins, out


def _ellipsis(equation, operands):
    """(equation, operands) with every '...' replaced by letters and broadcast dims squeezed."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if "..." not in eq or len(ins) != len(operands):
        return eq, operands       # NOTE: _parse reports a wrong operand count
    counts = []
    for sub, t in zip(ins, operands):
        if sub.count("...") > 1 or "." in sub.replace("...", ""):
            raise ValueError(f"einsum: '.' may only appear as '...', once per term, got {equation!r}")
        named = len(sub) - 3 if "..." in sub else len(sub)
        if t.ndim < named:
            raise RuntimeError(f"einsum: operand with subscripts {sub!r} has {t.ndim} dims, "
                               f"expected at least {named}")
        counts.append(t.ndim - named if "..." in sub else 0)
    free = [c for c in string.ascii_letters if c not in eq]
    letters = free[:max(counts)]
    size = {}
    for sub, t, e in zip(ins, operands, counts):
        p = sub.find("...")
        for k, c in enumerate(letters[len(letters) - e:]):
            size[c] = max(size.get(c, 1), t.shape[p + k])
    if not arrow:
        plain = "".join(s.replace("...", "") for s in ins)
        out = "".join(letters) + "".join(sorted(c for c in set(plain) if plain.count(c) == 1))
    elif out.count("...") > 1 or "." in out.replace("...", ""):
        raise ValueError(f"einsum: '.' may only appear as '...', once in the output, got {equation!r}")
    else:
        out = out.replace("...", "".join(letters))
    new_ins, new_ops = [], []
    for sub, t, e in zip(ins, operands, counts):
        if "..." in sub:
            p = sub.find("...")
            mine = letters[len(letters) - e:]
            drop = [k for k, c in enumerate(mine) if t.shape[p + k] == 1 and size[c] > 1]
            for k in reversed(drop):
                t = t.squeeze(p + k)
            sub = sub.replace("...", "".join(c for k, c in enumerate(mine) if k not in drop))
        new_ins.append(sub)
        new_ops.append(t)
    return ",".join(new_ins) + "->" + out, tuple(new_ops)


def _reduce_only(x, sub, keep):
    """Sum ``x`` over the letters of ``sub`` not in ``keep``; returns (tensor, remaining letters)."""
    dims = [i for i, c in enumerate(sub) if c not in keep]
    if not dims:
        return x, sub
    return _sum(x, dims), "".join(c for c in sub if c in keep)


def _permute_to(x, sub, order):
    perm = [sub.index(c) for c in order]
    return x.permute(perm) if perm != list(range(len(perm))) else x


def einsum(equation, *operands):
    """Sums of products named by subscripts, as ``numpy.einsum``: ``einsum("bij,bjk->bik", a, b)``.

    One or two operands; letters, and '...' for unnamed dims (broadcast as in numpy); no
    repeated letter within one term.

    Example:
        >>> einsum("ij,jk->ik", newch.ones(2, 3), newch.ones(3, 2)).tolist()
        [[3.0, 3.0], [3.0, 3.0]]
        >>> einsum("...ij,...jk", newch.ones(5, 2, 3), newch.ones(3, 2)).shape
        newch.Size([5, 2, 2])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if len(operands) not in (1, 2):
        raise NotImplementedError(f"einsum: {len(operands)} operands; only 1 or 2 are supported")
    for i, t in enumerate(operands):
        check_tensor("einsum", t, f"operand {i}")
    equation, operands = _ellipsis(equation, operands)
    ins, out = _parse(equation, len(operands))
    sizes = {}
    for t, sub in zip(operands, ins):
        if t.ndim != len(sub):
            raise RuntimeError(f"einsum: operand with subscripts {sub!r} has {t.ndim} dims, "
                               f"expected {len(sub)}")
        for c, s in zip(sub, t.shape):
            if sizes.setdefault(c, s) != s:
                raise RuntimeError(f"einsum: subscript {c!r} has size {sizes[c]} and {s} in "
                                   f"different operands")
    if len(operands) == 1:
        x, sub = _reduce_only(operands[0], ins[0], out)
        return _permute_to(x, sub, out)
    (a, sa), (b, sb) = (_reduce_only(t, s, out + other)
                        for t, s, other in ((operands[0], ins[0], ins[1]), (operands[1], ins[1], ins[0])))
    batch = [c for c in out if c in sa and c in sb]
    contract = [c for c in sa if c in sb and c not in out]
    left = [c for c in sa if c not in sb]
    right = [c for c in sb if c not in sa]

    def prod(cs):
        p = 1
        for c in cs:
            p *= sizes[c]
        return p
    a3 = _permute_to(a, sa, batch + left + contract).reshape(prod(batch), prod(left), prod(contract))
    b3 = _permute_to(b, sb, batch + contract + right).reshape(prod(batch), prod(contract), prod(right))
    r = bmm(a3, b3).reshape([sizes[c] for c in batch + left + right])
    return _permute_to(r, "".join(batch + left + right), out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices; ``input`` broadcasts.

    Example:
        >>> baddbmm(newch.zeros(1, 2, 2), newch.ones(1, 2, 3), newch.ones(1, 3, 2)).tolist()
        [[[3.0, 3.0], [3.0, 3.0]]]
    """
    for name, t in (("input", input), ("batch1", batch1), ("batch2", batch2)):
        check_tensor("baddbmm", t, name)
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"baddbmm: batch1 and batch2 must be 3-D tensors, got {batch1.ndim}-D and "
                           f"{batch2.ndim}-D")
    prod = bmm(batch1, batch2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return prod + (input if beta == 1 else input * beta)
