"""Whole-hand random play in peer mahjong simulators, for ``benchmarks/engine.py``.

Each runner plays random legal actions for about ``budget`` seconds and
returns ``(hands, decisions, seconds)``. A decision is one action taken by
one player. Peers play other games (riichi, or rlcard's simplified mahjong),
so hand lengths differ; decisions/s is the comparable figure.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

NOTES = {
    "rlcard": "rlcard 'mahjong' (a simplified Chinese game, 136 tiles), env.run with its RandomAgent",
    "riichienv": "riichi, one hand (game_mode 4p-red-single), its RandomAgent on Observation.legal_actions",
    "pymahjong": "riichi, MahjongEnv, random choice among get_valid_actions()",
    "mahjax": "riichi, one round (round_mode single), jit(vmap(step)) over 256 tables on the CPU",
}


def rlcard_runner(budget: float) -> tuple[int, int, float]:
    """rlcard's mahjong with random agents."""
    import rlcard
    from rlcard.agents import RandomAgent

    env = rlcard.make("mahjong", config={"seed": 0})
    counter = [0]

    class Counting(RandomAgent):
        def step(self, state):
            counter[0] += 1
            return super().step(state)

        def eval_step(self, state):
            counter[0] += 1
            return super().eval_step(state)

    env.set_agents([Counting(num_actions=env.num_actions) for _ in range(env.num_players)])
    hands = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget:
        env.run(is_training=False)
        hands += 1
    return hands, counter[0], time.perf_counter() - t0


def riichienv_runner(budget: float) -> tuple[int, int, float]:
    """riichienv, one hand per reset."""
    import riichienv
    from riichienv.agents.random_agent import RandomAgent

    env = riichienv.RiichiEnv(game_mode="4p-red-single", skip_mjai_logging=True, seed=1)
    agent = RandomAgent(0)
    hands = decisions = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget:
        obs = env.reset()
        while not env.done():
            actions = {pid: agent.act(o) for pid, o in obs.items()}
            decisions += len(actions)
            obs = env.step(actions)
        hands += 1
    return hands, decisions, time.perf_counter() - t0


def pymahjong_runner(budget: float) -> tuple[int, int, float]:
    """pymahjong's MahjongEnv with random valid actions."""
    import pymahjong

    env = pymahjong.MahjongEnv()
    rng = random.Random(0)
    hands = decisions = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget:
        env.reset()
        while not env.is_over():
            pid = env.get_curr_player_id()
            env.step(pid, rng.choice(env.get_valid_actions()))
            decisions += 1
        hands += 1
    return hands, decisions, time.perf_counter() - t0


def mahjax_runner(budget: float, batch: int = 256) -> tuple[int, int, float]:
    """mahjax on the CPU: jit(vmap(step)) with random legal actions (compile not timed)."""
    import jax
    import jax.numpy as jnp
    import mahjax

    env = mahjax.make("no_red_mahjong", round_mode="single")
    init = jax.jit(jax.vmap(env.init))
    step = jax.jit(jax.vmap(env.step))

    @jax.jit
    def act(key, mask):
        logits = jnp.where(mask, 0.0, -jnp.inf)
        return jax.random.categorical(key, logits, axis=-1)

    key = jax.random.PRNGKey(0)
    key, sub = jax.random.split(key)
    state = init(jax.random.split(sub, batch))

    def advance(state, key):
        k1, k2 = jax.random.split(key)
        return step(state, act(k1, state.legal_action_mask), jax.random.split(k2, batch))

    key, sub = jax.random.split(key)
    state = advance(state, sub)  # compile
    jax.block_until_ready(state)
    hands = decisions = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget:
        live = ~state.terminated
        key, sub = jax.random.split(key)
        state = advance(state, sub)
        decisions += int(live.sum())
        done = int((state.terminated & live).sum())
        hands += done
        if bool(state.terminated.all()):
            key, sub = jax.random.split(key)
            state = init(jax.random.split(sub, batch))
    jax.block_until_ready(state)
    return hands, decisions, time.perf_counter() - t0


RUNNERS: dict[str, Callable[[float], tuple[int, int, float]]] = {
    "rlcard": rlcard_runner,
    "riichienv": riichienv_runner,
    "pymahjong": pymahjong_runner,
    "mahjax": mahjax_runner,
}


def run_all(names: list[str], budget: float) -> tuple[dict[str, dict], list[str]]:
    """Run each named peer for ``budget`` seconds.

    Returns ``({name: {"hands", "decisions", "seconds"}}, skipped notes)``;
    a peer that is not installed is skipped with a note.
    """
    results: dict[str, dict] = {}
    skipped: list[str] = []
    for name in names:
        try:
            hands, decisions, seconds = RUNNERS[name](budget)
        except ImportError as exc:
            skipped.append(f"{name}: not installed ({exc.name}); pip install -e .[bench]")
            continue
        results[name] = {"hands": hands, "decisions": decisions, "seconds": seconds}
    return results, skipped


def print_notes(names: list[str], skipped: list[str]) -> None:
    """The rule notes of the peers that ran, and the skipped ones."""
    print("Peers play other games:")
    for name in names:
        if name in NOTES and not any(s.startswith(f"{name}:") for s in skipped):
            print(f"  {name}: {NOTES[name]}")
    for note in skipped:
        print(f"  skipped {note}")
