"""The one checkpoint module (``sichuan_env.agents.checkpoint``) under doctored files.

Every doctored file here has a *matching* hash (the attacker rewrote it), so the content
checks must catch it: an oversized architecture before anything is built, tensors that
are sparse, on the ``meta`` device, quantized or integer, deeply nested or huge JSON.
Policy and belief checkpoints go through the same code; the shipped ones still load and
the rehash script leaves them as they are.
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents import checkpoint
from sichuan_env.agents.belief.model import BeliefConfig, BeliefModel, BeliefNet, save_belief
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import TorchAgent, load_network, save_checkpoint

from sichuan_env import RuleConfig

META = {"rules": RuleConfig().to_dict(), "method": "test", "command": "pytest", "commit": "x",
        "wall_clock_s": 1.0}  # fmt: skip
ROOT = Path(__file__).resolve().parents[1]


def _save(tmp_path: Path, name: str = "a") -> Path:
    torch.manual_seed(0)
    return save_checkpoint(
        tmp_path / f"{name}.pt", PolicyNet(PolicyConfig(hidden=16, layers=1)), META
    )


def _doc(path: Path) -> dict:
    return json.loads(checkpoint.config_path(path).read_text())


def _rehash(path: Path, doc: dict) -> None:
    """Write ``doc`` with the sha256 of the weights and ``doc``: a consistent, doctored pair."""
    doc = {**doc, "sha256": checkpoint.digest(path, doc)}
    checkpoint.config_path(path).write_text(json.dumps(doc), encoding="utf-8")


def _reweigh(path: Path, state: dict) -> None:
    torch.save(state, path)
    _rehash(path, _doc(path))


@pytest.mark.parametrize(
    ("arch", "match"),
    [
        # 1.2e9 values: refused from the config alone (the meta device builds nothing)
        ({"arch": "conv", "hidden": 4096, "layers": 16}, "holds .* values"),
        # 1.2e8 values, under the bound: the file's tensors are compared before building
        ({"hidden": 4096, "layers": 7}, "tensors missing"),
    ],
)
def test_a_doctored_architecture_is_refused_before_anything_is_built(tmp_path, arch, match):
    path = _save(tmp_path)
    doc = _doc(path)
    _rehash(path, {**doc, "arch": {**doc["arch"], **arch}})
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        load_network(path)
    assert time.perf_counter() - t0 < 5.0  # building it would take 10-40 s and gigabytes


def _bad_tensors(state: dict) -> dict[str, object]:
    key = "policy.bias"
    q = torch.quantize_per_tensor(state[key].float(), 0.1, 0, torch.quint8)
    return {
        "sparse": state[key].to_sparse(),
        "sparse_csr": state["policy.weight"].to_sparse_csr(),
        "meta": torch.empty(state[key].shape, device="meta"),
        "quantized": q,
        "integer": state[key].long(),
        "float64": state[key].double(),
        "strided": torch.zeros(state[key].shape[0] * 2)[::2],
        "not a tensor": [0.0] * state[key].shape[0],
    }


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch: beta sparse CSR, deprecated quint8
@pytest.mark.parametrize(
    "bad", ["sparse", "sparse_csr", "meta", "quantized", "integer", "float64", "strided",
            "not a tensor"],
)  # fmt: skip
def test_tensors_that_are_not_dense_float_cpu_ones_are_value_errors(tmp_path, bad):
    path = _save(tmp_path)
    state = torch.load(path, weights_only=True)
    _reweigh(path, {**state, "policy.bias": _bad_tensors(state)[bad]})
    with pytest.raises(ValueError, match=r"policy\.bias") as info:
        TorchAgent.load(path)
    assert len(str(info.value)) < 400


def test_belief_checkpoints_go_through_the_same_checks(tmp_path):
    net = BeliefNet(BeliefConfig(hidden=8, layers=1, tile_channels=4))
    path = save_belief(tmp_path / "b.pt", net, META, dtype="float16")
    assert BeliefModel.load(path).net.config.hidden == 8
    state = torch.load(path, weights_only=True)
    key = next(iter(state))
    _reweigh(
        path, {**state, key: torch.empty(state[key].shape, device="meta", dtype=torch.float16)}
    )
    with pytest.raises(ValueError, match="not a dense CPU tensor"):
        BeliefModel.load(path)
    torch.save(state, path)
    doc = _doc(path)
    _rehash(path, {**doc, "arch": {**doc["arch"], "hidden": 4096, "layers": 6}})
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="tensors missing"):
        BeliefModel.load(path)
    assert time.perf_counter() - t0 < 5.0


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"rules": ' + "[" * 40 + "]" * 40 + "}", "deeper than"),
        ('{"pad": "' + "x" * (2 << 20) + '"}', "larger than"),
        ('{"a": 1}\xff', "not valid JSON"),
    ],
)
def test_hostile_json_is_a_value_error(tmp_path, text, match):
    path = _save(tmp_path)
    checkpoint.config_path(path).write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(ValueError, match=match):
        load_network(path)


def test_the_hash_covers_the_config(tmp_path):
    path = _save(tmp_path)
    doc = _doc(path)
    for edit in ({"rules": {**doc["rules"], "base_points": 2}}, {"val_acc": 1.0},
                 {"arch": {**doc["arch"], "hidden": 32}}):  # fmt: skip
        checkpoint.config_path(path).write_text(json.dumps({**doc, **edit}))
        with pytest.raises(ValueError, match="do not match the sha256"):
            load_network(path)
    checkpoint.config_path(path).write_text(json.dumps({**doc, "sha256": "ab" * 31 + "zz"}))
    with pytest.raises(ValueError, match="64 hex"):
        load_network(path)


def test_saving_non_finite_weights_writes_nothing(tmp_path):
    path = _save(tmp_path)
    before = path.read_bytes(), checkpoint.config_path(path).read_bytes()
    net = PolicyNet(PolicyConfig(hidden=16, layers=1))
    with torch.no_grad():
        net.policy.weight[0, 0] = float("inf")
    with pytest.raises(ValueError, match="non-finite"):
        save_checkpoint(path, net, META)
    with pytest.raises(ValueError, match="JSON-serialisable"):
        save_checkpoint(tmp_path / "b.pt", PolicyNet(PolicyConfig(hidden=16, layers=1)),
                        {**META, "x": object()})  # fmt: skip
    assert (path.read_bytes(), checkpoint.config_path(path).read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "a.pt"]  # no temporaries


def _rehash_script():
    spec = importlib.util.spec_from_file_location(
        "rehash", ROOT / "tests/data/rehash_checkpoints.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_checkpoints_load_and_the_rehash_script_leaves_them_alone(capsys):
    for name in ("bc", "ppo", "distill", "exit"):
        assert TorchAgent.load(name).meta["format"] == "sichuan-torch-agent/1"
    assert BeliefModel.load("belief").meta["format"] == "sichuan-belief/1"
    from sichuan_env.agents.eval.luck import LuckModel

    assert LuckModel.load("luck").doc["format"] == "sichuan-luck-value/1"
    script = _rehash_script()
    before = {p: p.read_bytes() for p in checkpoint.SHIPPED_DIR.iterdir()}
    assert script.main([]) == 0
    assert capsys.readouterr().out.count(": current") == len(
        list(checkpoint.SHIPPED_DIR.glob("*.pt"))
    )
    assert {p: p.read_bytes() for p in checkpoint.SHIPPED_DIR.iterdir()} == before


def test_the_rehash_script_upgrades_an_old_checkpoint_only(tmp_path):
    path = _save(tmp_path)
    weights = path.read_bytes()
    doc = _doc(path)
    old = {**doc, "sha256": checkpoint.file_sha256(path)}  # how checkpoints were hashed before
    checkpoint.config_path(path).write_text(json.dumps(old, indent=2))
    with pytest.raises(ValueError, match="predates hashed configs"):
        load_network(path)
    script = _rehash_script()
    assert script.rehash_one(path) == "rehashed" and path.read_bytes() == weights
    assert load_network(path)[1]["sha256"] == doc["sha256"]
    checkpoint.config_path(path).write_text(json.dumps({**doc, "sha256": "0" * 64}))
    assert script.rehash_one(path).startswith("error")  # neither hash: left alone


def test_greedy_must_be_a_bool():
    net = PolicyNet(PolicyConfig(hidden=16, layers=1))
    for bad in ("no", "", 0, 1, None, [True]):
        with pytest.raises(TypeError, match="greedy must be True or False"):
            TorchAgent(net, greedy=bad)
    assert TorchAgent(net, greedy=False).greedy is False


def test_a_missing_checkpoint_is_named_as_given(tmp_path, capsys, monkeypatch):
    from sichuan_env.train.policy import ppo

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        ppo.main(["--init", "runs/missing.pt", "--iterations", "1", "--run", "runs/ppo"])
    assert exit_.value.code != 0
    err = capsys.readouterr().err
    assert "'runs/missing.pt' is missing" in err and "missing.json" not in err
