"""A policy-aware belief filter: what heuristic opponents hold, by sampling walls that explain their play.

The data's opponents play ``HeuristicAgent``, a deterministic function of
what each sees. ``BeliefFilter`` samples the hidden tiles (a whole wall, see
``research.hand_reading.filter_kernels``) so that, replayed by the engine, the hand
shows exactly the public history the observing seat saw, every opponent
decision is the heuristic's own, and the observer's own observation is the
real one; it then averages the engine's exact labels over the samples::

    from research.hand_reading.filter import BeliefFilter

    f = BeliefFilter()  # 16 walls, 500 moves each per decision: about 0.8 s a decision
    p = f.predict_game(game, seat)  # every decision of seat, or decisions=[...]
    p["tenpai"], p["waits"], p["hand"], p["deal_in"]  # [N,3], [N,3,27], [N,3,27], [N,27]

The output matches ``BeliefModel.predict`` (``waits`` conditional on tenpai),
plus ``exact`` (bool[N]: some wall of energy 0 was found; otherwise the row
averages walls that explain all but a few opponent decisions, or, with no
feasible wall at all, repeats the seat's previous beliefs, ``PRIOR`` at its
first decision), ``energy`` (int[N], the lowest particle's before
resampling), ``good`` (int[N], particles at energy 0 before resampling) and
``proposals`` (int[N], replays made).

What it reads: only the observer's public event tokens
(``sichuan_env.encoding.events``), its own past actions, and its own v2
observation at the decision (``public_inputs``); the hidden state of the
game passed in is never read (``tests/test_belief_filter.py`` checks that
games differing only in hidden tiles give the same output). 换三张 is not
supported (the picks are hidden); rules with it raise ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import research.hand_reading.filter_kernels as K
import research.hand_reading.filter_moves as M
from research.hand_reading.public import PublicView, public_inputs, public_view
from sichuan_env.engine.game import Game
from sichuan_env.engine.labels import label_arrays
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

__all__ = ["PRIOR", "BeliefFilter", "PublicView", "energy", "public_inputs", "public_view",
           "replay_wall", "sample_wall"]  # fmt: skip

PRIOR = {"tenpai": 0.2, "waits": 0.05, "hand": 0.5, "deal_in": 0.05}
"""Fallback probabilities (and pseudo-count priors) when no consistent wall is found."""


class BeliefFilter:
    """Sampling walls consistent with the public history and heuristic opponents.

    Each of ``particles`` walls is carried from one decision of the seat to the
    next (its known tiles moved into place), the opponents' draws since then
    redrawn (``research.hand_reading.filter_moves.redraw``), annealed back to energy 0
    and moved ``steps`` times (``moves.chain``: Metropolis over energy at most
    ``slack``, counting only walls at 0). Particles that stay above 0 are
    replaced by copies of those at 0, which then move ``steps`` times too
    (resampling); if none is at 0, the two closest particles and then one fresh
    wall get ``restart_burn`` replays each until one reaches 0. The beliefs average the labels after every move of every
    particle at energy 0.

    Args:
        particles: walls carried through the hand.
        steps: moves per particle and decision.
        burn: at most this many proposals per particle to reach energy 0 at each decision.
        restart_burn: replays for each of the two closest particles, then for a fresh
            wall, when no particle reached energy 0 (stopping at the first that does).
        temp: temperature for policy mismatches (burn-in, and walls above 0 while sampling).
        seed: the sampler's seed; the output is a function of the inputs and the seed.
        redraws: share of the moves that are redraws of one position (the rest: swaps).
        slack: while sampling, walls up to this energy are visited (0: only consistent ones).
    """

    def __init__(
        self,
        particles: int = 16,
        steps: int = 500,
        burn: int = 800,
        restart_burn: int = 3000,
        temp: float = 0.7,
        seed: int = 0,
        redraws: float = 0.0,
        slack: int = 1,
    ) -> None:
        ints = (("particles", particles), ("steps", steps), ("burn", burn),
                ("restart_burn", restart_burn), ("seed", seed), ("slack", slack))  # fmt: skip
        for name, v in ints:
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{name} must be an int, got {v!r}")
            if v < 0:
                raise ValueError(f"{name} must be >= 0, got {v}")
        if not isinstance(temp, (int, float)) or not temp > 0:
            raise ValueError(f"temp must be a positive number, got {temp!r}")
        if not isinstance(redraws, (int, float)) or not 0 <= redraws <= 1:
            raise ValueError(f"redraws must be a probability, got {redraws!r}")
        if particles < 1:
            raise ValueError(f"particles must be >= 1, got {particles}")
        self.particles, self.steps, self.burn = particles, steps, burn
        self.restart_burn, self.temp, self.seed = restart_burn, float(temp), seed
        self.redraws, self.slack = float(redraws), slack
        t = get_tables()
        self._flags, self._waits, self._dist = t["FLAGS"], t["WAITS"], t["DIST"]

    def predict_game(
        self, game: Game, seat: int, decisions: Sequence[int] | None = None
    ) -> dict[str, np.ndarray]:
        """Beliefs of ``seat`` at its decisions (log indices; default all), in order."""
        if not isinstance(game, Game):
            raise TypeError(f"game must be a Game, got {type(game).__name__}")
        if game.rules.exchange_three:
            raise ValueError("换三张 hands are not supported by the belief filter")
        if not isinstance(seat, (int, np.integer)) or not 0 <= seat < 4:
            raise ValueError(f"seat must be 0..3, got {seat!r}")
        rows = public_inputs(game, int(seat))
        if decisions is not None:
            want = {int(d) for d in decisions}
            rows = [r for r in rows if r[0] in want]
        return self.predict_rows(game.rules, int(seat), rows)

    def predict_rows(
        self, rules_cfg, seat: int, rows: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]
    ) -> dict[str, np.ndarray]:
        """``predict_game`` on ``public_inputs`` rows of one seat in one hand (in order)."""
        n = len(rows)
        out = {
            "tenpai": np.full((n, 3), PRIOR["tenpai"], np.float32),
            "waits": np.full((n, 3, 27), PRIOR["waits"], np.float32),
            "hand": np.full((n, 3, 27), PRIOR["hand"], np.float32),
            "deal_in": np.full((n, 27), PRIOR["deal_in"], np.float32),
            "exact": np.zeros(n, dtype=bool),
            "proposals": np.zeros(n, dtype=np.int64),
            "energy": np.zeros(n, dtype=np.int64),
            "good": np.zeros(n, dtype=np.int64),
        }
        rules = kernel_rules(rules_cfg)
        states = np.zeros(1, dtype=STATE_DTYPE)
        scratch = _scratch()
        rng = np.random.default_rng([self.seed, seat])
        walls: list[np.ndarray | None] = [None] * self.particles
        seen = 0  # public events at the previous decision
        for k, (_, tokens, own, target) in enumerate(rows):
            v = public_view(tokens, seat)
            args = (states, v, own, target, rules, rng, scratch)
            energies, sums, n_s, n_prop = [], np.zeros((7, 28)), 0, 0
            new = _new_draws(v, seen)
            seen = len(v.events)
            for i in range(self.particles):
                sweep = new if walls[i] is not None else new[:0]
                walls[i] = _fit_wall(walls[i], v, rng)
                e, n, _ = self._chain(walls[i], *args, np.zeros((7, 28)), self.burn, 0, sweep)
                energies.append(e)
                n_prop += n
            good = [i for i, e in enumerate(energies) if e == 0]
            out["good"][k] = len(good)
            if (
                not good
            ):  # none explains the history: the two closest burn longer, then a fresh wall
                near = sorted(range(self.particles), key=energies.__getitem__)
                for i in [*near[:2], near[-1]]:
                    if i == near[-1]:
                        walls[i] = _fit_wall(None, v, rng)
                    energies[i], n, _ = self._chain(
                        walls[i], *args, np.zeros((7, 28)), self.restart_burn, 0
                    )
                    n_prop += n
                    if energies[i] == 0:
                        good = [i]
                        break
            if good:
                for i in range(self.particles):  # resample, then move every particle
                    if energies[i] != 0:
                        walls[i] = walls[good[int(rng.integers(len(good)))]].copy()  # type: ignore[union-attr]
                    _, n, m = self._chain(walls[i], *args, sums, 0, self.steps)
                    n_prop, n_s = n_prop + n, n_s + m
            else:  # walls that explain all but a few opponent decisions, if any
                for i in range(self.particles):
                    if energies[i] < K.BIG:
                        _, n, m = self._chain(walls[i], *args, sums, 0, self.steps)
                        n_prop, n_s = n_prop + n, n_s + m
            out["proposals"][k] = n_prop
            out["energy"][k] = min(energies)
            if n_s == 0:  # no feasible wall: keep the previous decision's beliefs
                if k > 0:
                    for key in ("tenpai", "waits", "hand", "deal_in"):
                        out[key][k] = out[key][k - 1]
                continue
            out["exact"][k] = bool(good)
            tp = sums[:3, 27]
            out["tenpai"][k] = (tp + PRIOR["tenpai"]) / (n_s + 1)
            out["waits"][k] = (sums[:3, :27] + PRIOR["waits"]) / (tp[:, None] + 1)
            out["hand"][k] = (sums[3:6, :27] + PRIOR["hand"]) / (n_s + 1)
            out["deal_in"][k] = (sums[6, :27] + PRIOR["deal_in"]) / (n_s + 1)
        return out

    def _chain(
        self, wall, states, v, own, target, rules, rng, scratch, sums, burn: int, steps: int,
        sweep: np.ndarray | None = None,
    ) -> tuple[int, int, int]:  # fmt: skip
        """One ``moves.chain`` run on ``wall`` (in place); ``(energy, replays, samples)``.

        With ``steps`` 0 it only anneals (at most ``burn`` replays) towards energy 0,
        after redrawing the positions of ``sweep`` (default none).
        """
        movable = np.flatnonzero((v.owner >= 0) & (v.owner != v.me) & (v.pin < 0))
        pool = np.concatenate([movable, v.undrawn])
        sweep = movable[:0] if sweep is None else sweep
        e, n_prop, _, n_s = M.chain(
            states, wall, movable, pool, v.undrawn, sweep, v.owner, v.when, burn, max(steps, 1),
            self.temp, self.redraws, self.slack if steps else 0, int(rng.integers(2**31)), v.dealer, rules, self._flags,
            self._waits, self._dist, v.me, v.events, len(v.events), v.voids, own, len(own),
            target, *scratch[:5], sums, *scratch[5:],
        )  # fmt: skip
        return int(e), int(n_prop), int(n_s)


def _scratch() -> tuple:
    """Work arrays of the kernels: v1 and v2 planes, mask, fail, labels, checkpoint."""
    return (np.zeros((83, 27), np.uint8), np.zeros((232, 27), np.uint8),
            np.zeros(88, np.int8), np.zeros(3, np.int64), tuple(label_arrays().values()),
            np.zeros(1, dtype=STATE_DTYPE), np.zeros(6, np.int64))  # fmt: skip


def _new_draws(v: PublicView, seen: int) -> np.ndarray:
    """Opponents' unknown draws after the first ``seen`` public events, in draw order."""
    new = np.flatnonzero((v.when >= seen) & (v.owner != v.me) & (v.pin < 0))
    return new[np.argsort(v.when[new], kind="stable")]


