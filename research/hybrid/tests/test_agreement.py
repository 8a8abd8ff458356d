"""The agreement tool: the hybrid plays its network wherever it does not search."""

import json

import pytest

from research.hybrid import agreement

pytestmark = pytest.mark.research


def test_the_network_is_the_hybrid_wherever_it_did_not_search(tmp_path, capsys):
    out = tmp_path / "a.json"
    distill = "agents/checkpoints/distill.pt"
    args = ["--nets", distill, "agents/checkpoints/rollout-small.pt", "--teacher",
            "distill-search-after-win", "--envs", "8", "--steps", "140", "--skip", "10",
            "--json", str(out)]  # fmt: skip
    assert agreement.main(args) == 0
    body = json.loads(out.read_text())
    assert body["searched"] > 0 and body["decisions"] > body["searched"]  # both kinds happened
    first, small = body["nets"]
    assert first["not_searched"] == 1.0  # the hybrid's own network, where it answered alone
    assert body["changed"] > 0 and first["changed"] == 0.0  # "changed": where it left the first
    assert small["not_searched"] < 1.0  # a different network is told apart
    assert "searched" in capsys.readouterr().out


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        agreement.main(["--nets", "x.pt", "--skip", "10", "--steps", "5"])
    with pytest.raises(SystemExit):
        agreement.main(["--nets", "agents/checkpoints/distill.pt", "--teacher", "distill"])
