#!/usr/bin/env python3
"""The S-ORRT paper's own protocol as a reference: scipy's SLSQP at its defaults (maxiter
100, ftol 1e-6), as the paper ran it (section 4.1), on S-ORRT with lambda = 0.

Not glassbox: a small numpy implementation of the smooth problem (3)-(5) with lambda = 0
(the prediction (2) of a depth-D randomized tree with logistic CDF of slope gamma = 512,
linear leaves, MSE), minimized by SLSQP from random starts, best training objective of each
split selected. It answers one question: what mean test R^2 does the paper's solver, at the
paper's settings, give on the same data set, splits and starts protocol as glassbox's
example configs? (The paper's random starts are not described; we draw a_B, mu_B uniform in
[-1, 1] and every leaf predicting mean(y), as glassbox's `initialization = "uniform"`, or,
with --init leaves-uniform, the leaves' coefficients uniform in [-1, 1] too.)

    .venv/bin/python benches/sorrt_slsqp.py ../shared/datasets/wine_quality_red.csv \
        --depth 2 --splits 10 --starts 20
"""

import argparse
import json
import time

import numpy as np
from scipy.optimize import minimize

GAMMA = 512.0


def paths(depth):
    """Per leaf: list of (branch node, goes_left) along its root-to-leaf path (heap order)."""
    out = []
    for leaf in range(2**depth):
        node, path = 0, []
        for level in reversed(range(depth)):
            left = ((leaf >> level) & 1) == 0
            path.append((node, left))
            node = 2 * node + (1 if left else 2)
        out.append(path)
    return out


class Sorrt:
    def __init__(self, x, y, depth):
        self.x, self.y, self.depth = x, y, depth
        self.n, self.p = x.shape
        self.branches = 2**depth - 1
        self.leaves = 2**depth
        self.paths = paths(depth)
        self.xb = np.hstack([x, np.ones((self.n, 1))])

    def unpack(self, v):
        p = self.p
        nb = self.branches * (p + 1)
        ab = v[:nb].reshape(self.branches, p + 1)  # a_t (p), mu_t
        al = v[nb:].reshape(self.leaves, p + 1)
        return ab, al

    def fun(self, v):
        ab, al = self.unpack(v)
        p = self.p
        z = self.x @ ab[:, :p].T / p - ab[:, p]  # n x branches
        f = 1.0 / (1.0 + np.exp(-np.clip(GAMMA * z, -700, 700)))
        leafpred = self.x @ al[:, :p].T - al[:, p]  # n x leaves
        prob = np.ones((self.n, self.leaves))
        for l, path in enumerate(self.paths):
            for t, left in path:
                prob[:, l] *= f[:, t] if left else 1.0 - f[:, t]
        phi = (prob * leafpred).sum(axis=1)
        r = phi - self.y
        obj = (r**2).mean()
        w = 2.0 * r / self.n  # d obj / d phi_i
        grad_l = np.zeros_like(al)
        wp = prob * w[:, None]  # n x leaves
        grad_l[:, :p] = wp.T @ self.x
        grad_l[:, p] = -wp.sum(axis=0)
        # d phi / d z_t = sum over leaves below t of +-prob_l / (F or 1-F) * F' * leafpred
        dfz = GAMMA * f * (1.0 - f)
        dz = np.zeros((self.n, self.branches))
        for l, path in enumerate(self.paths):
            for t, left in path:
                # prob_l without node t's factor, times d(factor)/dz
                other = np.ones(self.n)
                for t2, left2 in path:
                    if t2 != t:
                        other *= f[:, t2] if left2 else 1.0 - f[:, t2]
                dz[:, t] += other * (dfz[:, t] if left else -dfz[:, t]) * leafpred[:, l]
        g = dz * w[:, None]  # n x branches
        grad_b = np.zeros_like(ab)
        grad_b[:, :p] = g.T @ self.x / p
        grad_b[:, p] = -g.sum(axis=0)
        return obj, np.concatenate([grad_b.ravel(), grad_l.ravel()])

    def predict(self, v, x):
        ab, al = self.unpack(v)
        p = self.p
        z = x @ ab[:, :p].T / p - ab[:, p]
        f = 1.0 / (1.0 + np.exp(-np.clip(GAMMA * z, -700, 700)))
        leafpred = x @ al[:, :p].T - al[:, p]
        prob = np.ones((x.shape[0], self.leaves))
        for l, path in enumerate(self.paths):
            for t, left in path:
                prob[:, l] *= f[:, t] if left else 1.0 - f[:, t]
        return (prob * leafpred).sum(axis=1)