def _fit_wall(wall: np.ndarray | None, v: PublicView, rng: np.random.Generator) -> np.ndarray:
    """A wall with ``v``'s known tiles in place: the previous particle moved as little as possible."""
    if wall is None:
        return _fresh_wall(v, rng)
    wall = wall.copy()
    undrawn = set(v.undrawn.tolist())
    for p in np.flatnonzero(v.pin >= 0):
        t = v.pin[p]
        if wall[p] == t:
            continue
        cand = np.flatnonzero((wall == t) & (v.pin < 0))
        if cand.size == 0:  # cannot happen for a consistent view; start afresh
            return _fit_wall(None, v, rng)
        pref = [q for q in cand if q in undrawn]
        q = pref[0] if pref else cand[0]
        wall[p], wall[q] = wall[q], wall[p]
    return wall


_NEEDS = {K.EV_DISCARD: 1, K.EV_PONG: 2, K.EV_KONG: 3, K.EV_ADDED: 1, K.EV_CONCEALED: 4}


def _fresh_wall(v: PublicView, rng: np.random.Generator) -> np.ndarray:
    """A random wall with ``v``'s known tiles in place, built to be nearly consistent.

    Each opponent gets, in slots it had drawn by then, the tiles its public
    discards and melds took from its hand, and otherwise no tiles of its void
    suit; the MCMC corrects what this misses.
    """
    free = np.full(27, 4, dtype=np.int64) - np.bincount(v.pin[v.pin >= 0], minlength=27)
    wall = np.where(v.pin >= 0, v.pin, 0).astype(np.uint8)
    open_ = v.pin < 0
    for s in rng.permutation([x for x in range(4) if x != v.me]):
        slots = [p for p in rng.permutation(np.flatnonzero(open_ & (v.owner == s)))]
        for idx, (kind, seat, t, tsumo) in enumerate(v.events.tolist()):
            if seat != s or kind not in _NEEDS or (kind == K.EV_DISCARD and tsumo):
                continue
            for _ in range(_NEEDS[kind]):
                ok = [p for p in slots if v.when[p] < idx]
                if not ok or free[t] == 0:
                    break
                wall[ok[0]] = t
                free[t] -= 1
                slots.remove(ok[0])
                open_[ok[0]] = False
        for p in slots:
            allowed = free.copy()
            if (
                v.voids[s] >= 0
                and allowed.sum() > allowed[9 * v.voids[s] : 9 * v.voids[s] + 9].sum()
            ):
                allowed[9 * v.voids[s] : 9 * v.voids[s] + 9] = 0
            t = rng.choice(27, p=allowed / allowed.sum())
            wall[p] = t
            free[t] -= 1
            open_[p] = False
    rest = np.flatnonzero(open_)
    wall[rest] = rng.permutation(np.repeat(np.arange(27, dtype=np.uint8), free))
    return wall


