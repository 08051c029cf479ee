"""A small model zoo, differentiated by adjoint_s2s and checked against finite differences.

Logistic regression, a two-layer MLP with softmax cross-entropy, a tanh RNN that writes
its hidden states into a preallocated array, and a Gaussian log-likelihood through
``slogdet`` and ``solve``; then Hessians (``adjoint_s2s.hessian``, reverse over reverse)
of a quadratic form, of logsumexp and of an MLP loss in a flat parameter vector. Besides
finite differences, each model is compared with its closed-form gradient where there is
one, so that a wrong answer cannot hide behind a loose tolerance.

The functions are defined in this file because the transformer reads their source.
Sizes stay small: 5 features, batch 6.
"""
import numpy as np
import pytest

import adjoint_s2s as ad
from adjoint_s2s.testing import check_grads, numerical_gradient

try:
    import scipy.special as sps
except ImportError:  # scipy is an optional extra
    sps = None

N, D, HID, K, T = 6, 5, 4, 3, 5


def rng(seed):
    return np.random.default_rng(seed)


# =====================================================================================
# Models
# =====================================================================================


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def logreg_loss(w, b, X, y):
    p = sigmoid(X @ w + b)
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def softmax(Z):
    Z = Z - np.max(Z, axis=1, keepdims=True)
    E = np.exp(Z)
    return E / np.sum(E, axis=1, keepdims=True)


def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    P = softmax(H @ W2 + b2)
    return -np.sum(Y * np.log(P)) / X.shape[0]


def rnn_loss(Wx, Wh, b, v, X, target):
    steps = X.shape[0]
    H = np.zeros((steps, Wh.shape[0]))
    for t in range(steps):
        if t == 0:
            pre = X[t] @ Wx + b
        else:
            pre = X[t] @ Wx + H[t - 1] @ Wh + b
        H[t] = np.tanh(pre)
    out = H @ v
    return 0.5 * np.sum((out - target) ** 2) + 0.1 * np.sum(H[-1] ** 2)


def gaussian_loglik(mu, L, X):
    n, d = X.shape
    Sigma = L @ L.T + 1e-2 * np.eye(d)
    sign, logdet = np.linalg.slogdet(Sigma)
    R = X - mu
    Z = np.linalg.solve(Sigma, R.T)
    quad = np.sum(R.T * Z)
    return -0.5 * quad - 0.5 * n * logdet - 0.5 * n * d * np.log(2.0 * np.pi)


# ----- Hessians ---------------------------------------------------------------------------


def quadratic_form_np(x, A):
    return np.matmul(np.matmul(x, A), x)


def grad_quadratic_np(x, A):
    return ad.gradient(quadratic_form_np, x, A)[0]


def make_quadratic(A):
    def f(x):
        return x @ A @ x

    return f


def make_quadratic_np(A):
    def f(x):
        return np.matmul(np.matmul(x, A), x)

    return f


