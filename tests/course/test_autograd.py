"""The course's small autograd (attention_core/autograd.py), the Transformer made of its operations
(attention_core/mini_gpt.py) and the training helpers (attention_core/training.py).

Every gradient is compared with central finite differences in float64. The reference is `central_difference`
below, written independently of the module's own `numerical_gradient` (which gets tests of its own), so the code
under test is never its own judge. Each operation's output is reduced with a fixed random weighting
(`out.backward(w)`, numerically Σ out · w), so every output entry's gradient counts and no other operation of the
module is involved in the check.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import numpy as np
import pytest

from attention_core import mini_gpt, tiny_gpt, training
from attention_core.activations import gelu_tanh
from attention_core.autograd import Tensor, cross_entropy, gradient_check, numerical_gradient, parameters_of

# --------------------------------------------------------------------------- the independent reference


def central_difference(f: Callable[[], float], array: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """(f(a + ε) − f(a − ε)) / 2ε for every entry of `array`, perturbed in place through its own index (works for
    any memory layout); the array is restored afterwards."""
    grad = np.zeros(array.shape, dtype=np.float64)
    for idx in np.ndindex(array.shape):
        keep = array[idx]
        array[idx] = keep + eps
        up = f()
        array[idx] = keep - eps
        down = f()
        array[idx] = keep
        grad[idx] = (up - down) / (2 * eps)
    return grad


def assert_grad_close(analytic: np.ndarray | None, numeric: np.ndarray, *, rtol: float = 1e-6, atol: float = 1e-8):
    assert analytic is not None, "backward left no gradient"
    assert analytic.shape == numeric.shape
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol)


def check_op(fn: Callable[..., Tensor], *arrays: np.ndarray, seed: int = 0, rtol: float = 1e-6) -> list[Tensor]:
    """Backward of `fn(*tensors)` against central differences for every input; returns the input tensors."""
    tensors = [Tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = fn(*tensors)
    assert isinstance(out, Tensor)
    weight = np.random.default_rng(seed + 1000).standard_normal(out.shape)
    out.backward(weight)

    def value() -> float:
        return float(np.sum(fn(*tensors).data * weight))

    for t in tensors:
        assert t.grad is not None and t.grad.shape == t.shape and t.grad.dtype == np.float64
        assert_grad_close(t.grad, central_difference(value, t.data), rtol=rtol)
    return tensors


def rand(*shape: int, seed: int = 0, low: float | None = None, high: float | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, high, shape)
    return rng.standard_normal(shape)


# --------------------------------------------------------------------------- arithmetic with broadcasting

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}
BROADCAST_SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 3, 4)),
    ((), (3, 2)),
    ((3, 2), ()),
    ((2, 1, 4), (3, 1)),
    ((1,), (2, 3)),
]


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shape_a, shape_b", BROADCAST_SHAPES)
def test_arithmetic_with_broadcasting_matches_finite_differences(op, shape_a, shape_b):
    a = rand(*shape_a, seed=1)
    b = rand(*shape_b, seed=2, low=0.5, high=2.0) if op == "div" else rand(*shape_b, seed=2)
    ta, tb = check_op(BINARY[op], a, b)
    np.testing.assert_array_equal(BINARY[op](ta, tb).data, BINARY[op](a, b))


REVERSE_AND_CONSTANT = {
    "t + 2": lambda t: t + 2.0,
    "2 + t": lambda t: 2.0 + t,
    "t - 2": lambda t: t - 2.0,
    "2 - t": lambda t: 2.0 - t,
    "2 * t": lambda t: 2.0 * t,
    "t / 2": lambda t: t / 2.0,
    "2 / t": lambda t: 2.0 / t,
    "-t": lambda t: -t,
    "ndarray + t": lambda t: np.arange(1.0, 5.0) + t,
    "ndarray - t": lambda t: np.arange(1.0, 5.0) - t,
    "ndarray * t": lambda t: np.arange(1.0, 5.0) * t,
    "ndarray / t": lambda t: np.arange(1.0, 5.0) / t,
    "ndarray @ t": lambda t: np.arange(1.0, 7.0).reshape(2, 3) @ t,
    "t @ ndarray": lambda t: t @ np.arange(1.0, 9.0).reshape(4, 2),
    "numpy scalar - t": lambda t: np.float64(3.0) - t,
    "numpy scalar / t": lambda t: np.float64(3.0) / t,
}


@pytest.mark.parametrize("name", sorted(REVERSE_AND_CONSTANT))
def test_constant_operands_and_reverse_operators(name):
    fn = REVERSE_AND_CONSTANT[name]
    x = rand(3, 4, seed=3, low=0.5, high=2.0)
    (t,) = check_op(fn, x)
    out = fn(t)
    assert isinstance(out, Tensor), "NumPy must hand the operation to the Tensor (__array_priority__)"
    plain = fn(x.copy())  # the same expression on a plain array
    np.testing.assert_allclose(out.data, plain, rtol=1e-15)


@pytest.mark.parametrize("exponent", [2, 0.5, -1, 3, -0.5])
def test_power_with_constant_exponent(exponent):
    x = rand(3, 4, seed=4, low=0.5, high=2.0)
    (t,) = check_op(lambda t: t**exponent, x)
    np.testing.assert_allclose((t**exponent).data, x**exponent)


def test_power_with_a_tensor_exponent_is_refused():
    with pytest.raises(TypeError):
        Tensor(np.ones(3)) ** Tensor(np.ones(3))


# --------------------------------------------------------------------------- matrix products

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),  # matrix @ matrix
    ((2, 3, 4), (2, 4, 5)),  # batched
    ((2, 2, 3, 4), (2, 2, 4, 5)),  # batched, two batch axes (heads)
    ((2, 1, 3, 4), (3, 4, 5)),  # batch axes broadcast
    ((3, 4), (2, 4, 5)),  # one matrix @ a stack
    ((2, 3, 4), (4, 5)),  # (B, T, d) @ (d, e): the fast path
    ((2, 2, 3, 4), (4, 5)),  # the fast path from 4-D
    ((4,), (4, 5)),  # vector @ matrix
    ((3, 4), (4,)),  # matrix @ vector
    ((4,), (4,)),  # dot product
    ((4,), (2, 4, 5)),  # vector @ stack
    ((2, 3, 4), (4,)),  # stack @ vector
]


@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES)
def test_matmul_in_every_shape_combination(shape_a, shape_b):
    a, b = rand(*shape_a, seed=5), rand(*shape_b, seed=6)
    ta, tb = check_op(lambda x, y: x @ y, a, b)
    np.testing.assert_allclose((ta @ tb).data, a @ b, rtol=1e-14)


# --------------------------------------------------------------------------- reductions

AXES = [None, 0, 1, -1, -2, (0, 2), (-1, 0), (0, 1, 2)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("reduction", ["sum", "mean", "max"])
def test_reductions_over_every_kind_of_axis(reduction, axis, keepdims):
    x = rand(2, 3, 4, seed=7)  # continuous random values: no ties
    (t,) = check_op(lambda t: getattr(t, reduction)(axis=axis, keepdims=keepdims), x)
    out = getattr(t, reduction)(axis=axis, keepdims=keepdims)
    expected = getattr(np, reduction)(x, axis=axis, keepdims=keepdims)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.data, expected, rtol=1e-14)


def test_max_shares_the_gradient_equally_among_ties():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [5.0, -1.0, 4.0, 5.0]])
    t = Tensor(x, requires_grad=True)
    t.max(axis=1).backward(np.array([1.0, 2.0, 3.0]))
    expected = np.array([[0, 0.5, 0.5, 0], [0.5, 0.5, 0.5, 0.5], [1.5, 0, 0, 1.5]])
    np.testing.assert_array_equal(t.grad, expected)
    t.zero_grad()
    t.max().backward()  # the whole array's maximum, 5.0, twice
    expected = np.zeros_like(x)
    expected[2, 0] = expected[2, 3] = 0.5
    np.testing.assert_array_equal(t.grad, expected)
    t.zero_grad()
    t.max(axis=-1, keepdims=True).backward(np.full((3, 1), 6.0))
    np.testing.assert_array_equal(t.grad, [[0, 3, 3, 0], [1.5, 1.5, 1.5, 1.5], [3, 0, 0, 3]])
    t.zero_grad()
    t.max(axis=0).backward(np.ones(4))  # no ties down the columns: each column's maximum takes it all
    np.testing.assert_array_equal(t.grad, [[0, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 1]])


# --------------------------------------------------------------------------- elementwise functions

ELEMENTWISE = {
    "exp": (lambda t: t.exp(), np.exp, None),
    "log": (lambda t: t.log(), np.log, (0.3, 3.0)),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, (0.3, 3.0)),
    "tanh": (lambda t: t.tanh(), np.tanh, None),
    "gelu": (lambda t: t.gelu(), gelu_tanh, None),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_functions(name):
    fn, reference, interval = ELEMENTWISE[name]
    x = rand(3, 5, seed=8) * 2 if interval is None else rand(3, 5, seed=8, low=interval[0], high=interval[1])
    (t,) = check_op(fn, x)
    np.testing.assert_allclose(fn(t).data, reference(x), rtol=1e-13, atol=1e-15)


def test_relu_away_from_zero():
    x = rand(4, 5, seed=9)
    x[np.abs(x) < 0.1] = 0.5  # finite differences do not straddle the kink
    (t,) = check_op(lambda t: t.relu(), x)
    np.testing.assert_array_equal(t.relu().data, np.maximum(x, 0))
    t.zero_grad()
    t.relu().backward(np.ones_like(x))
    np.testing.assert_array_equal(t.grad, (x > 0).astype(float))


# --------------------------------------------------------------------------- shapes and indexing

SHAPE_OPS = {
    "reshape varargs": lambda t: t.reshape(4, 6),
    "reshape tuple": lambda t: t.reshape((3, 8)),
    "reshape -1": lambda t: t.reshape(-1),
    "transpose no axes (the last two)": lambda t: t.transpose(),
    "transpose explicit": lambda t: t.transpose(2, 0, 1),
    "transpose negative axes": lambda t: t.transpose(0, -1, 1),
    "transpose one tuple": lambda t: t.transpose((1, 2, 0)),
    ".T": lambda t: t.T,
    "reshape then transpose (split heads)": lambda t: t.reshape(2, 3, 2, 2).transpose(0, 2, 1, 3),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_reshape_and_transpose(name):
    fn = SHAPE_OPS[name]
    x = rand(2, 3, 4, seed=10)
    (t,) = check_op(fn, x)
    expected = np.swapaxes(x, -1, -2) if name in ("transpose no axes (the last two)", ".T") else fn(x.copy())
    np.testing.assert_array_equal(fn(t).data, expected)


def test_transpose_of_a_square_matrix_with_negative_axes_routes_the_gradient_back():
    # a wrong inverse permutation keeps a square matrix's shape, so only the values show it
    t = Tensor(np.zeros((3, 3)), requires_grad=True)
    g = np.arange(9.0).reshape(3, 3)
    t.transpose(-1, 0).backward(g)
    np.testing.assert_array_equal(t.grad, g.T)


def test_transpose_of_a_matrix_and_a_vector():
    (m,) = check_op(lambda t: t.T, rand(3, 4, seed=11))
    assert m.T.shape == (4, 3)
    (v,) = check_op(lambda t: t.T, rand(4, seed=12))
    assert v.T.shape == (4,)


INDEXING = {
    "repeated ids (embedding)": lambda t: t[np.array([0, 2, 2, 1, 0, 2])],
    "2-D ids (a batch of token ids)": lambda t: t[np.array([[0, 1, 0], [2, 2, 2]])],
    "slice": lambda t: t[:, 1:3],
    "step slice": lambda t: t[::2],
    "column": lambda t: t[:, 3],
    "negative int": lambda t: t[-1],
    "rows, cols": lambda t: t[np.array([0, 1, 1, 2]), np.array([3, 0, 0, 1])],
    "rows, cols with repeats": lambda t: t[np.array([2, 2, 2]), np.array([1, 1, 1])],
    "boolean mask, full shape": lambda t: t[np.arange(12).reshape(3, 4) % 3 == 0],
    "boolean mask, rows": lambda t: t[np.array([True, False, True])],
    "prefix slice (positions)": lambda t: t[:2],
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing_scatters_the_gradient_back(name):
    fn = INDEXING[name]
    x = rand(3, 4, seed=13)
    (t,) = check_op(fn, x)
    np.testing.assert_array_equal(fn(t).data, fn(x.copy()))


def test_repeated_indices_add_up_their_gradients():
    table = Tensor(np.zeros((4, 2)), requires_grad=True)
    table[np.array([1, 3, 1, 1])].backward(np.ones((4, 2)))
    np.testing.assert_array_equal(table.grad, [[0, 0], [3, 3], [0, 0], [1, 1]])
    table.zero_grad()
    table[np.array([0, 0]), np.array([1, 1])].backward(np.array([2.0, 5.0]))
    np.testing.assert_array_equal(table.grad, [[0, 7], [0, 0], [0, 0], [0, 0]])


def test_boolean_mask_indexing_routes_each_value_back_to_its_place():
    t = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    mask = np.array([[True, False, True], [False, True, False]])
    picked = t[mask]
    np.testing.assert_array_equal(picked.data, [0.0, 2.0, 4.0])
    picked.backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(t.grad, [[1, 0, 2], [0, 3, 0]])


# --------------------------------------------------------------------------- masked_fill and the softmax family


def test_masked_fill_passes_no_gradient_into_the_filled_places():
    x = rand(2, 2, 3, 3, seed=14)
    future = np.triu(np.ones((3, 3), dtype=bool), k=1)  # broadcast over batch and heads
    (t,) = check_op(lambda t: t.masked_fill(future, 0.0), x)
    assert np.all(t.grad[..., future] == 0)
    filled = t.masked_fill(future, -np.inf).data
    assert np.all(filled[..., future] == -np.inf) and np.array_equal(filled[..., ~future], x[..., ~future])
    # the attention pattern: −inf, then a softmax (the masked places get weight 0 and gradient 0)
    (t,) = check_op(lambda t: t.masked_fill(future, -np.inf).softmax(axis=-1), x)
    weights = t.masked_fill(future, -np.inf).softmax(axis=-1).data
    assert np.all(weights[..., future] == 0) and np.allclose(weights.sum(axis=-1), 1)
    assert np.all(t.grad[..., future] == 0)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_and_log_softmax_along_each_axis(op, axis):
    x = rand(2, 3, 4, seed=15) * 3
    (t,) = check_op(lambda t: getattr(t, op)(axis=axis), x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    p = e / e.sum(axis=axis, keepdims=True)
    expected = p if op == "softmax" else np.log(p)
    np.testing.assert_allclose(getattr(t, op)(axis=axis).data, expected, rtol=1e-10, atol=1e-15)


def test_softmax_family_is_stable_for_huge_inputs():
    big = Tensor(np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]]), requires_grad=True)
    for op in ("softmax", "log_softmax"):
        out = getattr(big, op)(axis=-1)
        out.backward(np.ones(out.shape))
        assert np.all(np.isfinite(out.data)) and np.all(np.isfinite(big.grad))
        big.zero_grad()
    assert np.allclose(cross_entropy(big, np.array([1, 2])).item(), -np.log([0.6652409557748219, 1 / 3]).mean())


@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (1, 7)])
def test_cross_entropy_value_and_gradient(shape):
    logits = rand(*shape, seed=16) * 2
    targets = np.random.default_rng(17).integers(0, shape[-1], size=shape[:-1])
    check_op(lambda t: cross_entropy(t, targets), logits)
    flat, ids = logits.reshape(-1, shape[-1]), targets.reshape(-1)
    by_hand = np.mean([np.log(np.exp(row).sum()) - row[i] for row, i in zip(flat, ids)])
    t = Tensor(logits.copy(), requires_grad=True)
    loss = cross_entropy(t, targets)
    assert loss.shape == () and loss.item() == pytest.approx(by_hand, rel=1e-14)
    loss.backward()
    # the short form of its gradient: (softmax − one-hot) / n
    p = np.exp(flat) / np.exp(flat).sum(axis=1, keepdims=True)
    p[np.arange(len(ids)), ids] -= 1
    np.testing.assert_allclose(t.grad, (p / len(ids)).reshape(shape), rtol=1e-12, atol=1e-16)


def test_cross_entropy_rejects_bad_targets():
    logits = Tensor(np.zeros((2, 3)), requires_grad=True)
    with pytest.raises(TypeError):
        cross_entropy(logits, np.array([0.0, 1.0]))
    with pytest.raises(ValueError):
        cross_entropy(logits, np.array([0, 1, 2]))
    with pytest.raises(ValueError):
        cross_entropy(logits, np.array([0, 3]))
    with pytest.raises(ValueError):
        cross_entropy(logits, np.array([-1, 0]))


# --------------------------------------------------------------------------- the module's own checkers


def test_numerical_gradient_agrees_with_a_known_derivative_and_restores_the_array():
    a = rand(3, 4, seed=18)
    before = a.copy()
    grad = numerical_gradient(lambda: float(np.sum(np.sin(a))), a)
    np.testing.assert_allclose(grad, np.cos(a), rtol=1e-8, atol=1e-9)
    np.testing.assert_array_equal(a, before)
    np.testing.assert_allclose(grad, central_difference(lambda: float(np.sum(np.sin(a))), a), rtol=1e-12)


def test_numerical_gradient_perturbs_a_non_contiguous_array_in_place():
    a = np.arange(1.0, 7.0).reshape(2, 3).T  # a transposed view: reshape(-1) of it would be a copy
    grad = numerical_gradient(lambda: float(np.sum(a**2)), a)
    np.testing.assert_allclose(grad, 2 * a, rtol=1e-8)
    t = Tensor(np.arange(1.0, 7.0).reshape(2, 3).T, requires_grad=True)
    assert gradient_check(lambda: (t * t).sum(), [t]) < 1e-6


def test_gradient_check_passes_a_right_backward_and_flags_a_wrong_one():
    x = Tensor(rand(3, 3, seed=19), requires_grad=True)
    w = Tensor(rand(3, 2, seed=20), requires_grad=True)
    assert gradient_check(lambda: (x @ w).tanh().sum(), [x, w]) < 1e-6

    def wrong_sin() -> Tensor:  # sin with the derivative of the identity
        return x._make(np.sin(x.data), (x,), lambda g: ((x, g),), "wrong sin").sum()

    assert gradient_check(wrong_sin, [x]) > 1e-2


def test_parameters_of_walks_nested_containers_in_order_once_each():
    a, b, c = (Tensor(np.ones(2), requires_grad=True) for _ in range(3))
    frozen = Tensor(np.ones(2))
    found = parameters_of({"x": a, "layers": [{"w": b, "again": a}, (c, frozen)], "n": 3})
    assert [id(t) for t in found] == [id(a), id(b), id(c)]


# --------------------------------------------------------------------------- graph mechanics


def test_a_tensor_used_twice_gets_the_sum_of_both_gradients():
    x = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    (x * x + x * 3.0).sum().backward()  # d/dx (x² + 3x) = 2x + 3
    np.testing.assert_array_equal(x.grad, 2 * x.data + 3)
    x.zero_grad()
    y = x.exp()
    (y * y.log()).sum().backward()  # an intermediate used twice: d/dx (e^x · x) = e^x (x + 1)
    np.testing.assert_allclose(x.grad, np.exp(x.data) * (x.data + 1), rtol=1e-14)


def test_gradients_accumulate_over_backward_calls_until_zero_grad():
    x = Tensor(np.array([2.0]), requires_grad=True)
    (x * 3.0).sum().backward()
    (x * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [6.0])
    x.zero_grad()
    assert x.grad is None


def test_backward_without_a_gradient_needs_a_scalar():
    x = Tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError):
        (x * 2.0).backward()
    (x * 2.0).backward(np.ones(3))  # with a gradient it is fine
    np.testing.assert_array_equal(x.grad, [2.0, 2.0, 2.0])
    with pytest.raises(RuntimeError):
        Tensor(np.ones(1)).backward()  # nothing in it requires a gradient


def test_a_tensor_that_does_not_require_grad_gets_no_gradient():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    c = Tensor(np.full((2, 3), 2.0))
    (x * c).sum().backward()
    assert c.grad is None and not c.requires_grad
    np.testing.assert_array_equal(x.grad, c.data)
    plain = Tensor(np.ones(2)) * 3.0
    assert not plain.requires_grad and plain._parents == ()  # no graph is kept for constants


def test_a_chain_of_5000_operations_backpropagates_without_recursion():
    x = Tensor(np.array([1.0]), requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0001
    assert sys.getrecursionlimit() < 5000 * 2  # the chain is longer than a recursive walk could go
    y.sum().backward()
    assert x.grad[0] == pytest.approx(1.0001**5000, rel=1e-10)


def test_float32_stays_float32_through_operations_and_gradients():
    rng = np.random.default_rng(21)
    x = Tensor(rng.standard_normal((2, 3, 4)).astype(np.float32), requires_grad=True)
    w = Tensor(rng.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
    h = (x @ w).gelu() * 0.5 + 1.0
    h = (h - 2.0) / 3.0
    h = h.softmax(axis=-1) + h.log_softmax(axis=-1) + (h * h + 1.0).sqrt().log() + h.tanh() + h.relu() + h**2
    h = h.masked_fill(np.eye(3, 4, dtype=bool), 0.0).transpose(0, 2, 1).reshape(2, 12) + np.ones(12)
    ce = cross_entropy(h.reshape(2, 3, 4), np.ones((2, 3), dtype=np.int64))
    loss = h.mean() + h.max(axis=-1).sum() + h.exp().sum(axis=0).mean() + ce
    for t in (h, loss):
        assert t.dtype == np.float32
    loss.backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32
    assert np.all(np.isfinite(x.grad)) and np.all(np.isfinite(w.grad))


def test_detach_cuts_the_graph():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    d = (x * 3.0).detach()
    assert not d.requires_grad and d._parents == ()
    np.testing.assert_array_equal(d.data, [3.0, 6.0])
    (x * d).sum().backward()  # only the direct path: d counts as a constant
    np.testing.assert_array_equal(x.grad, [3.0, 6.0])


def test_integer_data_becomes_float():
    assert Tensor(np.arange(3)).dtype == np.float64
    assert Tensor(np.arange(3), dtype=np.float32).dtype == np.float32


# --------------------------------------------------------------------------- mini_gpt against finite differences

MINI = mini_gpt.Config(vocab_size=5, context=5, d_model=6, n_layers=2, n_heads=2, d_ff=8)


def _mini_params(seed: int = 0) -> mini_gpt.Params:
    """float64 parameters, spread well beyond the 0.02 of the initialisation so that every gradient is large enough
    for the comparison to mean something (norm gains and biases are not 1 and 0 either)."""
    params = mini_gpt.init_params(MINI, seed=seed, dtype=np.float64)
    rng = np.random.default_rng(seed + 1)
    for t in parameters_of(params):
        if t.ndim == 1 and np.all(t.data == 1):  # a norm gain
            t.data[...] = 1 + 0.3 * rng.standard_normal(t.shape)
        else:
            t.data[...] = 0.5 * rng.standard_normal(t.shape)
    return params


def test_mini_gpt_gradients_match_finite_differences_for_every_parameter():
    params = _mini_params()
    rng = np.random.default_rng(2)
    x = rng.integers(0, MINI.vocab_size, size=(2, 4))  # T = 4 < context: the last position row gets no gradient
    y = rng.integers(0, MINI.vocab_size, size=(2, 4))

    def loss() -> Tensor:
        logits, _ = mini_gpt.gpt(params, x, MINI.n_heads)
        return mini_gpt.cross_entropy(logits, y)

    loss().backward()
    tensors = parameters_of(params)
    assert len(tensors) == 2 + 10 * MINI.n_layers + 3
    for t in tensors:
        numeric = central_difference(lambda: loss().item(), t.data)
        assert_grad_close(t.grad, numeric, rtol=1e-5, atol=1e-8)
        assert np.abs(numeric).max() > 1e-4  # every parameter matters to the loss
    np.testing.assert_array_equal(params["pos"].grad[4:], 0)


def test_mini_gpt_cross_entropy_equals_the_fused_cross_entropy():
    rng = np.random.default_rng(3)
    z = rng.standard_normal((2, 3, 7)) * 3
    targets = rng.integers(0, 7, size=(2, 3))
    a, b = Tensor(z.copy(), requires_grad=True), Tensor(z.copy(), requires_grad=True)
    composed, fused = mini_gpt.cross_entropy(a, targets), cross_entropy(b, targets)
    assert composed.item() == pytest.approx(fused.item(), rel=1e-13)
    composed.backward()
    fused.backward()
    np.testing.assert_allclose(a.grad, b.grad, rtol=1e-10, atol=1e-15)


def test_mini_gpt_trains_in_float32():
    params = mini_gpt.init_params(MINI, seed=4)
    x = np.array([[0, 1, 2, 3], [4, 3, 2, 1]])
    logits, maps = mini_gpt.gpt(params, x, MINI.n_heads)
    loss = mini_gpt.cross_entropy(logits, np.roll(x, -1, axis=1))
    loss.backward()
    assert logits.dtype == np.float32 and loss.dtype == np.float32
    assert all(t.grad.dtype == np.float32 for t in parameters_of(params))
    assert len(maps) == MINI.n_layers and maps[0].shape == (2, MINI.n_heads, 4, 4)
    np.testing.assert_allclose(maps[0].sum(axis=-1), 1, rtol=1e-6)
    assert np.all(np.triu(maps[0], k=1) == 0)  # causal


# --------------------------------------------------------------------------- against tiny_gpt's hand-written backward

TINY = tiny_gpt.Config(vocab_size=6, context=6, d_model=8, n_layers=2, n_heads=2, d_ff=12)


def _tiny_gpt_loss_with_autograd(p: dict[str, Tensor], cfg: tiny_gpt.Config, x: np.ndarray, y: np.ndarray) -> Tensor:
    """tiny_gpt's forward, built from Tensor operations: embeddings, pre-norm blocks (RMSNorm, multi-head causal
    attention with column-block heads, GELU feed-forward), the final RMSNorm and the tied output layer."""
    B, T = x.shape
    h_, dh = cfg.n_heads, cfg.d_head

    def rms(v: Tensor, gain: Tensor) -> Tensor:
        return v * (1.0 / ((v * v).mean(axis=-1, keepdims=True) + cfg.eps).sqrt()) * gain

    def heads(v: Tensor) -> Tensor:  # head i: columns i·dh … (i+1)·dh
        return v.reshape(B, T, h_, dh).transpose(0, 2, 1, 3)

    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    hidden = p["tok"][x] + p["pos"][:T]
    for i in range(cfg.n_layers):
        L = f"l{i}"
        a = rms(hidden, p[f"{L}.norm1"])
        q, k, v = (heads(a @ p[f"{L}.{w}"]) for w in ("wq", "wk", "wv"))
        weights = (q @ k.transpose() / math.sqrt(dh)).masked_fill(future, -np.inf).softmax(axis=-1)
        merged = (weights @ v).transpose(0, 2, 1, 3).reshape(B, T, h_ * dh)
        hidden = hidden + merged @ p[f"{L}.wo"]
        f = rms(hidden, p[f"{L}.norm2"])
        hidden = hidden + (f @ p[f"{L}.w1"] + p[f"{L}.b1"]).gelu() @ p[f"{L}.w2"] + p[f"{L}.b2"]
    logits = rms(hidden, p["norm_f"]) @ p["tok"].T + p["out_bias"]  # tied: the token table again
    return cross_entropy(logits, y)


def test_autograd_matches_tiny_gpt_hand_written_backward():
    rng = np.random.default_rng(5)
    arrays = {}
    for name, shape in tiny_gpt.param_shapes(TINY).items():
        kind = name.split(".")[-1]
        base = 1.0 if kind.startswith("norm") else 0.0
        arrays[name] = base + (0.3 if kind.startswith("norm") else 0.5) * rng.standard_normal(shape)
    x = rng.integers(0, TINY.vocab_size, size=(3, 5))  # T = 5 < context
    y = rng.integers(0, TINY.vocab_size, size=(3, 5))

    loss_value, grads = tiny_gpt.loss_and_grads({k: a.copy() for k, a in arrays.items()}, TINY, x, y)
    params = {k: Tensor(a.copy(), requires_grad=True) for k, a in arrays.items()}
    loss = _tiny_gpt_loss_with_autograd(params, TINY, x, y)
    assert loss.item() == pytest.approx(loss_value, rel=1e-12)
    assert loss.item() == pytest.approx(tiny_gpt.loss(arrays, TINY, x, y), rel=1e-12)
    loss.backward()
    assert sorted(grads) == sorted(tiny_gpt.param_names(TINY))
    for name in tiny_gpt.param_names(TINY):
        assert grads[name].dtype == np.float64
        np.testing.assert_allclose(params[name].grad, grads[name], rtol=1e-6, atol=1e-12, err_msg=name)
        if name != "pos":
            assert np.abs(grads[name]).max() > 1e-4, name


# --------------------------------------------------------------------------- training.py: measurements


def test_token_losses_are_minus_log_softmax_at_the_targets():
    rng = np.random.default_rng(6)
    z = rng.standard_normal((2, 3, 5)) * 4
    targets = rng.integers(0, 5, size=(2, 3))
    losses = training.token_losses(Tensor(z), targets)
    assert losses.shape == (2, 3)
    for b in range(2):
        for t in range(3):
            p = np.exp(z[b, t]) / np.exp(z[b, t]).sum()
            assert losses[b, t] == pytest.approx(-math.log(p[targets[b, t]]), rel=1e-12)
    np.testing.assert_array_equal(training.token_losses(z, targets), losses)  # a plain array too
    assert np.mean(losses) == pytest.approx(cross_entropy(Tensor(z), targets).item(), rel=1e-12)


def _causal_uniform(T: int) -> np.ndarray:
    w = np.tril(np.ones((T, T)))
    return w / w.sum(axis=-1, keepdims=True)


def test_induction_scores_for_a_perfect_and_a_uniform_head():
    x = np.array([[0, 1, 2, 0, 1, 2, 0]])  # period 3; positions 3 … 6 have seen their token before
    T = x.shape[1]
    perfect = np.zeros((T, T))
    for i in range(T):
        perfect[i, i - 2 if i >= 3 else 0] = 1.0  # the token after the last occurrence of x[i]: i − 3 + 1
    weights = np.stack([perfect, _causal_uniform(T)])[None]  # (B=1, h=2, T, T)
    scores = training.induction_scores(weights, x)
    assert scores.shape == (2,)
    assert scores[0] == pytest.approx(1.0)
    # uniform over the i + 1 positions it sees: row i gives (earlier occurrences of x[i]) / (i + 1)
    by_hand = (1 / 4 + 1 / 5 + 1 / 6 + 2 / 7) / 4
    assert scores[1] == pytest.approx(by_hand, rel=1e-12)


def test_induction_scores_are_zero_without_a_repeated_token():
    x = np.array([[0, 1, 2, 3]])
    assert np.array_equal(training.induction_scores(_causal_uniform(4)[None, None], x), [0.0])


def test_previous_token_scores():
    T = 6
    previous = np.zeros((T, T))
    previous[0, 0] = 1
    previous[np.arange(1, T), np.arange(T - 1)] = 1
    weights = np.stack([previous, np.eye(T), _causal_uniform(T)])[None].repeat(2, axis=0)  # (2, 3, T, T)
    scores = training.previous_token_scores(weights)
    assert scores[0] == pytest.approx(1.0) and scores[1] == 0.0
    assert scores[2] == pytest.approx(np.mean([1 / (i + 1) for i in range(1, T)]), rel=1e-12)


# --------------------------------------------------------------------------- windows and mean_nll


def test_windows_score_every_target_once_with_at_most_context_inputs():
    for context in range(1, 13):
        for n in range(0, 60):
            seen = []
            for start, end, first in training.windows(n, context):
                assert 0 <= start <= end <= n and end - start <= context
                assert 0 <= first <= end - start
                for i in range(first, end - start):
                    target = start + i  # the window's position i reads ids[start … target] and predicts target + 1
                    seen.append(target)
                    assert i + 1 >= min(target + 1, (context + 1) // 2), (n, context, target)
            assert sorted(seen) == list(range(n)), (n, context)


def test_mean_nll_of_uniform_logits_is_log_v():
    V = 7
    rng = np.random.default_rng(7)
    sequences = [rng.integers(0, V, size=n) for n in (2, 5, 9, 17, 30)]

    def uniform(x):
        return np.zeros((*x.shape, V))

    for context in (1, 2, 4, 8, 64):
        assert training.mean_nll(uniform, sequences, context) == pytest.approx(math.log(V), rel=1e-12)


def test_mean_nll_scores_each_target_from_its_own_previous_token():
    """A bigram model (logits from the current token only) gives the same NLL whatever the windows."""
    V = 5
    rng = np.random.default_rng(8)
    table = rng.standard_normal((V, V)) * 2
    log_p = table - np.log(np.exp(table).sum(axis=1, keepdims=True))
    sequences = [rng.integers(0, V, size=n) for n in (3, 8, 21, 40)]
    exact = np.mean([-log_p[s[k], s[k + 1]] for s in sequences for k in range(len(s) - 1)])
    for context in (1, 2, 3, 5, 8, 50):
        assert training.mean_nll(lambda x: table[x], sequences, context) == pytest.approx(exact, rel=1e-12)


# --------------------------------------------------------------------------- the repeated-sequence task


def test_repeat_task_batches_are_periodic_with_a_copyable_mask_from_the_second_copy():
    task = training.RepeatTask(vocab=12, length=20, min_period=3, max_period=7, seed=9)
    periods_seen = set()
    for _ in range(5):
        x, y, copyable = task.batch(16)
        assert x.shape == y.shape == copyable.shape == (16, 20)
        assert x.dtype.kind == "i" and copyable.dtype == bool
        np.testing.assert_array_equal(x[:, 1:], y[:, :-1])  # targets are the next tokens
        for row_x, row_y, row_c in zip(x, y, copyable):
            full = np.append(row_x, row_y[-1])
            period = int(np.argmax(row_c))  # the first copyable position
            periods_seen.add(period)
            assert 3 <= period <= 7
            assert len(set(full[:period].tolist())) == period  # distinct tokens within a segment
            assert np.all(full[period:] == full[:-period])  # periodic with that period
            assert np.all((row_x >= 0) & (row_x < 12))
            np.testing.assert_array_equal(row_c, np.arange(20) >= period)
            for t in range(20):  # copyable ⇔ the current token occurred before, and what followed it is the target
                earlier = np.flatnonzero(row_x[:t] == row_x[t])
                assert bool(row_c[t]) == (len(earlier) > 0)
                if len(earlier):
                    assert row_y[earlier[-1]] == row_y[t]
    assert periods_seen == set(range(3, 8))


def test_repeat_task_rejects_impossible_periods():
    with pytest.raises(ValueError):
        training.RepeatTask(vocab=4, length=20, min_period=3, max_period=5)
    with pytest.raises(ValueError):
        training.RepeatTask(vocab=12, length=8, min_period=3, max_period=5)
    with pytest.raises(ValueError):
        training.RepeatTask(min_period=1, max_period=3)


# --------------------------------------------------------------------------- AdamW, sampling, clipping


def test_adamw_first_step_moves_each_parameter_by_lr_times_the_sign_of_its_gradient():
    w = Tensor(np.array([[1.0, -2.0], [0.5, 3.0]]), requires_grad=True)
    b = Tensor(np.array([0.1, -0.1, 7.0]), requires_grad=True)
    frozen = Tensor(np.array([4.0, 4.0]), requires_grad=True)  # the loss does not reach it
    opt = training.AdamW({"w": w, "b": b, "frozen": frozen}, lr=0.01, eps=1e-8)
    w.grad = np.array([[3.0, -0.2], [1e-3, -50.0]])
    b.grad = np.array([-1.0, 2.0, 0.5])
    w0, b0 = w.data.copy(), b.data.copy()
    opt.step()
    # m = (1−β1)g, v = (1−β2)g²; bias-corrected: m̂ = g, v̂ = g², so the step is lr · g / (|g| + ε)
    np.testing.assert_allclose(w.data, w0 - 0.01 * w.grad / (np.abs(w.grad) + 1e-8), rtol=1e-12)
    np.testing.assert_allclose(b.data, b0 - 0.01 * np.sign(b.grad), rtol=1e-7)
    np.testing.assert_array_equal(frozen.data, [4.0, 4.0])
    opt.zero_grad()
    assert w.grad is None and b.grad is None


def test_adamw_weight_decay_shrinks_only_matrices():
    w = Tensor(np.full((2, 2), 2.0), requires_grad=True)
    b = Tensor(np.full(2, 2.0), requires_grad=True)
    opt = training.AdamW([w, b], lr=0.1, weight_decay=0.5)
    w.grad, b.grad = np.zeros((2, 2)), np.zeros(2)  # no gradient step: only the decay acts
    opt.step()
    np.testing.assert_allclose(w.data, 2.0 * (1 - 0.1 * 0.5))
    np.testing.assert_array_equal(b.data, 2.0)


def test_adamw_decreases_a_quadratic():
    rng = np.random.default_rng(10)
    target = rng.standard_normal((3, 4))
    w = Tensor(np.zeros((3, 4)), requires_grad=True)
    opt = training.AdamW([w], lr=0.05)
    losses = []
    for _ in range(300):
        loss = ((w - target) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[1] < losses[0]
    assert losses[-1] < 1e-3 * losses[0]
    with pytest.raises(ValueError):
        training.AdamW([Tensor(np.ones(2))])


def test_clip_grad_norm_scales_all_gradients_together():
    a = Tensor(np.zeros(2), requires_grad=True)
    b = Tensor(np.zeros(1), requires_grad=True)
    a.grad, b.grad = np.array([3.0, 0.0]), np.array([4.0])
    assert training.clip_grad_norm([a, b], 1.0) == pytest.approx(5.0)
    np.testing.assert_allclose(a.grad, [0.6, 0.0])
    np.testing.assert_allclose(b.grad, [0.8])
    assert training.clip_grad_norm([a, b], 10.0) == pytest.approx(1.0)
    np.testing.assert_allclose(b.grad, [0.8])


def test_sample_follows_a_confident_model_and_stops_at_stop():
    V, context = 6, 3
    windows_seen = []

    def next_logits(ids):
        windows_seen.append(ids.shape)
        z = np.zeros(V)
        z[(ids[0, -1] + 1) % V] = 50.0  # next = current + 1
        return z

    assert training.sample(next_logits, [0], steps=8, context=context) == [1, 2, 3, 4, 5, 0, 1, 2]
    assert all(shape[0] == 1 and 1 <= shape[1] <= context for shape in windows_seen)
    assert training.sample(next_logits, [2], steps=8, context=context, stop=5) == [3, 4]
    assert training.sample(next_logits, [2], steps=0, context=context) == []


# --------------------------------------------------------------------------- LiveCurve


@pytest.fixture
def no_page(monkeypatch):
    monkeypatch.delitem(sys.modules, "cell_runtime", raising=False)


@pytest.mark.usefixtures("no_page")
def test_live_curve_refuses_a_loss_that_is_not_finite():
    curve = training.LiveCurve("t", ["loss"], every=1e9)
    curve.add(0, 1.0)
    for bad in (float("nan"), float("inf"), np.float32("nan")):
        with pytest.raises(ValueError, match="learning rate"):
            curve.add(1, bad)
    with pytest.raises(ValueError):
        curve.add(2, 1.0, 2.0)  # one value per series
    assert curve.points == [[[0, 1.0]]]


@pytest.mark.usefixtures("no_page")
def test_live_curve_thins_points_beyond_max_points(capsys):
    curve = training.LiveCurve("t", ["a", "b"], every=1e9)
    n = 2 * training.MAX_POINTS + 500
    for step in range(n):
        curve.add(step, 1.0 / (step + 1), None if step % 2 else 2.0)
    a, b = curve.points
    assert len(a) <= training.MAX_POINTS and len(b) <= training.MAX_POINTS
    assert len(a) > training.MAX_POINTS // 2
    assert a[0] == [0, 1.0] and a[-1][0] == n - 1  # the first and the latest point stay
    steps = [p[0] for p in a]
    assert steps == sorted(set(steps))
    assert all(p[0] % 2 == 0 for p in b)  # None skipped that series' point
    assert curve.data()["series"][0]["points"] is a
    curve.finish()
    assert curve.done and "t:" in capsys.readouterr().out
