"""The paired half-width ratio of two models' per-wall samples."""

from __future__ import annotations

import json

import numpy as np
import pytest

from research.luck_scale.paired import main, paired_ratio


def test_a_scaled_sample_gives_its_scale_in_every_resample() -> None:
    a = np.random.default_rng(3).normal(size=500)
    got = paired_ratio(a, 0.5 * a + 1.0)
    assert got["ratio"] == pytest.approx(0.5)
    assert got["ci95"] == pytest.approx([0.5, 0.5])  # paired: the same walls in both


def test_independent_samples_of_one_spread_straddle_one() -> None:
    rng = np.random.default_rng(4)
    got = paired_ratio(rng.normal(size=2000), rng.normal(size=2000))
    assert got["ci95"][0] < 1.0 < got["ci95"][1]


def test_bad_samples_are_refused() -> None:
    with pytest.raises(ValueError, match="one length"):
        paired_ratio(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        paired_ratio(np.zeros(5), np.arange(5.0))
    with pytest.raises(ValueError, match="finite"):
        paired_ratio(np.array([0.0, 1.0, np.nan]), np.zeros(3))


def test_the_command_line_names_a_missing_model(tmp_path, capsys) -> None:
    path = tmp_path / "m.json"
    luck = [float(x) for x in np.random.default_rng(5).normal(size=200)]
    path.write_text(json.dumps({"per_wall": {"luck": luck, "big": [x / 2 for x in luck]}}))
    assert main([str(path), "luck", "big"]) == 0
    assert "0.500" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([str(path), "luck", "other"])
