"""The belief guard (``sichuan_env.agents.belief.guard``): its choice on built arrays, legal play."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents.belief.guard import (
    GuardedAgent,
    discard_shanten,
    guard_choice,
    parse_far,
    setting_name,
)
from sichuan_env.agents.belief.model import BeliefModel
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.registry import make_agent
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent

from sichuan_env import RuleConfig
from sichuan_env.engine.actions import DISCARD, PASS, PONG
from sichuan_env.kernels.tables import get_tables


def _mask(legal_tiles, extra=()):
    m = np.zeros(88, dtype=np.int8)
    m[[DISCARD + t for t in legal_tiles]] = 1
    m[list(extra)] = 1
    return m


def test_guard_choice_exact():
    mask = np.stack([_mask([0, 1, 2]), _mask([0, 1, 2]), _mask([], [PONG, PASS])])
    base = np.array([DISCARD + 0, DISCARD + 1, PONG])
    p = np.zeros((3, 27))
    p[0, [0, 1, 2]] = [0.5, 0.3, 0.01]  # risky choice; tile 2 safest but costs a shanten
    p[1, [0, 1, 2]] = [0.0, 0.05, 0.5]  # below the threshold: kept
    p[2, :] = 0.9  # not a discard: kept
    shan = np.full((3, 27), 99)
    shan[:, [0, 1, 2]] = [1, 1, 2]
    assert guard_choice(base, mask, p, shan, 0.1, 0).tolist() == [DISCARD + 1, DISCARD + 1, PONG]
    assert guard_choice(base, mask, p, shan, 0.1, 1).tolist() == [DISCARD + 2, DISCARD + 1, PONG]
    assert guard_choice(base, mask, p, shan, 0.6, 1).tolist() == base.tolist()
    acc = np.zeros((3, 27), dtype=np.int64)
    acc[:, [0, 1, 2]] = [10, 4, 10]  # tile 1 keeps 40% of the heuristic's acceptance
    got = guard_choice(base, mask, p, shan, 0.1, 0, acc, keep=0.5)
    assert got.tolist() == [DISCARD + 0, DISCARD + 1, PONG]  # no replacement qualifies
    got = guard_choice(base, mask, p, shan, 0.1, 1, acc, keep=0.5)
    assert got.tolist() == [DISCARD + 2, DISCARD + 1, PONG]


def test_discard_shanten_of_a_built_hand():
    from sichuan_env.encoding.observation import HAND, VISIBLE, obs_rows

    obs = np.zeros((1, obs_rows(2, False), 27), dtype=np.uint8)
    counts = np.zeros(27, dtype=np.int64)
    np.add.at(counts, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 10, 20], 1)  # 20: a lone 3rd-suit tile
    for k in range(4):
        obs[0, HAND + k] = counts > k
    obs[0, VISIBLE : VISIBLE + 4] = 1  # everything seen ...
    obs[0, VISIBLE + 2 : VISIBLE + 4, [10, 11]] = 0  # ... but 2 copies each of 2p and 3p
    out = np.zeros((1, 27), dtype=np.int64)
    acc = np.zeros((1, 27), dtype=np.int64)
    mask = _mask(np.flatnonzero(counts))[None]
    discard_shanten(obs, mask, get_tables()["DIST"], out, acc)
    assert out[0, 20] == 0  # 123 456 789m 111p + 2p: tenpai after dropping the lone tile
    assert acc[0, 20] == 4  # it waits on 2p (a pair) and 3p (a run): 2 unseen copies each
    assert out[0, 0] >= 1 and out[0, 26] == 99 and acc[0, 26] == 0  # tile 26 is not held


def _play(agent, walls=4):
    """``agent`` in one seat against three heuristics, every wall under the four rotations."""
    lineup = ["guarded", "heuristic", "heuristic", "heuristic"]
    agents = {"guarded": agent, "heuristic": HeuristicAgent()}
    recs = play_duplicate(lineup, walls, RuleConfig(), 1, False, agents=agents)
    assert len(recs) == 4 * walls  # every hand was played to its end
    return recs


def test_guarded_agent_plays_legally_and_reports():
    model = BeliefModel.load("belief")
    agent = GuardedAgent(model, threshold=0.0, slack=1)
    _play(agent)
    assert agent.discards > 0 and agent.guarded > 0  # threshold 0 guards every discard it can
    with pytest.raises(ValueError, match="threshold"):
        GuardedAgent(model, threshold=2.0)
    with pytest.raises(ValueError, match="slack"):
        GuardedAgent(model, slack=-1)
    with pytest.raises(ValueError, match="keep"):
        GuardedAgent(model, keep=1.5)


def test_far_setting_guards_only_far_hands():
    model = BeliefModel.load("belief")
    far = (0.0, 0, 0.0)  # far hands: always the safest tile of the same shanten
    near_only = GuardedAgent(model, threshold=1.0)
    _play(near_only)
    assert near_only.discards > 0 and near_only.guarded == 0  # threshold 1 never guards
    with_far = GuardedAgent(model, threshold=1.0, far=far)
    _play(with_far)
    assert with_far.guarded > 0  # the far setting did guard some discards
    assert with_far.name == "guard(t=1,s=0|>=2:t=0,s=0)"
    # the same far setting past any reachable shanten never applies
    never = GuardedAgent(model, threshold=1.0, far=far, far_shanten=9)
    _play(never, walls=2)
    assert never.discards > 0 and never.guarded == 0


def test_registered_distill_guard_is_the_measured_setting():
    agent = make_agent("distill-guard", seed=0)
    assert (agent.threshold, agent.slack, agent.keep, agent.far) == (0.1, 0, 0.9, None)
    assert agent.base.name == "distill" and agent.obs_version == 2
    _play(agent, walls=1)
    assert agent.discards > 0


def test_far_setting_parsing_and_errors():
    assert parse_far("0.1,1,0.5") == (0.1, 1, 0.5) and parse_far("None") is None
    assert setting_name(0.2, 0, 0.8, (0.1, 1, 0.0), 3) == "guard(t=0.2,s=0,k=0.8|>=3:t=0.1,s=1)"
    for bad in ["0.1,1", "a,b,c", "2,0,0", "0.1,-1,0", "0.1,0,1.5"]:
        with pytest.raises(ValueError):
            parse_far(bad)
    model = BeliefModel.load("belief")
    with pytest.raises(TypeError, match="far"):
        GuardedAgent(model, far=[0.1, 0, 0.0])
    with pytest.raises(ValueError, match="far_shanten"):
        GuardedAgent(model, far=(0.1, 0, 0.0), far_shanten=0)