def r2(y, pred):
    return 1.0 - ((y - pred) ** 2).mean() / y.var()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--maxiter", type=int, default=100)
    ap.add_argument("--init", choices=["uniform", "leaves-uniform"], default="uniform")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--splits-file", help="JSON list of {train, test} row indices (glassbox's "
                    "splits) instead of numpy's random 75/25 splits")
    args = ap.parse_args()
    data = np.genfromtxt(args.csv, delimiter=",", skip_header=1)
    X, Y = data[:, :-1], data[:, -1]
    given = json.load(open(args.splits_file)) if args.splits_file else None
    tests, trains, secs, ols = [], [], [], []
    for s in range(args.splits):
        rng = np.random.default_rng(args.seed + s)
        perm = rng.permutation(len(Y))
        ntest = int(round(0.25 * len(Y)))
        te, tr = perm[:ntest], perm[ntest:]
        if given:
            tr, te = np.array(given[s]["train"]), np.array(given[s]["test"])
        lo, hi = X[tr].min(axis=0), X[tr].max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        xs = lambda a: (a - lo) / span  # noqa: E731
        prob = Sorrt(xs(X[tr]), Y[tr], args.depth)
        p = prob.p
        nb = prob.branches * (p + 1)
        bounds = [(-1.0, 1.0)] * nb + [(None, None)] * (prob.leaves * (p + 1))
        best = None
        for k in range(args.starts):
            v0 = np.zeros(nb + prob.leaves * (p + 1))
            v0[:nb] = rng.uniform(-1, 1, nb)
            al = np.zeros((prob.leaves, p + 1))
            if args.init == "leaves-uniform":
                al[:] = rng.uniform(-1, 1, al.shape)
            al[:, p] = -Y[tr].mean() if args.init == "uniform" else al[:, p] - Y[tr].mean()
            v0[nb:] = al.ravel()
            t0 = time.time()
            res = minimize(prob.fun, v0, jac=True, method="SLSQP", bounds=bounds,
                           options={"maxiter": args.maxiter})
            secs.append(time.time() - t0)
            if best is None or res.fun < best.fun:
                best = res
        # OLS on the same split, the paper's linear baseline (Table 4: 0.3619 on red wine).
        design = np.hstack([X[tr], np.ones((len(tr), 1))])
        coef = np.linalg.lstsq(design, Y[tr], rcond=None)[0]
        ols.append(r2(Y[te], np.hstack([X[te], np.ones((len(te), 1))]) @ coef))
        tests.append(r2(Y[te], prob.predict(best.x, xs(X[te]))))
        trains.append(r2(Y[tr], prob.predict(best.x, xs(X[tr]))))
        print(f"split {s}: objective {best.fun:.5f} train R2 {trains[-1]:.4f} "
              f"test R2 {tests[-1]:.4f}, OLS {ols[-1]:.4f} (nit {best.nit}, {best.message})", flush=True)
    print(f"mean test R2 {np.mean(tests):.4f} (sd {np.std(tests):.4f}), train R2 "
          f"{np.mean(trains):.4f}, OLS test R2 {np.mean(ols):.4f}, median {np.median(secs):.2f} s per start")


if __name__ == "__main__":
    main()