def logsumexp_by_hand(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logsumexp_scipy(x):
    return sps.logsumexp(x)


MLP_SHAPES = ((3, 3), (3,), (3, 2), (2,))


def unpack(theta):
    W1 = theta[0:9].reshape(3, 3)
    b1 = theta[9:12]
    W2 = theta[12:18].reshape(3, 2)
    b2 = theta[18:20]
    return W1, b1, W2, b2


def flat_mlp_loss(theta):
    W1, b1, W2, b2 = unpack(theta)
    X = np.array([[0.5, -1.0, 0.3], [1.2, 0.4, -0.7], [-0.3, 0.8, 0.9], [0.1, -0.6, 0.2]])
    Y = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    H = np.tanh(X @ W1 + b1)
    Z = H @ W2 + b2
    Z = Z - np.max(Z, axis=1, keepdims=True)
    logP = Z - np.log(np.sum(np.exp(Z), axis=1, keepdims=True))
    return -np.sum(Y * logP) / X.shape[0]


# =====================================================================================
# Data
# =====================================================================================


def logreg_data():
    r = rng(1)
    X = r.normal(size=(N, D))
    y = (r.uniform(size=N) > 0.5).astype(float)
    w = 0.5 * r.normal(size=D)
    return w, 0.3, X, y


def mlp_data():
    r = rng(2)
    X = r.normal(size=(N, D))
    Y = np.eye(K)[r.integers(0, K, size=N)]
    W1 = 0.5 * r.normal(size=(D, HID))
    b1 = 0.1 * r.normal(size=HID)
    W2 = 0.5 * r.normal(size=(HID, K))
    b2 = 0.1 * r.normal(size=K)
    return W1, b1, W2, b2, X, Y


def rnn_data():
    r = rng(3)
    Wx = 0.5 * r.normal(size=(D, HID))
    Wh = 0.5 * r.normal(size=(HID, HID))
    b = 0.1 * r.normal(size=HID)
    v = r.normal(size=HID)
    X = r.normal(size=(T, D))
    target = r.normal(size=T)
    return Wx, Wh, b, v, X, target


def gaussian_data():
    r = rng(4)
    d = 3
    mu = r.normal(size=d)
    L = np.tril(r.normal(size=(d, d))) + 1.5 * np.eye(d)
    X = r.normal(size=(N, d)) + mu
    return mu, L, X


def numerical_hessian(f, x, eps=1e-5):
    """Central differences of adjoint_s2s's gradient, one column per coordinate."""
    n = x.size
    H = np.zeros((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = eps
        gp = ad.gradient(f, x + e)[0]
        gm = ad.gradient(f, x - e)[0]
        H[:, i] = (gp - gm) / (2 * eps)
    return H


# =====================================================================================
# Gradients
# =====================================================================================


def test_logistic_regression_matches_finite_differences():
    args = logreg_data()
    got = check_grads(logreg_loss, *args)
    assert len(got) == 4
    assert isinstance(got[1], float)  # the bias is a float: its gradient is one


def test_logistic_regression_closed_form():
    w, b, X, y = logreg_data()
    g_w, g_b, _, _ = ad.gradient(logreg_loss, w, b, X, y)
    p = 1.0 / (1.0 + np.exp(-(X @ w + b)))
    assert np.allclose(g_w, X.T @ (p - y) / N, rtol=1e-12, atol=1e-14)
    assert abs(g_b - np.mean(p - y)) < 1e-14


def test_logistic_regression_descends():
    w, b, X, y = logreg_data()
    loss0 = logreg_loss(w, b, X, y)
    for _ in range(20):
        g_w, g_b, _, _ = ad.gradient(logreg_loss, w, b, X, y)
        w, b = w - 0.5 * g_w, b - 0.5 * g_b
    assert logreg_loss(w, b, X, y) < loss0 - 0.05


def test_mlp_matches_finite_differences():
    args = mlp_data()
    got = check_grads(mlp_loss, *args)
    for g, a in zip(got[:4], args[:4]):
        assert isinstance(g, np.ndarray) and g.shape == a.shape


def test_mlp_softmax_cross_entropy_closed_form():
    W1, b1, W2, b2, X, Y = mlp_data()
    gW1, gb1, gW2, gb2, _, _ = ad.gradient(mlp_loss, W1, b1, W2, b2, X, Y)
    H = np.tanh(X @ W1 + b1)
    Z = H @ W2 + b2
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    dZ = (P - Y) / N
    dH = dZ @ W2.T * (1.0 - H ** 2)
    assert np.allclose(gb2, dZ.sum(axis=0), rtol=1e-10, atol=1e-13)
    assert np.allclose(gW2, H.T @ dZ, rtol=1e-10, atol=1e-13)
    assert np.allclose(gb1, dH.sum(axis=0), rtol=1e-10, atol=1e-13)
    assert np.allclose(gW1, X.T @ dH, rtol=1e-10, atol=1e-13)


def test_mlp_softmax_is_stable_for_large_logits():
    # shifting every logit by 1000 overflows exp without the max-subtraction; with it
    # the loss, and so its gradient, does not change
    W1, b1, W2, b2, X, Y = mlp_data()
    base = ad.gradient(mlp_loss, W1, b1, W2, b2, X, Y)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        shifted = ad.gradient(mlp_loss, W1, b1, W2, b2 + 1000.0, X, Y)
    for g, h in zip(base[:4], shifted[:4]):
        assert np.allclose(g, h, rtol=1e-8, atol=1e-10)


def test_rnn_matches_finite_differences():
    args = rnn_data()
    got = check_grads(rnn_loss, *args)
    for g, a in zip(got, args):
        assert isinstance(g, np.ndarray) and g.shape == a.shape


def test_rnn_gradient_reaches_first_step():
    # the loss reads only the hidden states; the first input reaches them through
    # H[0] and every later write: its gradient is nonzero and matches the numerical one
    Wx, Wh, b, v, X, target = rnn_data()
    g_X = ad.gradient(rnn_loss, Wx, Wh, b, v, X, target)[4]
    num = numerical_gradient(lambda X: rnn_loss(Wx, Wh, b, v, X, target), X)[0]
    assert np.linalg.norm(g_X[0]) > 1e-3
    assert np.allclose(g_X, num, rtol=1e-6, atol=1e-8)


def test_rnn_inputs_unchanged():
    args = rnn_data()
    before = [a.copy() for a in args]
    ad.gradient(rnn_loss, *args)
    assert all(np.array_equal(a, c) for a, c in zip(args, before))


def test_gaussian_loglik_matches_finite_differences():
    mu, L, X = gaussian_data()
    got = check_grads(gaussian_loglik, mu, L, X)
    assert got[0].shape == mu.shape and got[1].shape == L.shape


def test_gaussian_loglik_value_and_closed_form():
    mu, L, X = gaussian_data()
    d = mu.shape[0]
    Sigma = L @ L.T + 1e-2 * np.eye(d)
    Si = np.linalg.inv(Sigma)
    R = X - mu
    # the value: the sum of the log-densities
    y, back = ad.pullback(gaussian_loglik, mu, L, X)
    want = sum(
        -0.5 * r @ Si @ r - 0.5 * np.log(np.linalg.det(2 * np.pi * Sigma)) for r in R
    )
    assert abs(y - want) < 1e-10 * abs(want)
    g_mu, g_L, g_X = back(1.0)
    # d/dmu = Sigma^-1 sum(r); d/dSigma = 0.5 (Si S Si - n Si), S = sum r r^T;
    # d/dL = (dSigma + dSigma^T) L
    assert np.allclose(g_mu, Si @ R.sum(axis=0), rtol=1e-10, atol=1e-12)
    S = R.T @ R
    dSigma = 0.5 * (Si @ S @ Si - N * Si)
    assert np.allclose(g_L, (dSigma + dSigma.T) @ L, rtol=1e-9, atol=1e-11)
    assert np.allclose(g_X, -(Si @ R.T).T, rtol=1e-10, atol=1e-12)


# =====================================================================================
# Hessians
# =====================================================================================




@pytest.mark.parametrize("make", [
    pytest.param(make_quadratic, id="operator"),
    pytest.param(make_quadratic_np, id="np.matmul"),
])
def test_hessian_quadratic_form_exact(make):
    r = rng(5)
    A = r.normal(size=(4, 4))  # not symmetric: the Hessian is A + A.T
    x = r.normal(size=4)
    H = ad.hessian(make(A), x)
    assert H.shape == (4, 4)
    assert np.allclose(H, A + A.T, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("make", [
    pytest.param(make_quadratic, id="operator"),
    pytest.param(make_quadratic_np, id="np.matmul"),
])
def test_hessian_quadratic_form_independent_of_x(make):
    A = rng(6).normal(size=(3, 3))
    f = make(A)
    H1 = ad.hessian(f, np.array([0.1, -0.2, 0.3]))
    H2 = ad.hessian(f, np.array([5.0, 1.0, -3.0]))
    assert np.allclose(H1, A + A.T, rtol=1e-13, atol=1e-13)
    assert np.allclose(H1, H2, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("make", [
    pytest.param(make_quadratic, id="operator"),
    pytest.param(make_quadratic_np, id="np.matmul"),
])
def test_hessian_vector_product_quadratic_form(make):
    r = rng(7)
    A = r.normal(size=(4, 4))
    x, v = r.normal(size=4), r.normal(size=4)
    hv = ad.hvp(make(A), x, v)
    assert np.allclose(hv, (A + A.T) @ v, rtol=1e-13, atol=1e-13)


def test_gradient_of_gradient_quadratic_form_with_matrix_argument():
    # the same quadratic form with A an argument: the Jacobian of the gradient in x
    r = rng(9)
    A = r.normal(size=(3, 3))
    x = r.normal(size=3)
    J = ad.jacobian(grad_quadratic_np, x, A)
    assert np.allclose(J[0], A + A.T, rtol=1e-13, atol=1e-13)
    # d(grad_x)/dA[k, l] = e_k x_l + x_k e_l: J[i, k, l] = delta_ik x_l + x_k delta_il
    want = np.einsum("ik,l->ikl", np.eye(3), x) + np.einsum("k,il->ikl", x, np.eye(3))
    assert np.allclose(J[1], want, rtol=1e-13, atol=1e-13)


def softmax_jacobian(x):
    p = np.exp(x - np.max(x))
    p /= p.sum()
    return np.diag(p) - np.outer(p, p)


def test_hessian_logsumexp_by_hand():
    x = np.array([0.3, -1.2, 0.8, 0.1, -0.4])
    H = ad.hessian(logsumexp_by_hand, x)
    assert np.allclose(H, numerical_hessian(logsumexp_by_hand, x), rtol=1e-6, atol=1e-8)
    assert np.allclose(H, softmax_jacobian(x), rtol=1e-10, atol=1e-12)


def test_hessian_logsumexp_scipy():
    if sps is None:
        pytest.skip("scipy is not installed")
    x = np.array([0.3, -1.2, 0.8, 0.1, -0.4])
    H = ad.hessian(logsumexp_scipy, x)
    assert np.allclose(H, numerical_hessian(logsumexp_scipy, x), rtol=1e-6, atol=1e-8)
    assert np.allclose(H, softmax_jacobian(x), rtol=1e-10, atol=1e-12)


def flat_params():
    r = rng(8)
    return 0.6 * r.normal(size=sum(int(np.prod(s)) for s in MLP_SHAPES))


def test_flat_mlp_gradient():
    theta = flat_params()
    assert theta.size == 20
    check_grads(flat_mlp_loss, theta)


def test_hessian_flat_mlp():
    theta = flat_params()
    H = ad.hessian(flat_mlp_loss, theta)
    assert H.shape == (20, 20)
    assert np.allclose(H, H.T, rtol=1e-8, atol=1e-10)
    assert np.allclose(H, numerical_hessian(flat_mlp_loss, theta), rtol=1e-5, atol=1e-7)
    # b2 enters only through softmax of Z: the b2 block is the mean softmax Jacobian
    # of the rows, whose rows and columns sum to zero
    assert np.allclose(H[18:20, 18:20].sum(axis=0), 0.0, atol=1e-12)
    assert np.linalg.norm(H[18:20, 18:20]) > 1e-3