def _row(game: Game, seat: int, decision: int) -> tuple[PublicView, np.ndarray, np.ndarray]:
    rows = [r for r in public_inputs(game, seat) if r[0] == decision]
    if not rows:
        raise ValueError(f"decision {decision} is not seat {seat}'s")
    _, tokens, own, target = rows[0]
    return public_view(tokens, seat), own, target


def replay_wall(game: Game, seat: int, decision: int, wall: np.ndarray) -> tuple[int, np.ndarray]:
    """``(energy, state)`` of ``wall`` at ``seat``'s decision ``decision`` (0: consistent).

    ``state`` is the engine record the filter replayed (``STATE_DTYPE``); its
    log rebuilds the world the wall explains. For tests and inspection.
    """
    v, own, target = _row(game, seat, decision)
    t = get_tables()
    states = np.zeros(1, dtype=STATE_DTYPE)
    e = K.replay(
        states, np.asarray(wall, dtype=np.uint8), v.dealer, kernel_rules(game.rules),
        t["FLAGS"], t["WAITS"], t["DIST"], seat, v.events, len(v.events), v.voids,
        own, len(own), target, np.zeros((83, 27), np.uint8), np.zeros((232, 27), np.uint8),
        np.zeros(88, np.int8), np.zeros(3, np.int64),
    )  # fmt: skip
    return int(e), states[0]


def energy(game: Game, seat: int, decision: int, wall: np.ndarray) -> int:
    """The energy of ``wall`` at ``seat``'s decision ``decision`` (0: consistent)."""
    return replay_wall(game, seat, decision, wall)[0]


def sample_wall(
    game: Game, seat: int, decision: int, burn: int = 5000, seed: int = 0
) -> tuple[np.ndarray, int]:
    """One wall from a fresh chain at ``seat``'s decision ``decision``, and its energy."""
    v, own, target = _row(game, seat, decision)
    f = BeliefFilter(seed=seed)
    rng = np.random.default_rng(seed)
    wall = _fresh_wall(v, rng)
    scratch = _scratch()
    states = np.zeros(1, dtype=STATE_DTYPE)
    sums = np.zeros((7, 28), dtype=np.float64)
    rules = kernel_rules(game.rules)
    e, _, _ = f._chain(wall, states, v, own, target, rules, rng, scratch, sums, burn, 0)
    return wall, e
