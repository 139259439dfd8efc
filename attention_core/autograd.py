"""A small reverse-mode automatic differentiation for NumPy arrays: enough to train a Transformer, short enough
to read in one sitting.

A `Tensor` holds an array (`.data`) and, after `backward()`, the gradient of one scalar with respect to it
(`.grad`, same shape). Every operation on tensors makes a new tensor that remembers its inputs and a small
function that, given the gradient of its output, adds each input's share to that input's `.grad` — the chain
rule for that one operation. `loss.backward()` visits the tensors from `loss` back to the leaves in reverse
order of creation (a topological order) and calls those functions, so each gradient is complete before it is
passed on.

    from attention_core.autograd import Tensor
    w = Tensor(np.ones((3, 2)), requires_grad=True)
    x = Tensor(np.arange(6.0).reshape(2, 3))
    loss = (x @ w).relu().sum()
    loss.backward()
    w.grad                      # d loss / d w, shape (3, 2)

The operations (each tested against finite differences in tests/course/test_autograd.py): + − × ÷ and powers
with NumPy's broadcasting (a broadcast input gets the sum of its gradient over the broadcast axes), `@`
(batched, as `np.matmul`), `sum`, `mean`, `max` (the gradient goes to the largest entry), `exp`, `log`,
`sqrt`, `tanh`, `relu`, `gelu`, `reshape`, `transpose`, indexing (`t[ids]`, `t[:, 3]`, `t[rows, cols]`: the
gradient is scattered back, repeated indices added up), `masked_fill`, and three composite operations whose
backward is written out because it is short and stable: `softmax`, `log_softmax` and `cross_entropy`.

Arrays keep their dtype: float32 trains at half the memory traffic, float64 is for gradient checks. Only
floating-point tensors take part in differentiation; integer arrays (token ids) are indices, never tensors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .activations import GELU_TANH_COEFF, SQRT_2_OVER_PI

ArrayLike = Any


def _unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum `grad` over the axes that broadcasting added or stretched, so it has `shape` again."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


class Tensor:
    """An array that remembers how it was computed, so that gradients can flow back through it."""

    __array_priority__ = 100  # `ndarray + Tensor` calls Tensor.__radd__ instead of broadcasting over a Tensor

    def __init__(self, data: ArrayLike, requires_grad: bool = False, *, dtype: Any = None) -> None:
        array = np.asarray(data, dtype=dtype)
        if not np.issubdtype(array.dtype, np.floating):
            array = array.astype(np.float64 if dtype is None else dtype)
        self.data: np.ndarray = array
        self.grad: np.ndarray | None = None
        self.requires_grad = requires_grad
        self._parents: tuple[Tensor, ...] = ()
        self._backward: Callable[[np.ndarray], None] | None = None
        self.op = ""  # the operation that made it ("" for a leaf): shown by repr, useful when debugging

    # ---------------------------------------------------------------------------------------------- basics

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def T(self) -> Tensor:  # noqa: N802 - NumPy's name
        return self.transpose()

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        made = f", op={self.op!r}" if self.op else ""
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor(shape={self.shape}, dtype={self.dtype}{made}{grad})"

    def numpy(self) -> np.ndarray:
        """The values (the array itself, not a copy)."""
        return self.data

    def item(self) -> float:
        """The value of a one-element tensor as a Python float."""
        return float(self.data.reshape(-1)[0]) if self.data.size == 1 else float(self.data)

    def detach(self) -> Tensor:
        """The same values, cut off from the graph (no gradient flows through it)."""
        return Tensor(self.data)

    def zero_grad(self) -> None:
        self.grad = None

    def _wrap(self, other: ArrayLike) -> Tensor:
        if isinstance(other, Tensor):
            return other
        return Tensor(np.asarray(other, dtype=self.dtype))

    def _make(self, data: np.ndarray, parents: tuple[Tensor, ...], backward, op: str) -> Tensor:
        """The result of an operation: differentiable when any input is."""
        out = Tensor(data)
        if any(p.requires_grad for p in parents):
            out.requires_grad = True
            out._parents = parents
            out._backward = backward
            out.op = op
        return out

    def _add_grad(self, g: np.ndarray) -> None:
        if not self.requires_grad:
            return
        g = g.astype(self.dtype, copy=False)
        if self.grad is None:
            self.grad = g.copy() if g.shape == self.shape else np.broadcast_to(g, self.shape).copy()
        else:
            self.grad += g

    # ---------------------------------------------------------------------------------------------- backward

    def backward(self, grad: ArrayLike | None = None) -> None:
        """Fill `.grad` of every tensor this one depends on with d(self)/d(that tensor).

        `self` is usually a scalar loss (its own gradient is then 1); otherwise pass `grad`, the gradient of
        some scalar with respect to `self`. Gradients add up: call `zero_grad()` (or an optimiser's) between
        steps.
        """
        if not self.requires_grad:
            raise RuntimeError("this tensor does not depend on any tensor with requires_grad=True")
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError(f"backward() without a gradient needs a scalar, this tensor has shape {self.shape}")
            grad = np.ones_like(self.data)
        order: list[Tensor] = []
        seen: set[int] = set()
        stack: list[tuple[Tensor, bool]] = [(self, False)]
        while stack:  # depth-first, without recursion: a long chain of operations must not hit Python's limit
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((p, False) for p in node._parents if p.requires_grad and id(p) not in seen)
        grads: dict[int, np.ndarray] = {id(self): np.asarray(grad, dtype=self.dtype)}
        for node in reversed(order):
            g = grads.pop(id(node), None)
            if g is None:
                continue
            if node._backward is None:  # a leaf: keep its gradient
                node._add_grad(g)
                continue
            for parent, pg in node._backward(g):
                if not parent.requires_grad:
                    continue
                pg = np.asarray(pg)
                key = id(parent)
                grads[key] = pg.astype(parent.dtype, copy=True) if key not in grads else grads[key] + pg

    # ---------------------------------------------------------------------------------------------- arithmetic

    def __add__(self, other: ArrayLike) -> Tensor:
        o = self._wrap(other)
        return self._make(
            self.data + o.data,
            (self, o),
            lambda g: ((self, _unbroadcast(g, self.shape)), (o, _unbroadcast(g, o.shape))),
            "+",
        )

    __radd__ = __add__

    def __neg__(self) -> Tensor:
        return self._make(-self.data, (self,), lambda g: ((self, -g),), "neg")

    def __sub__(self, other: ArrayLike) -> Tensor:
        o = self._wrap(other)
        return self._make(
            self.data - o.data,
            (self, o),
            lambda g: ((self, _unbroadcast(g, self.shape)), (o, _unbroadcast(-g, o.shape))),
            "-",
        )

    def __rsub__(self, other: ArrayLike) -> Tensor:
        return self._wrap(other) - self

    def __mul__(self, other: ArrayLike) -> Tensor:
        o = self._wrap(other)
        return self._make(
            self.data * o.data,
            (self, o),
            lambda g: ((self, _unbroadcast(g * o.data, self.shape)), (o, _unbroadcast(g * self.data, o.shape))),
            "*",
        )

    __rmul__ = __mul__

    def __truediv__(self, other: ArrayLike) -> Tensor:
        o = self._wrap(other)
        return self._make(
            self.data / o.data,
            (self, o),
            lambda g: (
                (self, _unbroadcast(g / o.data, self.shape)),
                (o, _unbroadcast(-g * self.data / (o.data * o.data), o.shape)),
            ),
            "/",
        )

    def __rtruediv__(self, other: ArrayLike) -> Tensor:
        return self._wrap(other) / self

    def __pow__(self, exponent: float) -> Tensor:
        """A power with a constant exponent: d(x^p) = p·x^(p−1)."""
        if isinstance(exponent, Tensor):
            raise TypeError("only constant exponents are supported: x ** 2, x ** 0.5")
        p = float(exponent)
        return self._make(
            self.data**p,
            (self,),
            lambda g: ((self, g * p * self.data ** (p - 1)),),
            f"**{exponent}",
        )

    def __matmul__(self, other: ArrayLike) -> Tensor:
        """Matrix product with np.matmul's rules (stacks of matrices, a 1-D side as a vector)."""
        o = self._wrap(other)
        a, b = self.data, o.data

        def backward(g: np.ndarray):
            if a.ndim > 2 and b.ndim == 2:  # rows of a stack times one matrix (x @ W): one product per gradient,
                rows = a.reshape(-1, a.shape[-1])  # not one per stacked matrix and a sum (4× faster without BLAS)
                da = g @ b.T
                db = rows.T @ g.reshape(-1, g.shape[-1])
                return (self, da), (o, db)
            a2 = a[None, :] if a.ndim == 1 else a  # a vector is a 1 × n matrix …
            b2 = b[:, None] if b.ndim == 1 else b  # … or an n × 1 one
            g2 = g  # put back the axes matmul dropped: b's column first, so that vector · vector (g a scalar) works
            if b.ndim == 1:
                g2 = np.expand_dims(g2, -1)
            if a.ndim == 1:
                g2 = np.expand_dims(g2, -2)
            da = g2 @ np.swapaxes(b2, -1, -2)  # out = a·b: da = g·bᵀ, db = aᵀ·g
            db = np.swapaxes(a2, -1, -2) @ g2
            if a.ndim == 1:
                da = da.squeeze(-2)
            if b.ndim == 1:
                db = db.squeeze(-1)
            return (self, _unbroadcast(da, a.shape)), (o, _unbroadcast(db, b.shape))

        return self._make(a @ b, (self, o), backward, "@")

    def __rmatmul__(self, other: ArrayLike) -> Tensor:
        return self._wrap(other) @ self

    # ---------------------------------------------------------------------------------------------- reductions

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        def backward(g: np.ndarray):
            if not keepdims and axis is not None:  # put the summed axes back as size 1, then broadcast
                g = np.expand_dims(g, axis)
            return ((self, np.broadcast_to(g, self.shape)),)

        return self._make(self.data.sum(axis=axis, keepdims=keepdims), (self,), backward, "sum")

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        axes = range(self.ndim) if axis is None else np.atleast_1d(axis)
        total = math.prod(self.shape[a] for a in axes)  # how many entries each mean averages
        return self.sum(axis=axis, keepdims=keepdims) * (1.0 / total)

    def max(self, axis: int | None = None, keepdims: bool = False) -> Tensor:
        """The largest entry; the gradient goes to it (shared equally when several are the largest)."""
        out = self.data.max(axis=axis, keepdims=True)

        def backward(g: np.ndarray):
            hit = (self.data == out).astype(self.dtype)
            hit /= hit.sum(axis=axis, keepdims=True)
            if not keepdims and axis is not None:
                g = np.expand_dims(g, axis)
            return ((self, hit * g),)

        value = out if keepdims else (out.squeeze(axis) if axis is not None else out.reshape(()))
        return self._make(value, (self,), backward, "max")

    # ---------------------------------------------------------------------------------------------- elementwise

    def exp(self) -> Tensor:
        y = np.exp(self.data)
        return self._make(y, (self,), lambda g: ((self, g * y),), "exp")

    def log(self) -> Tensor:
        return self._make(np.log(self.data), (self,), lambda g: ((self, g / self.data),), "log")

    def sqrt(self) -> Tensor:
        y = np.sqrt(self.data)
        return self._make(y, (self,), lambda g: ((self, g * 0.5 / y),), "sqrt")

    def tanh(self) -> Tensor:
        y = np.tanh(self.data)
        return self._make(y, (self,), lambda g: ((self, g * (1 - y * y)),), "tanh")

    def relu(self) -> Tensor:
        on = self.data > 0
        return self._make(self.data * on, (self,), lambda g: ((self, g * on),), "relu")

    def gelu(self) -> Tensor:
        """GELU in its tanh form, ½x(1 + tanh(√(2/π)(x + 0.044715x³))), as activations.gelu_tanh."""
        x = self.data
        c, k = x.dtype.type(GELU_TANH_COEFF), x.dtype.type(SQRT_2_OVER_PI)
        t = np.tanh(x * (x * x * c + 1) * k)

        def backward(g: np.ndarray):
            return ((self, g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x))),)

        return self._make(0.5 * x * (1 + t), (self,), backward, "gelu")

    # ---------------------------------------------------------------------------------------------- shapes

    def reshape(self, *shape: int | tuple[int, ...]) -> Tensor:
        new = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape
        return self._make(self.data.reshape(new), (self,), lambda g: ((self, g.reshape(self.shape)),), "reshape")

    def transpose(self, *axes: int) -> Tensor:
        """Axes reordered (`np.transpose`: as arguments or one tuple, negative ones counting from the end); without
        axes, the last two are swapped — a matrix's transpose."""
        if len(axes) == 1 and isinstance(axes[0], tuple | list):
            axes = tuple(axes[0])
        if not axes:
            axes = (*range(self.ndim - 2), self.ndim - 1, self.ndim - 2) if self.ndim >= 2 else (0,)
        out = self.data.transpose(axes)  # checks the axes
        back = tuple(np.argsort([a % self.ndim for a in axes]))  # the inverse permutation, of the axes as numbers ≥ 0
        return self._make(out, (self,), lambda g: ((self, g.transpose(back)),), "transpose")

    def __getitem__(self, index: Any) -> Tensor:
        """Indexing as NumPy does it; the gradient is added back where each value came from (an index used
        twice, e.g. the same token twice in an embedding lookup, gets both shares)."""
        index = index.data if isinstance(index, Tensor) else index

        def backward(g: np.ndarray):
            full = np.zeros_like(self.data)
            np.add.at(full, index, g)
            return ((self, full),)

        return self._make(self.data[index], (self,), backward, "index")

    def masked_fill(self, mask: ArrayLike, value: float) -> Tensor:
        """`value` where `mask` is true (broadcast), the tensor's own entries elsewhere; no gradient flows
        into the filled places. With value = −inf before a softmax, those places get weight 0."""
        m = np.asarray(mask, dtype=bool)
        filled = np.where(m, self.dtype.type(value), self.data)
        return self._make(filled, (self,), lambda g: ((self, np.where(m, 0, g)),), "masked_fill")

    # ---------------------------------------------------------------------------------------------- softmax family

    def softmax(self, axis: int = -1) -> Tensor:
        """exp(x − max) / Σ exp(x − max) along `axis`. Backward, with y the output and g the gradient of y:
        dx = y ⊙ (g − Σ g ⊙ y), the sum along `axis` (the Jacobian diag(y) − y yᵀ applied to g)."""
        shifted = self.data - self.data.max(axis=axis, keepdims=True)
        e = np.exp(shifted)
        y = e / e.sum(axis=axis, keepdims=True)
        return self._make(y, (self,), lambda g: ((self, y * (g - (g * y).sum(axis=axis, keepdims=True))),), "softmax")

    def log_softmax(self, axis: int = -1) -> Tensor:
        """x − log Σ exp(x) along `axis`, computed without overflow. Backward: dx = g − softmax(x) · Σ g."""
        shifted = self.data - self.data.max(axis=axis, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
        out = shifted - lse
        return self._make(
            out,
            (self,),
            lambda g: ((self, g - np.exp(out) * g.sum(axis=axis, keepdims=True)),),
            "log_softmax",
        )


def cross_entropy(logits: Tensor, targets: ArrayLike) -> Tensor:
    """Mean of −log softmax(logits)[target] over every position: logits (..., V), targets (...) integer ids.

    Backward: d logits = (softmax(logits) − one_hot(target)) / n — the short form the chain rule gives for
    log_softmax followed by picking one entry and averaging."""
    t = np.asarray(targets)
    if not np.issubdtype(t.dtype, np.integer):
        raise TypeError(f"targets must be integer ids, got dtype {t.dtype}")
    if t.shape != logits.shape[:-1]:
        raise ValueError(f"targets have shape {t.shape}, logits {logits.shape}: expected {logits.shape[:-1]}")
    flat = logits.data.reshape(-1, logits.shape[-1])
    ids = t.reshape(-1)
    if ids.size and (ids.min() < 0 or ids.max() >= flat.shape[1]):
        raise ValueError(f"targets must lie in 0 … {flat.shape[1] - 1}")
    shifted = flat - flat.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(ids))
    n = max(len(ids), 1)
    value = -logp[rows, ids].sum() / n

    def backward(g: np.ndarray):
        d = np.exp(logp)
        d[rows, ids] -= 1
        return ((logits, (d * (g / n)).reshape(logits.shape)),)

    return logits._make(np.asarray(value, dtype=logits.dtype), (logits,), backward, "cross_entropy")


