"""Metrics of predictions and paired comparisons, for agents, training and reports alike.

- ``auc``: ROC AUC (Mann–Whitney, tied scores share their mean rank);
  ``roc_curve``: points of the ROC curve.
- ``ece`` and ``reliability``: calibration over equal-width probability bins.
- ``paired_bootstrap``: a metric's difference between two predictors scored on
  the same rows, with a percentile interval from a bootstrap over groups of rows
  (e.g. hands: rows of one hand are not independent), both predictors on each
  resample.
- ``paired_stats``: mean and standard error of one candidate's gain over a base
  candidate, paired over samples (a numba kernel; the rollout search calls it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sichuan_env._jit import njit

__all__ = ["ECE_BINS", "auc", "ece", "paired_bootstrap", "paired_stats", "reliability",
           "roc_curve"]  # fmt: skip

ECE_BINS = 15
"""Bins of ``ece`` and ``reliability`` (equal width over [0, 1])."""


def auc(y: Any, score: Any) -> float:
    """ROC AUC of scores for binary labels (Mann–Whitney; tied scores share their mean rank).

    Args:
        y: labels, anything ``bool`` reads.
        score: one score per label.

    Raises:
        ValueError: different lengths, or only one class present.
    """
    y = np.asarray(y).astype(bool).ravel()
    s = np.asarray(score, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise ValueError(f"labels {y.shape} and scores {s.shape} differ")
    pos = int(y.sum())
    neg = y.size - pos
    if pos == 0 or neg == 0:
        raise ValueError("AUC needs both positive and negative labels")
    order = np.argsort(s, kind="mergesort")
    sorted_s = s[order]
    # Average rank (1-based) of each group of tied scores.
    starts = np.flatnonzero(np.r_[True, sorted_s[1:] != sorted_s[:-1]])
    ends = np.r_[starts[1:], s.size]
    avg = (starts + ends + 1) / 2.0
    ranks = np.empty(s.size)
    ranks[order] = np.repeat(avg, ends - starts)
    return float((ranks[y].sum() - pos * (pos + 1) / 2.0) / (pos * neg))


def _bins(y: Any, p: Any, bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = np.asarray(y, dtype=np.float64).ravel()
    p = np.asarray(p, dtype=np.float64).ravel()
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise ValueError(f"bins must be a positive integer, got {bins!r}")
    if y.shape != p.shape or y.size == 0:
        raise ValueError(
            f"labels {y.shape} and probabilities {p.shape} must match and be non-empty"
        )
    if not np.isfinite(p).all() or p.min() < 0 or p.max() > 1:
        raise ValueError("probabilities must lie in [0, 1]")
    return y, p, np.minimum((p * bins).astype(np.int64), bins - 1)


def ece(y: Any, p: Any, bins: int = ECE_BINS) -> float:
    """Expected calibration error: sum over equal-width bins of ``n_b / n * |mean(p) - mean(y)|``.

    A probability of exactly 1 falls in the last bin.

    Raises:
        ValueError: different lengths, no rows, or probabilities outside [0, 1].
    """
    y, p, b = _bins(y, p, bins)
    gap = np.abs(np.bincount(b, p, bins) - np.bincount(b, y, bins))
    return float(gap.sum() / y.size)


def reliability(y: Any, p: Any, bins: int = ECE_BINS) -> dict[str, list[float]]:
    """Per bin with rows: mean probability, positive rate and count.

    Raises:
        ValueError: as ``ece``.
    """
    y, p, b = _bins(y, p, bins)
    n = np.bincount(b, minlength=bins)
    keep = n > 0
    return {
        "mean_p": (np.bincount(b, p, bins)[keep] / n[keep]).tolist(),
        "rate": (np.bincount(b, y, bins)[keep] / n[keep]).tolist(),
        "count": n[keep].tolist(),
    }


def roc_curve(y: Any, p: Any, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """``(false positive rates, true positive rates)`` at about ``points`` thresholds.

    Raises:
        ValueError: different lengths or fewer than 2 points.
    """
    y = np.asarray(y).astype(bool).ravel()
    p = np.asarray(p, dtype=np.float64).ravel()
    if y.shape != p.shape:
        raise ValueError(f"labels {y.shape} and scores {p.shape} differ")
    if points < 2:
        raise ValueError(f"points must be >= 2, got {points}")
    order = np.argsort(-p, kind="mergesort")
    ys = y[order]
    tp = np.r_[0, np.cumsum(ys)]
    fp = np.r_[0, np.cumsum(~ys)]
    pick = np.unique(np.linspace(0, ys.size, points).astype(np.int64))
    return fp[pick] / max(fp[-1], 1), tp[pick] / max(tp[-1], 1)


def paired_bootstrap(
    y: Any,
    a: Any,
    b: Any,
    groups: Any,
    metric: Callable[[np.ndarray, np.ndarray], float] = auc,
    boot: int = 200,
    rng: np.random.Generator | int = 0,
) -> dict[str, float]:
    """``metric(y, a) - metric(y, b)`` with a 95% interval from a bootstrap over groups.

    The groups (e.g. the hand of each row) are resampled with replacement and
    both predictors scored on each resample, so the interval reflects the
    paired difference. A resample the metric rejects (``ValueError``, e.g. one
    class only for ``auc``) is skipped.

    Args:
        y: labels of the rows.
        a: predictor A's scores (one per row).
        b: predictor B's scores.
        groups: each row's group id.
        metric: ``metric(labels, scores) -> float``.
        boot: resamples.
        rng: a generator (advanced in place) or a seed.

    Returns:
        ``{"diff", "lo", "hi", "boot" (resamples kept), "hands" (groups)}``; ``lo`` and
        ``hi`` are NaN when no resample was kept.

    Raises:
        ValueError: rows of different lengths, no rows, ``boot < 1``, or ``metric``
            rejecting the whole set.
    """
    if isinstance(boot, bool) or not isinstance(boot, int) or boot < 1:
        raise ValueError(f"boot must be >= 1, got {boot!r}")
    y, a, b, g = (np.asarray(x).ravel() for x in (y, a, b, groups))
    if not y.size or not (y.shape == a.shape == b.shape == g.shape):
        raise ValueError(
            f"labels {y.shape}, scores {a.shape} and {b.shape}, groups {g.shape} must match"
        )
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    hands, inv = np.unique(g, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    rows = np.split(order, np.cumsum(np.bincount(inv, minlength=len(hands)))[:-1])
    diffs = []
    for _ in range(boot):
        pick = np.concatenate([rows[i] for i in gen.integers(len(hands), size=len(hands))])
        try:
            diffs.append(metric(y[pick], a[pick]) - metric(y[pick], b[pick]))
        except ValueError:
            continue
    lo, hi = np.percentile(diffs, [2.5, 97.5]) if diffs else (np.nan, np.nan)
    return {"diff": metric(y, a) - metric(y, b), "lo": float(lo), "hi": float(hi),
            "boot": len(diffs), "hands": len(hands)}  # fmt: skip


@njit
def paired_stats(vals, n_samples: int, c: int, base: int) -> tuple[float, float]:
    """Mean and standard error of candidate ``c``'s gain over candidate ``base``, paired over samples.

    ``vals[k, j]`` is candidate ``j``'s value on sample ``k`` (every candidate meets the
    same samples); the first ``n_samples`` rows are read.
    """
    s1 = 0.0
    s2 = 0.0
    for k in range(n_samples):
        d = vals[k, c] - vals[k, base]
        s1 += d
        s2 += d * d
    mean = s1 / n_samples
    var = max(s2 / n_samples - mean * mean, 0.0)
    return mean, np.sqrt(var / max(n_samples - 1, 1))
