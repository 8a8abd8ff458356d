"""Metrics (``sichuan_env.agents.eval.metrics``): AUC, calibration, paired comparisons."""

import numpy as np
import pytest
from sichuan_env.agents.eval.metrics import (
    auc,
    ece,
    paired_bootstrap,
    paired_stats,
    reliability,
    roc_curve,
)

# --- AUC and ECE on hand-built examples -------------------------------------------------------


def test_auc_exact_values():
    assert auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
    assert auc([0, 1], [0.5, 0.5]) == 0.5  # a tie counts one half
    assert auc([0, 0, 1, 1], [1, 2, 2, 3]) == 0.875  # (1 + 0.5 + 1 + 1) / 4
    assert auc([1, 1, 0], [3, 2, 1]) == 1.0
    assert auc([1, 1, 0], [1, 2, 3]) == 0.0


def test_auc_matches_pair_counting_with_ties():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300).astype(bool)
    s = rng.integers(0, 8, 300).astype(float)  # many ties
    pos, neg = s[y], s[~y]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert auc(y, s) == pytest.approx(wins / (len(pos) * len(neg)), abs=1e-12)


def test_auc_rejects_one_class_and_mismatch():
    with pytest.raises(ValueError, match="both"):
        auc([1, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match="differ"):
        auc([0, 1], [0.2])


def test_ece_exact_values():
    # bin 1: p 0.1, rate 0.5 (gap 0.4, half the rows); bin 9: p 0.9, rate 1 (gap 0.1, half).
    assert ece([0, 1, 1, 1], [0.1, 0.1, 0.9, 0.9], bins=10) == pytest.approx(0.25)
    assert ece([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]) == pytest.approx(0.0)
    assert ece([1], [1.0], bins=10) == 0.0  # p == 1 is in the last bin
    rel = reliability([0, 1, 1, 1], [0.1, 0.1, 0.9, 0.9], bins=10)
    assert rel == {"mean_p": [0.1, 0.9], "rate": [0.5, 1.0], "count": [2, 2]}
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ece([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="non-empty"):
        ece([], [])


def test_roc_curve_ends_and_rejects_bad_input():
    fpr, tpr = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert (fpr[0], tpr[0]) == (0, 0) and (fpr[-1], tpr[-1]) == (1, 1)
    assert (np.diff(fpr) >= 0).all() and (np.diff(tpr) >= 0).all()
    with pytest.raises(ValueError, match="differ"):
        roc_curve([0, 1], [0.5])
    with pytest.raises(ValueError, match="bins"):
        ece([0, 1], [0.2, 0.3], bins=0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        reliability([0, 1], [0.2, np.nan])


# --- paired comparisons ------------------------------------------------------------------------


def _paired_data(n=4000, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.uniform(size=n) < 0.3
    good = np.where(y, 0.7, 0.3) + rng.normal(0, 0.2, n)
    bad = rng.uniform(size=n)
    return y, good, bad, np.arange(n) // 40  # 100 hands


def test_paired_bootstrap_is_paired_over_groups():
    y, good, bad, groups = _paired_data()
    d = paired_bootstrap(y, good, bad, groups, boot=50)
    assert 0 < d["lo"] <= d["diff"] <= d["hi"] and d["hands"] == 100 and d["boot"] == 50
    assert d["diff"] == pytest.approx(auc(y, good) - auc(y, bad))
    same = paired_bootstrap(y, good, good.copy(), groups, boot=20)
    assert same["diff"] == same["lo"] == same["hi"] == 0.0  # paired: no spread at all
    assert paired_bootstrap(y, good, bad, groups, boot=30, rng=7) == paired_bootstrap(
        y, good, bad, groups, boot=30, rng=np.random.default_rng(7)
    )
    mse = paired_bootstrap(y, good, bad, groups, lambda t, p: float(((t - p) ** 2).mean()), 10)
    assert mse["boot"] == 10
    with pytest.raises(ValueError, match="boot"):
        paired_bootstrap(y, good, bad, groups, boot=0)
    with pytest.raises(ValueError, match="must match"):
        paired_bootstrap(y, good[:-1], bad, groups)


def test_paired_bootstrap_skips_one_class_resamples():
    y = np.array([1, 0, 0, 0])  # one positive hand: many resamples lack it
    p = np.array([0.9, 0.1, 0.2, 0.3])
    d = paired_bootstrap(y, p, p[::-1].copy(), np.arange(4), boot=100)
    assert 0 < d["boot"] < 100 and d["hands"] == 4


def test_paired_stats_mean_and_standard_error():
    vals = np.array([[1.0, 3.0, 0.0], [2.0, 2.0, 0.0], [0.0, 4.0, 0.0], [9.0, 9.0, 9.0]])
    mean, se = paired_stats(vals, 3, 1, 0)  # the 4th sample is not read
    d = np.array([2.0, 0.0, 4.0])
    assert mean == pytest.approx(d.mean())
    assert se == pytest.approx(np.sqrt(d.var() / 2))
    assert paired_stats(vals, 3, 0, 0) == (0.0, 0.0)
