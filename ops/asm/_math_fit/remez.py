"""Weighted linear Remez exchange in mpmath, from which kiln's float32
elementwise polynomials (ops/asm/math_scalar*.go) are derived.

fit(target, weight, powers, a, b, var) finds c minimising
max over x in [a, b] of |weight(x) * (target(x) - sum_j c_j * var(x)**powers[j])|
by exchanging the reference points with the extrema of the error on a
dense Chebyshev grid. cond() measures how much Horner's rounding errors
can grow for a fitted polynomial.
"""
import mpmath as mp
import struct

mp.mp.dps = 40


def f32(v):
    return struct.unpack('f', struct.pack('f', float(v)))[0]


def solve(pts, target, weight, powers, var):
    n = len(powers)
    A = mp.matrix(n + 1, n + 1)
    rhs = mp.matrix(n + 1, 1)
    for i, x in enumerate(pts):
        v = var(x)
        for j, p in enumerate(powers):
            A[i, j] = v ** p
        A[i, n] = (-1) ** i / weight(x)
        rhs[i] = target(x)
    sol = mp.lu_solve(A, rhs)
    return [sol[j] for j in range(n)], sol[n]


def err(c, x, target, weight, powers, var):
    v = var(x)
    return weight(x) * (target(x) - sum(cj * v ** p for cj, p in zip(c, powers)))


def fit(target, weight, powers, a, b, var=lambda x: x, iters=30, grid=3000):
    a, b = mp.mpf(a), mp.mpf(b)
    n = len(powers)
    m = n + 1
    pts = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * (i + mp.mpf('0.37')) / (m - mp.mpf('0.41'))) for i in range(m)]
    G = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / (grid - 1)) for i in range(grid)]
    best = None
    for it in range(iters):
        c, E = solve(pts, target, weight, powers, var)
        es = [err(c, x, target, weight, powers, var) for x in G]
        # alternating extrema: split the grid into runs of equal sign and take the max of each
        runs = []
        for x, e in zip(G, es):
            s = e >= 0
            if runs and runs[-1][0] == s:
                if abs(e) > abs(runs[-1][2]):
                    runs[-1] = (s, x, e)
            else:
                runs.append((s, x, e))
        # keep m runs with largest errors while keeping alternation: drop smallest end runs
        while len(runs) > m:
            if abs(runs[0][2]) < abs(runs[-1][2]):
                runs.pop(0)
            else:
                runs.pop()
        mx = max(abs(e) for e in es)
        best = (c, mx)
        if len(runs) < m:
            break
        pts = [r[1] for r in runs]
        if mx <= abs(E) * (1 + mp.mpf('1e-6')):
            break
    return best


def report(name, c, mx, powers):
    print(name, 'max weighted err %.3e (%.2f ulp of 2^-24)' % (float(mx), float(mx) * 2 ** 24))
    for p, cj in zip(powers, c):
        print('  c%d = %r  (f32 %r)' % (p, float(cj), f32(cj)))


def cond(c, powers, var, a, b, n=400):
    """max over [a,b] of sum |c_j v^p_j| / |sum c_j v^p_j| (Horner's error amplification)."""
    a, b = mp.mpf(a), mp.mpf(b)
    worst = 0
    for i in range(n + 1):
        x = a + (b - a) * i / n
        v = var(x)
        s = sum(abs(cj * v ** p) for cj, p in zip(c, powers))
        p_ = abs(sum(cj * v ** p for cj, p in zip(c, powers)))
        worst = max(worst, s / p_)
    return float(worst)
