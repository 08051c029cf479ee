"""Rules of ``np.fft``: the discrete Fourier transforms and the spectrum shifts.

Every transform is linear, so its pullback is its adjoint, itself a transform: the
adjoint of a DFT with normalisation ``norm`` is the inverse DFT with the dual
normalisation (``"backward"`` <-> ``"forward"``, ``"ortho"`` stays), since the
unnormalised DFT's adjoint is ``n`` times its inverse. Around it:

* ``n``/``s`` pad or crop the input before the transform: the adjoint crops or pads the
  cotangent back to the input's length (``_fit_axes``);
* ``rfft`` keeps the first ``n//2 + 1`` bins: its adjoint pads the cotangent with zeros
  to ``n`` bins before the inverse transform (the real part is kept by ``np_fit``);
* ``irfft`` reads each interior bin twice (the bin and its conjugate mirror): its adjoint
  is ``rfft`` with the interior bins doubled (``_twice_inside``);
* ``hfft``/``ihfft`` are ``irfft``/``rfft`` of conjugates with the dual normalisation.

The helpers use only NumPy functions that have rules, so the pullbacks differentiate
again (a Hessian through an FFT).
"""
import numpy as np

from .base import _CURRENT, SECTION_ORDER, np_fit, rule

__all__ = [  # the helpers templates reach as _rt.<name>
    "np_fft_adjoint",
    "np_fftn_adjoint",
    "np_fftshift_adjoint",
    "np_hfft_adjoint",
    "np_ifft_adjoint",
    "np_ifftn_adjoint",
    "np_ifftshift_adjoint",
    "np_ihfft_adjoint",
    "np_irfft_adjoint",
    "np_irfftn_adjoint",
    "np_rfft_adjoint",
    "np_rfftn_adjoint",
]


_DUAL = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _dual(norm):
    """The normalisation of the adjoint transform."""
    return _DUAL[norm]


def _resolve_axes(ndim, s, axes):
    """The transformed axes, non-negative, as NumPy picks them for (s, axes)."""
    if axes is None:
        if s is None:
            return tuple(range(ndim))
        return tuple(range(ndim - len(s), ndim))
    return tuple(int(ax) % ndim for ax in axes)


def _fit_axes(b, shape, axes):
    """Crop or zero-pad b along axes to the lengths of shape (undo the padding or
    cropping of ``n``/``s``)."""
    for ax in axes:
        m = shape[ax]
        k = b.shape[ax]
        if k > m:
            b = np.take(b, np.arange(m), ax)
        elif k < m:
            widths = [(0, m - k) if i == ax else (0, 0) for i in range(b.ndim)]
            b = np.pad(b, widths)
    return b