def parameters_of(obj: Any) -> list[Tensor]:
    """Every tensor with requires_grad=True inside a tensor, dict, list or tuple (in order, each once)."""
    found: list[Tensor] = []
    seen: set[int] = set()

    def visit(x: Any) -> None:
        if isinstance(x, Tensor):
            if x.requires_grad and id(x) not in seen:
                seen.add(id(x))
                found.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                visit(v)
        elif isinstance(x, list | tuple):
            for v in x:
                visit(v)

    visit(obj)
    return found


def numerical_gradient(f: Callable[[], float], array: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d f / d array by central differences, (f(a + ε) − f(a − ε)) / 2ε one entry at a time (`array` is changed
    in place and restored). Slow and approximate — which is why backward exists — but independent of it."""
    grad = np.zeros(array.shape, dtype=np.float64)
    for i in np.ndindex(array.shape):  # through `array`'s own index: reshape(-1) of a non-contiguous array is a copy
        keep = array[i]
        array[i] = keep + eps
        up = f()
        array[i] = keep - eps
        down = f()
        array[i] = keep
        grad[i] = (up - down) / (2 * eps)
    return grad


def gradient_check(f: Callable[[], Tensor], inputs: Iterable[Tensor], eps: float = 1e-6) -> float:
    """The largest relative difference between backward's gradients and central differences, over `inputs`
    (float64 tensors with requires_grad=True; `f` builds the scalar from them). Below 1e-6 means they agree."""
    inputs = list(inputs)
    for t in inputs:
        t.zero_grad()
    f().backward()
    worst = 0.0
    for t in inputs:
        analytic = np.zeros_like(t.data) if t.grad is None else t.grad
        numeric = numerical_gradient(lambda: f().item(), t.data, eps)
        scale = np.maximum(1.0, np.abs(analytic) + np.abs(numeric))
        worst = max(worst, float(np.max(np.abs(analytic - numeric) / scale)))
    return worst


__all__ = ["Tensor", "cross_entropy", "gradient_check", "numerical_gradient", "parameters_of"]
