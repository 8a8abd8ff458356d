"""A stateful (recurrent) agent: one hidden state per (table, seat), cleared where a hand starts.

The toy agent below keeps a decision counter per key and checks the host's
bookkeeping: a key's first decision ever is a start, and a key starts once per
hand. It runs through every host: duplicate matches, VectorEnv self-play with
autoreset, the Gymnasium env's opponents, and terminal play.
"""

from __future__ import annotations

from collections import Counter

import gymnasium
import numpy as np
import pytest
from sichuan_env.agents.eval.evaluate import play_duplicate
from sichuan_env.agents.rule_based.heuristic import HeuristicAgent

import sichuan_env  # noqa: F401  (registers the Gymnasium id)
from sichuan_env import RuleConfig
from sichuan_env.envs.acting import Decisions, SeatMemory, ask, ask_one
from sichuan_env.envs.vector import VectorEnv
from sichuan_env.play import play


class CountingRecurrent:
    """Picks the ``k``-th legal action, ``k`` its decisions so far in this hand (per key)."""

    name = "recurrent"
    obs_version = 1
    stateful = True

    def __init__(self) -> None:
        self.hidden: dict[int, int] = {}
        self.starts: Counter[int] = Counter()
        self.calls = 0

    def act_stateful(self, obs, masks, keys, starts):
        assert obs.shape == (len(keys), 83, 27) and masks.shape == (len(keys), 88)
        out = np.empty(len(keys), dtype=np.int64)
        for i, (key, start) in enumerate(zip(keys.tolist(), starts.tolist(), strict=True)):
            assert start or key in self.hidden, f"key {key}: first decision without a start"
            if start:
                self.hidden[key] = 0
                self.starts[key] += 1
            legal = np.flatnonzero(masks[i])
            out[i] = legal[self.hidden[key] % legal.size]
            self.hidden[key] += 1
        self.calls += 1
        return out

    def act_batch(self, obs, masks):  # what a host that ignores the protocol would call
        raise AssertionError("a stateful agent must be asked through act_stateful")


def test_duplicate_match_starts_each_seat_once_per_hand():
    toy = CountingRecurrent()
    lineup = ["recurrent", "heuristic", "heuristic", "heuristic"]
    recs = play_duplicate(
        lineup, 3, RuleConfig(), 0, False, agents={"recurrent": toy, "heuristic": HeuristicAgent()}
    )
    assert len(recs) == 12 and toy.calls > 0
    # one toy seat per hand, every seat acts in every hand (换三张 and 定缺): 12 starts, one per key
    assert sum(toy.starts.values()) == 12 and set(toy.starts.values()) == {1}


def test_vector_self_play_restarts_a_seat_after_autoreset():
    toy, n = CountingRecurrent(), 4
    venv = VectorEnv(n, seed=3)
    obs, mask, seat = venv.reset()
    memory = SeatMemory(n)
    hands = np.ones(n, dtype=np.int64)  # the hand each slot is playing (1-based)
    for _ in range(400):
        dec = Decisions(
            venv.states_of(np.arange(n)), mask, venv.rules, seat,
            obs=obs, obs_version=1, memory=memory,
        )  # fmt: skip
        obs, mask, seat, _, done, _ = venv.step(ask(toy, dec))
        memory.hand_started(np.flatnonzero(done))
        hands += done
    assert (hands > 1).all()  # every slot finished a hand and went on (the case happened)
    # a seat's starts: one per hand of its slot in which it has acted (every seat acts early)
    for key, count in toy.starts.items():
        assert count in (hands[key // 4] - 1, hands[key // 4]), (key, count)
    assert len(toy.starts) == 4 * n


def test_gym_env_opponents_restart_at_every_reset():
    toy = CountingRecurrent()
    env = gymnasium.make("SichuanMahjong-v0", opponents=[toy, toy, toy], seat=0)
    for hand in range(1, 4):
        _, info = env.reset(seed=hand)
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            _, _, done, _, info = env.step(int(legal[0]))
        assert sorted(toy.starts) == [1, 2, 3] and set(toy.starts.values()) == {hand}


def test_terminal_play_asks_stateful_bots(capsys):
    toy = CountingRecurrent()
    lines = iter(["0"] * 400)  # the human picks the first listed action every time
    assert play(0, RuleConfig(), 5, read=lambda _prompt: next(lines), opponents=[toy] * 3) == 0
    assert "The hand is over" in capsys.readouterr().out
    assert sorted(toy.starts) == [1, 2, 3] and set(toy.starts.values()) == {1}


def test_a_stateful_agent_needs_a_memory():
    venv = VectorEnv(2, seed=0)
    obs, mask, seat = venv.reset()
    dec = Decisions(venv.states_of(np.arange(2)), mask, venv.rules, seat, obs=obs, obs_version=1)
    with pytest.raises(ValueError, match="SeatMemory"):
        ask(CountingRecurrent(), dec)
    game_state = venv.states_of(np.arange(1))[0]
    assert isinstance(ask_one(HeuristicAgent(), game_state, mask[0], venv.rules, int(seat[0])), int)
