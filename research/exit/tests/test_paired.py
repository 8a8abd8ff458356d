"""research.exit.paired: the per-wall difference of two matches on the same walls, and
refusals of matches that are not comparable."""

import json

import numpy as np
import pytest

from research.exit.paired import main, paired

pytestmark = pytest.mark.research


def _match(path, agent, plain, adjusted, seed=52, opponents=("distill",) * 3):
    doc = {"lineup": [agent, *opponents], "walls": len(plain), "seed": seed, "preset": "xuezhan",
           "per_wall": {agent: {"plain": list(plain), "adjusted": list(adjusted)},
                        opponents[0]: {"plain": [0.0] * len(plain), "adjusted": [0.0] * len(plain)}}}  # fmt: skip
    path.write_text(json.dumps(doc))
    return path


def test_the_difference_is_wall_by_wall(tmp_path):
    rng = np.random.default_rng(0)
    deal = rng.normal(0, 2, 400)  # the walls' luck, shared by both matches
    a = _match(tmp_path / "a.json", "a.pt", deal + 0.1, deal + 0.1 + rng.normal(0, 0.1, 400))
    b = _match(tmp_path / "b.json", "b.pt", deal, deal + rng.normal(0, 0.1, 400))
    doc = paired(a, b)
    d = doc["a_minus_b_plain"]
    assert d["mean"] == pytest.approx(0.1) and d["ci95"] < 1e-9  # the deals cancel exactly
    assert doc["a_plain"]["ci95"] > 0.1  # while each match alone carries them
    ad = doc["a_minus_b_adjusted"]
    assert 0.05 < ad["mean"] < 0.15 and 0 < ad["ci95"] < 0.05
    assert (doc["a"], doc["b"], doc["walls"], doc["seed"]) == ("a.pt", "b.pt", 400, 52)
    out = tmp_path / "p.json"
    assert main([str(a), str(b), "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(json.dumps(doc))
    with pytest.raises(SystemExit):  # an existing output is not replaced without --overwrite
        main([str(a), str(b), "--out", str(out)])
    assert main([str(a), str(b), "--out", str(out), "--overwrite"]) == 0


def test_matches_that_are_not_comparable_are_refused(tmp_path):
    a = _match(tmp_path / "a.json", "a.pt", [1.0, 2.0], [1.0, 2.0])
    for kw in ({"seed": 53}, {"opponents": ("heuristic",) * 3}):
        b = _match(tmp_path / "b.json", "b.pt", [1.0, 2.0], [1.0, 2.0], **kw)
        with pytest.raises(ValueError, match="not the same walls"):
            paired(a, b)
    short = _match(tmp_path / "c.json", "c.pt", [1.0], [1.0, 2.0])  # walls 1, two samples
    with pytest.raises(ValueError, match="per-wall samples"):
        paired(a, short)
    (tmp_path / "d.json").write_text("{}")
    with pytest.raises(ValueError, match="not a sichuan-eval JSON"):
        paired(a, tmp_path / "d.json")
    with pytest.raises(SystemExit):
        main([str(a), str(tmp_path / "d.json")])
