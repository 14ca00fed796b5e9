"""Viterbi decoding of Web2Text's potentials (paper 002, section 3.4): the best label sequence.

Labels: 0 boilerplate, 1 content. ``unary[i, l]`` is p_i(l_i = l); ``pairwise[i, 2 * a + b]`` is
p_{i,i+1}(l_i = a, l_{i+1} = b). The decoded labelling maximises

    sum_i log p_i(l_i) + weight * sum_i log p_{i,i+1}(l_i, l_{i+1})

(the product of the potentials, the pairwise ones raised to ``weight``; weight 1 is the plain
product of the paper's hidden Markov model, 0 decodes every block on its own).
``with_threshold`` moves the unary potentials' decision point: p_i(1) is multiplied by
(1 - t) / t and renormalised, so that a block alone is content when p_i(1) >= t (a prior on
content chosen on validation pages; t = 0.5 leaves them as they are). Probabilities are
clipped at ``EPSILON`` before the logarithm. Ties go to the lower label (boilerplate). Two states
only, so the recursion runs on Python floats: faster than NumPy calls per step.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt

EPSILON = 1e-9


def viterbi(unary: npt.ArrayLike, pairwise: npt.ArrayLike, weight: float = 1.0) -> npt.NDArray[np.int64]:
    """Return the labels (0/1, one per block) that maximise the score above.

    ``unary`` has shape (n, 2), ``pairwise`` (n - 1, 4); raises ValueError on other shapes.
    """
    u = np.asarray(unary, dtype=np.float64)
    p = np.asarray(pairwise, dtype=np.float64)
    n = len(u)
    if u.ndim != 2 or u.shape[1] != 2 or p.shape != (max(n - 1, 0), 4):
        raise ValueError(f"unary must be (n, 2) and pairwise (n - 1, 4); got {u.shape} and {p.shape}")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    log_u = np.log(np.clip(u, EPSILON, 1.0)).tolist()
    log_p = (weight * np.log(np.clip(p, EPSILON, 1.0))).tolist()
    s0, s1 = log_u[0]
    back: list[tuple[int, int]] = []
    for i in range(1, n):
        p00, p01, p10, p11 = log_p[i - 1]
        # best previous label for current label 0 and for 1 (ties: previous 0)
        a0, b0 = s0 + p00, s1 + p10
        a1, b1 = s0 + p01, s1 + p11
        prev0 = 1 if b0 > a0 else 0
        prev1 = 1 if b1 > a1 else 0
        u0, u1 = log_u[i]
        s0 = (b0 if prev0 else a0) + u0
        s1 = (b1 if prev1 else a1) + u1
        back.append((prev0, prev1))
    labels = [0] * n
    labels[-1] = 1 if s1 > s0 else 0
    for i in range(n - 1, 0, -1):
        labels[i - 1] = back[i - 1][labels[i]]
    return np.asarray(labels, dtype=np.int64)


def with_threshold(unary: npt.ArrayLike, threshold: float) -> npt.NDArray[np.float64]:
    """Return the unary potentials reweighted so that 0.5 after equals ``threshold`` before (0 < t < 1)."""
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must lie strictly between 0 and 1, got {threshold}")
    u = np.asarray(unary, dtype=np.float64).copy()
    if len(u):
        u[:, 1] *= (1.0 - threshold) / threshold
        u /= u.sum(axis=1, keepdims=True)
    return u


def sequence_score(labels: npt.ArrayLike, unary: npt.ArrayLike, pairwise: npt.ArrayLike, weight: float = 1.0) -> float:
    """Return the score above of one labelling (for tests and for checking a decoding)."""
    ls = [int(label) for label in np.asarray(labels)]
    u = np.clip(np.asarray(unary, dtype=np.float64), EPSILON, 1.0)
    p = np.clip(np.asarray(pairwise, dtype=np.float64), EPSILON, 1.0)
    total = sum(math.log(u[i, label]) for i, label in enumerate(ls))
    total += weight * sum(math.log(p[i, 2 * a + b]) for i, (a, b) in enumerate(itertools.pairwise(ls)))
    return float(total)