def _twice_inside(n, ndim, ax):
    """Weights along ax of the n//2 + 1 bins of a real signal's spectrum: 2 for the bins
    that stand for two (a bin and its mirror), 1 for bin 0 and, n even, bin n/2."""
    idx = np.arange(n // 2 + 1)
    w = np.where((idx == 0) | (2 * idx == n), 1.0, 2.0)
    return w.reshape([-1 if i == ax else 1 for i in range(ndim)])


def _complex_adjoint(g, a, s, axes, norm, inverse):
    ax = _resolve_axes(np.ndim(a), s, axes)
    g = np.asarray(g)
    if inverse:
        b = np.fft.fftn(g, None, ax, _dual(norm))
    else:
        b = np.fft.ifftn(g, None, ax, _dual(norm))
    return np_fit(_fit_axes(b, np.shape(a), ax), a)


def np_fft_adjoint(g, a, n=None, axis=-1, norm=None):
    return _complex_adjoint(g, a, None, (axis,), norm, False)


def np_ifft_adjoint(g, a, n=None, axis=-1, norm=None):
    return _complex_adjoint(g, a, None, (axis,), norm, True)


def np_fftn_adjoint(g, a, s=None, axes=None, norm=None):
    return _complex_adjoint(g, a, s, axes, norm, False)


def np_ifftn_adjoint(g, a, s=None, axes=None, norm=None):
    return _complex_adjoint(g, a, s, axes, norm, True)


def _rfftn_adjoint(g, a, s, axes, norm):
    ax = _resolve_axes(np.ndim(a), s, axes)
    last = ax[-1]
    full = np.shape(a)[last] if s is None else s[-1]
    g = np.asarray(g)
    widths = [(0, full - g.shape[last]) if i == last else (0, 0) for i in range(g.ndim)]
    b = np.fft.ifftn(np.pad(g, widths), None, ax, _dual(norm))
    return np_fit(_fit_axes(b, np.shape(a), ax), a)


def np_rfft_adjoint(g, a, n=None, axis=-1, norm=None):
    return _rfftn_adjoint(g, a, None if n is None else (n,), (axis,), norm)


def np_rfftn_adjoint(g, a, s=None, axes=None, norm=None):
    return _rfftn_adjoint(g, a, s, axes, norm)


def _irfftn_adjoint(g, a, axes, norm):
    g = np.asarray(g)
    ax = tuple(int(i) % g.ndim for i in axes)
    last = ax[-1]
    b = np.fft.rfftn(g, None, ax, _dual(norm))
    b = b * _twice_inside(g.shape[last], g.ndim, last)
    return np_fit(_fit_axes(b, np.shape(a), ax), a)


def np_irfft_adjoint(g, a, n=None, axis=-1, norm=None):
    return _irfftn_adjoint(g, a, (axis,), norm)


def np_irfftn_adjoint(g, a, s=None, axes=None, norm=None):
    return _irfftn_adjoint(g, a, _resolve_axes(np.ndim(a), s, axes), norm)


def np_hfft_adjoint(g, a, n=None, axis=-1, norm=None):
    """hfft(a) = irfft(conj(a)) with the dual normalisation."""
    return np.conj(_irfftn_adjoint(g, np.conj(a), (axis,), _dual(norm)))


def np_ihfft_adjoint(g, a, n=None, axis=-1, norm=None):
    """ihfft(a) = conj(rfft(a)) with the dual normalisation."""
    return np_rfft_adjoint(np.conj(g), a, n, axis, _dual(norm))


def np_fftshift_adjoint(g, x, axes=None):
    return np_fit(np.fft.ifftshift(g, axes), x)


def np_ifftshift_adjoint(g, x, axes=None):
    return np_fit(np.fft.fftshift(g, axes), x)


SECTION_ORDER.append("Fourier transforms")
_CURRENT[0] = "Fourier transforms"

_fft = np.fft

_ONE = "a, n=None, axis=-1, norm=None, out=None"
_N = "a, s=None, axes=None, norm=None, out=None"
_TWO = "a, s=None, axes=(-2, -1), norm=None, out=None"

for _name, _params, _helper in [
    ("fft", _ONE, "np_fft_adjoint(g, a, n, axis, norm)"),
    ("ifft", _ONE, "np_ifft_adjoint(g, a, n, axis, norm)"),
    ("rfft", _ONE, "np_rfft_adjoint(g, a, n, axis, norm)"),
    ("irfft", _ONE, "np_irfft_adjoint(g, a, n, axis, norm)"),
    ("hfft", _ONE, "np_hfft_adjoint(g, a, n, axis, norm)"),
    ("ihfft", _ONE, "np_ihfft_adjoint(g, a, n, axis, norm)"),
    ("fftn", _N, "np_fftn_adjoint(g, a, s, axes, norm)"),
    ("ifftn", _N, "np_ifftn_adjoint(g, a, s, axes, norm)"),
    ("rfftn", _N, "np_rfftn_adjoint(g, a, s, axes, norm)"),
    ("irfftn", _N, "np_irfftn_adjoint(g, a, s, axes, norm)"),
    ("fft2", _TWO, "np_fftn_adjoint(g, a, s, axes, norm)"),
    ("ifft2", _TWO, "np_ifftn_adjoint(g, a, s, axes, norm)"),
    ("rfft2", _TWO, "np_rfftn_adjoint(g, a, s, axes, norm)"),
    ("irfft2", _TWO, "np_irfftn_adjoint(g, a, s, axes, norm)"),
]:
    rule(getattr(_fft, _name, None), _params, adjoints={"a": "_rt." + _helper},
         path=f"np.fft.{_name}")

rule(_fft.fftshift, "x, axes=None", adjoints={"x": "_rt.np_fftshift_adjoint(g, x, axes)"},
     path="np.fft.fftshift")
rule(_fft.ifftshift, "x, axes=None", adjoints={"x": "_rt.np_ifftshift_adjoint(g, x, axes)"},
     path="np.fft.ifftshift")
