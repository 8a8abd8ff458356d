"""The agent registry: names, lazy factories, checkpoint loaders, and the CLIs that use it."""

import numpy as np
import pytest
from sichuan_env.agents import Agent, BaseAgent, HeuristicAgent, RandomAgent, registry
from sichuan_env.agents.eval.cli import main as evaluate_main

from sichuan_env import RuleConfig
from sichuan_env.play import play


class FirstLegal(BaseAgent):
    """Always the lowest legal action id (a test agent)."""

    name = "first-legal"

    def __init__(self, seed=None):
        self.seed = seed

    def _act_batch(self, obs, masks):
        return masks.argmax(axis=1)


@pytest.fixture
def clean_registry(monkeypatch):
    """Registrations made by a test vanish after it."""
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))
    monkeypatch.setattr(registry, "_LOADERS", list(registry._LOADERS))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))


def test_builtin_names():
    assert {"random", "heuristic"} <= set(registry.available())
    assert isinstance(registry.make_agent("heuristic"), HeuristicAgent)
    r = registry.make_agent("random", seed=3)
    assert isinstance(r, RandomAgent) and isinstance(r, Agent)
    obs, masks = np.zeros((40, 83, 27), np.uint8), np.ones((40, 88), np.int8)
    again = registry.make_agent("random", seed=3)
    assert np.array_equal(r.act_batch(obs, masks), again.act_batch(obs, masks))


def test_register_a_name_eagerly_and_lazily(clean_registry):
    registry.register("first-legal", FirstLegal)
    registry.register("first-legal-lazy", "test_registry:FirstLegal")
    assert {"first-legal", "first-legal-lazy"} <= set(registry.available())
    for name in ("first-legal", "first-legal-lazy"):
        agent = registry.make_agent(name, seed=7)
        assert (
            agent.seed == 7
            and agent.act(np.zeros((83, 27), np.uint8), np.eye(88, dtype=np.int8)[5]) == 5
        )
    with pytest.raises(ValueError, match="already registered"):
        registry.register("first-legal", FirstLegal)
    registry.register("first-legal", RandomAgent, replace=True)
    assert isinstance(registry.make_agent("first-legal"), RandomAgent)


def test_an_alias_resolves_to_its_target_and_follows_it(clean_registry):
    registry.register("first-legal", FirstLegal)
    registry.register_alias("best-test", "first-legal")
    assert registry.aliases()["best-test"] == "first-legal"
    assert "best-test" in registry.available()
    assert "best-test" not in registry.available(include_aliases=False)
    assert "best-test (= first-legal)" in registry.describe()
    agent = registry.make_agent("best-test", seed=4)
    assert isinstance(agent, FirstLegal) and agent.seed == 4
    registry.register_alias("best-test", "random", replace=True)  # a better agent took over
    assert isinstance(registry.make_agent("best-test"), RandomAgent)
    for name, target, match in (("heuristic", "random", "already registered"),
                                ("best-test", "random", "already registered"),
                                ("x y", "random", "an alias is an agent name"),
                                ("other", "best-test", "names a registered agent"),
                                ("other", "no-such-agent", "names a registered agent")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            registry.register_alias(name, target)


def test_the_shipped_aliases_name_registered_agents():
    shipped = registry.aliases()
    assert set(shipped) == {"strongest", "strongest-net"}
    assert shipped["strongest"] == "ensemble6-guard-search64-after-win"
    for target in shipped.values():
        assert target in registry.available(include_aliases=False)
    assert not getattr(registry.make_agent("strongest-net"), "reads_state", False)  # no search


@pytest.mark.parametrize("name", ["", "a b", "x/y", "x.pt", "9lives", None, 3])
def test_bad_names_are_rejected(clean_registry, name):
    with pytest.raises(ValueError, match="agent name"):
        registry.register(name, FirstLegal)


@pytest.mark.parametrize("factory", [None, 5, "no-colon", "module:"])
def test_bad_factories_are_rejected(clean_registry, factory):
    with pytest.raises(ValueError, match="factory"):
        registry.register("ok", factory)


def test_a_factory_must_return_an_agent(clean_registry):
    registry.register("broken", lambda seed: object())
    with pytest.raises(TypeError, match="not an Agent"):
        registry.make_agent("broken")


def test_unknown_specs_list_the_registered_names():
    for spec in ("nope", "ckpt.pt", "runs/x/best", ""):
        with pytest.raises(ValueError) as err:
            registry.make_agent(spec)
        assert "heuristic" in str(err.value) and "random" in str(err.value)
    for bad in (None, 3, ["heuristic"]):
        with pytest.raises(ValueError, match="name or a path"):
            registry.make_agent(bad)
    for seed in (-1, True, 2.5):
        with pytest.raises(ValueError, match="seed"):
            registry.make_agent("random", seed=seed)


def test_checkpoint_loaders_by_suffix_and_predicate(clean_registry, tmp_path):
    loaded = []

    def load(path, seed):
        loaded.append((path.name, seed))
        return FirstLegal(seed)

    def is_run_dir(path):
        return path.name.startswith("run-")

    registry.register_loader(".ckpt", load)
    registry.register_loader(is_run_dir, load)
    ckpt = tmp_path / "best.ckpt"
    ckpt.write_bytes(b"weights")
    assert isinstance(registry.make_agent(str(ckpt), seed=2), FirstLegal)
    assert isinstance(registry.make_agent(ckpt), FirstLegal)  # a Path works too
    (tmp_path / "run-1").write_text("{}")
    registry.make_agent(tmp_path / "run-1")
    assert loaded == [("best.ckpt", 2), ("best.ckpt", None), ("run-1", None)]
    with pytest.raises(ValueError, match="not a file"):
        registry.make_agent(str(tmp_path / "missing.ckpt"))
    with pytest.raises(ValueError, match=r"\.ckpt, is_run_dir"):
        registry.make_agent(str(tmp_path / "other.bin"))
    for bad in ("pt", ".", 5):
        with pytest.raises(ValueError):
            registry.register_loader(bad, load)

    def unreadable(path, seed):
        raise PermissionError(13, "Permission denied", str(path))

    registry.register_loader(".locked", unreadable)
    (tmp_path / "a.locked").write_text("x")
    with pytest.raises(ValueError, match="cannot read checkpoint"):
        registry.make_agent(tmp_path / "a.locked")


def test_evaluate_and_play_take_registered_agents(clean_registry, capsys):
    # no special case for any name: a new registration works in both CLIs
    registry.register("first-legal", FirstLegal)
    doc = evaluate_main(
        ["--walls", "2", "--quiet", "--lineup", "first-legal", "random", "heuristic", "random"]
    )
    assert set(doc["agents"]) == {"first-legal", "random", "heuristic"}
    assert doc["agents"]["first-legal"]["seat_hands"] == 8
    reads = iter(["0"] * 1000)
    bots = [registry.make_agent("first-legal"), HeuristicAgent(), RandomAgent(0)]
    assert play(1, RuleConfig(), 4, lambda prompt: next(reads), opponents=bots) == 0
    assert "The hand is over." in capsys.readouterr().out
