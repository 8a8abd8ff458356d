"""The belief-guarded heuristic: the guard's choice on built arrays, legal play in a duplicate match."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.belief_model import BeliefModel
from sichuan_env import RuleConfig
from sichuan_env.engine.actions import DISCARD, PASS, PONG
from sichuan_env.kernels.tables import get_tables
from train.belief_play import GuardedAgent, discard_shanten, experiment, guard_choice


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


def test_guarded_agent_plays_legally_and_reports():
    model = BeliefModel.load("belief")
    res = experiment(4, [0.0], [1], seed=1, rules=RuleConfig(), model=model)
    plain, guarded = res["rows"]
    assert plain["points_per_hand"] == 0.0  # zero-sum: the heuristic holds every seat
    assert guarded["seat_hands"] == 16 and guarded["changed_discards"] > 0  # threshold 0 guards all
    with pytest.raises(ValueError, match="threshold"):
        GuardedAgent(model, threshold=2.0)
    with pytest.raises(ValueError, match="slack"):
        GuardedAgent(model, slack=-1)
    with pytest.raises(ValueError, match="keep"):
        GuardedAgent(model, keep=1.5)


def test_far_setting_guards_only_far_hands():
    model = BeliefModel.load("belief")
    far = (0.0, 0, 0.0)  # far hands: always the safest tile of the same shanten
    res = experiment(4, [1.0], [0], seed=1, rules=RuleConfig(), model=model, fars=(None, far))
    plain, near_only, with_far = res["rows"]
    assert plain["agent"] == "heuristic"
    assert near_only["changed_discards"] == 0.0  # threshold 1 never guards
    assert with_far["changed_discards"] > 0  # the far setting did guard some discards
    assert with_far["agent"] == "guard(t=1,s=0|>=2:t=0,s=0)"
    # the same far setting past any reachable shanten never applies
    agent = GuardedAgent(model, threshold=1.0, far=far, far_shanten=9)
    res = experiment(
        2, [1.0], [0], seed=1, rules=RuleConfig(), model=model, fars=(far,), far_shanten=9
    )
    assert res["rows"][1]["changed_discards"] == 0.0 and agent.far_shanten == 9


def test_far_setting_parsing_and_errors():
    from train.belief_play import main, parse_far, setting_name

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
    with pytest.raises(SystemExit):
        main(["--walls", "2", "--far", "0.1,0"])


def test_guarding_another_policy_pairs_walls():
    model = BeliefModel.load("belief")
    res = experiment(3, [1.0, 0.0], [0], seed=2, rules=RuleConfig(), model=model, base="distill")
    ref, never, always = res["rows"]
    assert ref["agent"] == "distill" and never["agent"] == "distill+guard(t=1,s=0)"
    # a guard that never fires is the base policy: the same points on every wall, gain exactly 0
    assert never["changed_discards"] == 0.0 and never["gain"] == 0.0 and never["gain_ci95"] == 0.0
    assert never["points_per_hand"] == ref["points_per_hand"]
    assert always["changed_discards"] > 0  # threshold 0 guards every discard it can
    assert always["gain"] == pytest.approx(always["points_per_hand"] - ref["points_per_hand"])
    with pytest.raises(TypeError, match="observation v1"):
        GuardedAgent(model, base=GuardedAgent(model))
