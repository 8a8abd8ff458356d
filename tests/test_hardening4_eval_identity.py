"""The ladder knows an agent by every file it loads: a composite agent's checkpoints, an
alias's target, a reshipped checkpoint; pair files of the older, name-only format are refused."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents import checkpoint, registry
from sichuan_env.agents.eval import ladder
from sichuan_env.agents.eval.luck import KIND as LUCK_KIND
from sichuan_env.agents.nn.ensemble import ENSEMBLE6
from sichuan_env.agents.nn.torch_agent import KIND as POLICY_KIND

GUARD_FILES = ("distill.pt", "distill.json", "belief.pt", "belief.json")
NET_FILES = (*(f"{n}{e}" for n in ENSEMBLE6 for e in (".pt", ".json")), "belief.pt", "belief.json")
"""What ``strongest-net`` (``ensemble6-guard``) loads."""
ARGS = ["--walls", "2", "--boot", "20", "--quiet", "--no-adjust"]


@pytest.fixture
def shipped(tmp_path, monkeypatch) -> Path:
    """A copy of the checkpoints ``distill-guard`` and ``strongest-net`` load, as the shipped folder."""
    folder = tmp_path / "shipped"
    folder.mkdir()
    for name in {*GUARD_FILES, *NET_FILES}:
        shutil.copy2(checkpoint.SHIPPED_DIR / name, folder / name)
    monkeypatch.setattr(checkpoint, "SHIPPED_DIR", folder)
    monkeypatch.setattr(ladder, "SHIPPED", folder)  # the old lookup, for a fair comparison
    return folder


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _reship(folder: Path, name: str = "distill") -> None:
    """A new ``name.pt`` in ``folder``: other weights, saved as checkpoints are (it loads)."""
    net, doc = checkpoint.load(folder / f"{name}.pt", POLICY_KIND)
    with torch.no_grad():
        next(net.parameters()).mul_(0.5)
    meta = {k: v for k, v in doc.items()
            if k not in ("format", "arch", "obs_version", "created", "sha256")}  # fmt: skip
    checkpoint.save(folder / f"{name}.pt", POLICY_KIND, net, meta)


def test_a_composite_agent_and_its_alias_hash_every_file_they_load(shipped):
    guard = ladder.agent_identity("distill-guard")
    assert guard["sha256"] == {name: _sha(shipped / name) for name in GUARD_FILES}
    alias = ladder.agent_identity("strongest-net")
    assert alias["alias"] == "ensemble6-guard"
    assert alias["sha256"] == {name: _sha(shipped / name) for name in NET_FILES}
    assert ladder.agent_identity("heuristic") == {"spec": "heuristic", "sha256": {}}


def test_a_reshipped_checkpoint_is_another_agent(shipped):
    before = ladder.agent_identity("distill-guard")
    alias_before = ladder.agent_identity("strongest-net")
    _reship(shipped)
    _reship(shipped, "oracle_r3")
    after = ladder.agent_identity("distill-guard")
    assert after["sha256"]["distill.pt"] != before["sha256"]["distill.pt"]
    assert after["sha256"]["belief.pt"] == before["sha256"]["belief.pt"]
    assert ladder.agent_identity("strongest-net") != alias_before
    doc = json.loads((shipped / "belief.json").read_text())  # only the JSON changes
    doc["command"] += " --again"
    (shipped / "belief.json").write_text(json.dumps(doc))
    checkpoint.rehash(shipped / "belief.pt")
    assert (
        ladder.agent_identity("distill-guard")["sha256"]["belief.json"]
        != (after["sha256"]["belief.json"])
    )


def test_moving_an_alias_is_another_agent(shipped, monkeypatch):
    before = ladder.agent_identity("strongest-net")
    monkeypatch.setitem(registry._ALIASES, "strongest-net", "distill")
    after = ladder.agent_identity("strongest-net")
    assert after["alias"] == "distill" and after != before
    assert set(after["sha256"]) == {"distill.pt", "distill.json"}


def test_resume_plays_a_pair_again_after_a_reship(shipped, tmp_path, monkeypatch):
    out = tmp_path / "lad"
    argv = ["--agents", "heuristic", "distill-guard", *ARGS, "--out", str(out)]
    ladder.main(argv)
    played = []
    real = ladder.play_pair

    def counting(*args, **kw):
        played.append(args[:2])
        return real(*args, **kw)

    monkeypatch.setattr(ladder, "play_pair", counting)
    ladder.main([*argv, "--resume"])
    assert played == []  # the same files: the finished pair is reused
    _reship(shipped)
    ladder.main([*argv, "--resume"])
    assert played == [("heuristic", "distill-guard")]  # a new distill.pt: played again
    assert len(list((out / "pairs").glob("*.json"))) == 2


def test_resume_refuses_pair_files_of_the_name_only_format(tmp_path, capsys):
    out = tmp_path / "lad"
    argv = ["--agents", "heuristic", "random", *ARGS, "--out", str(out)]
    ladder.main(argv)
    pair = next((out / "pairs").glob("*.json"))
    doc = json.loads(pair.read_text())
    old = out / "pairs" / "heuristic__distill-guard-0123456789abcdef0123.json"
    old.write_text(json.dumps({**doc, "format": 1, "agents": ["heuristic", "distill-guard"],
                               "identity": {"format": 1, "agents": [
                                   {"spec": "heuristic"}, {"spec": "distill-guard"}]}}))  # fmt: skip
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        ladder.main([*argv, "--resume"])
    err = capsys.readouterr().err
    assert exc.value.code == 1 and "Traceback" not in err
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert len(lines) == 1 and "older ladder format" in lines[0] and "--overwrite" in lines[0]
    assert old.is_file() and pair.is_file()  # nothing on disk lost
    ladder.main([*argv, "--overwrite"])  # the way out the message names
    assert not old.exists()


def test_recording_notes_every_file_load_reads():
    with checkpoint.recording() as outer:
        with checkpoint.recording() as inner:
            checkpoint.load("luck", LUCK_KIND)
        checkpoint.load("luck", LUCK_KIND)
    luck = [checkpoint.SHIPPED_DIR / "luck.pt", checkpoint.SHIPPED_DIR / "luck.json"]
    assert inner == luck and outer == luck * 2
    assert checkpoint._RECORDERS == []
