"""Fits every polynomial of kiln's float32 math kernels and prints the
coefficients as they appear in ops/asm/math_scalar*.go (requires mpmath;
run: python3 fit.py, about a minute).

Each fit states the function, the variable, the interval and the weight
(relative error of the final result, so the weight is what one unit of
polynomial error costs there). Intervals are padded slightly beyond the
range reduction's ideal bounds to cover its rounding.
"""
from remez import fit, cond, mp, f32

SERIES_EPS = mp.mpf('1e-12')


def show(name, c, mx, powers, note):
    print('// %s: %s; max weighted error %.2e (%.3f ulp of 1)' % (name, note, float(mx), float(mx) * 2 ** 24))
    for p, cj in zip(powers, c):
        print('\t%s%d = float32(%r)' % (name, p, float(cj)))


def exp_fit():
    # e^r = 1 + r + r^2 * Q(r), |r| <= ln2/2, weight r^2/e^r.
    def tgt(r):
        if abs(r) < SERIES_EPS:
            return mp.mpf(1) / 2 + r / 6
        return (mp.expm1(r) - r) / r ** 2
    pw = list(range(5))
    c, mx = fit(tgt, lambda r: r ** 2 / mp.exp(r), pw, -0.3467, 0.3467)
    show('ewExpC', c, mx, pw, '(e^r - 1 - r)/r^2 on |r| <= 0.3467')


def log_fit():
    # log1p(f) = f - f^2/2 + f^3 * P(f), f in [sqrt(1/2)-1, sqrt(2)-1].
    def tgt(f):
        if abs(f) < SERIES_EPS:
            return mp.mpf(1) / 3 - f / 4
        return (mp.log1p(f) - f + f ** 2 / 2) / f ** 3

    def w(f):
        if abs(f) < SERIES_EPS:
            return f ** 2
        return f ** 3 / mp.log1p(f)
    a, b = mp.sqrt(0.5) - 1, mp.sqrt(2) - 1
    pw = list(range(8))
    c, mx = fit(tgt, w, pw, a - mp.mpf('1e-6'), b + mp.mpf('1e-6'))
    show('ewLogC', c, mx, pw, '(log1p(f) - f + f^2/2)/f^3 on [sqrt(.5)-1, sqrt(2)-1]')


def tanh_fit():
    # tanh(x) = x + x^3 * P(x^2) on [0, 0.625].
    def tgt(x):
        if abs(x) < mp.mpf('1e-10'):
            return -mp.mpf(1) / 3 + 2 * x ** 2 / 15
        return (mp.tanh(x) - x) / x ** 3

    def w(x):
        if abs(x) < mp.mpf('1e-10'):
            return x ** 2
        return x ** 3 / mp.tanh(x)
    pw = list(range(5))
    c, mx = fit(tgt, w, pw, mp.mpf('1e-4'), 0.625, var=lambda x: x ** 2)
    show('ewTanhC', c, mx, pw, '(tanh(x) - x)/x^3 in s = x^2 on [0, 0.625]')


def erf_small_fit():
    # erf(x) = x * P(x^2) on [0, 0.875]; the kernel stores c0 - 1.
    def tgt(x):
        if abs(x) < mp.mpf('1e-10'):
            return 2 / mp.sqrt(mp.pi)
        return mp.erf(x) / x
    pw = list(range(6))
    c, mx = fit(tgt, lambda x: 1 / tgt(x), pw, mp.mpf('1e-4'), 0.875, var=lambda x: x ** 2)
    show('ewErfC', c, mx, pw, 'erf(x)/x in s = x^2 on [0, 0.875] (ewErfC0m1 = c0 - 1)')


def erf_big_fit():
    # erfc(z) = e^(-z^2) * t * K(t - t0), t = 1/(1 + z/2), z in [0.875, 4].
    a, z0, z1 = mp.mpf(0.5), mp.mpf(0.875), mp.mpf(4)
    t0 = mp.mpf(f32((1 / (1 + a * z0) + 1 / (1 + a * z1)) / 2))
    print('\tewErfT0 = float32(%r)' % float(t0))

    def tgt(z):
        return mp.erfc(z) * mp.exp(z * z) * (1 + a * z)
    tv = lambda z: 1 / (1 + a * z) - t0
    pw = list(range(7))
    c, mx = fit(tgt, lambda z: 1 / tgt(z), pw, z0, z1, var=tv)
    show('ewErfK', c, mx, pw, 'erfc(z) e^(z^2) / t in u = t - t0 on z in [0.875, 4]; Horner growth %.2f' % cond(c, pw, tv, z0, z1))


def gelu_small_fit():
    # Phi(x) - 1/2 = x * P(x^2) on [0, 0.75].
    def tgt(x):
        if abs(x) < mp.mpf('1e-10'):
            return 1 / mp.sqrt(2 * mp.pi)
        return mp.erf(x / mp.sqrt(2)) / (2 * x)
    pw = list(range(5))
    c, mx = fit(tgt, lambda x: 1 / tgt(x), pw, mp.mpf('1e-4'), 0.75, var=lambda x: x ** 2)
    show('ewGeluP', c, mx, pw, '(Phi(x) - 1/2)/x in s = x^2 on [0, 0.75]')


def gelu_big_fit():
    # |x| Phi(-|x|) = e^(-x^2/2) * G(t - t0), t = 1/(1 + |x|/4), |x| in [0.75, 15].
    a, x0, x1 = mp.mpf(0.25), mp.mpf(0.75), mp.mpf(15)
    t0 = mp.mpf(f32((1 / (1 + a * x0) + 1 / (1 + a * x1)) / 2))
    print('\tewGeluT0 = float32(%r)' % float(t0))

    def tgt(x):
        return x * mp.erfc(x / mp.sqrt(2)) / 2 * mp.exp(x * x / 2)
    tv = lambda x: 1 / (1 + a * x) - t0
    pw = list(range(9))
    c, mx = fit(tgt, lambda x: 1 / tgt(x), pw, x0, x1, var=tv, iters=60, grid=6000)
    show('ewGeluG', c, mx, pw, 'x Phi(-x) e^(x^2/2) in u = t - t0 on x in [0.75, 15]; Horner growth %.2f' % cond(c, pw, tv, x0, x1))


if __name__ == '__main__':
    for f in (exp_fit, log_fit, tanh_fit, erf_small_fit, erf_big_fit, gelu_small_fit, gelu_big_fit):
        f()
