"""``HandReader``: exact-policy hand reading by sequential Monte Carlo (heuristic opponents).

Where ``research.hand_reading.filter`` samples whole walls and repairs them,
``HandReader`` follows the hand forward and keeps, for each opponent
separately, ``particles`` hypotheses of its concealed tiles. At each of the
opponent's turns every particle branches into the tiles it may have drawn,
and only the draws after which ``HeuristicAgent`` would have done what the
opponent did are kept; at every other seat's discard or added kong, the
particles whose heuristic answer contradicts the public outcome (it would
have won, or ponged, and did not) are dropped. The kernels are
``research.hand_reading.smc_kernels``; the labels are the engine's own
``opponent_labels``. Only public facts and the seat's own tiles are read
(every engine state is scrubbed first; ``tests/test_belief_smc.py`` checks
that a world with other hidden hands but the same public history gives the
same beliefs).

```python
from research.hand_reading.smc import HandReader

p = HandReader(particles=256).predict_game(game, seat=0)
p["tenpai"], p["waits"], p["hand"], p["deal_in"]  # per decision of seat 0, as BeliefModel's
```
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import research.hand_reading.smc_kernels as K
import research.hand_reading.smc_read as S
from sichuan_env.engine.game import Game
from sichuan_env.engine.labels import label_arrays
from sichuan_env.engine.state import PH_OVER, STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules

EV_MAX = 256
"""Events kept per opponent and hand (more are dropped and counted in ``lost[3]``)."""


def replay_states(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """``(states[n + 1], actions[n])``: the engine state before each decision of ``game``, then after.

    The states are the real ones (hidden facts included); ``read_hand`` scrubs each before use.
    """
    st = game.state
    n = int(st["n_log"])
    offset = int(st["exchange_offset"]) if game.rules.exchange_three else None
    shadow = Game(game.rules, wall=st["wall"], dealer=int(st["dealer"]), exchange_offset=offset)
    states = np.zeros(n + 1, dtype=STATE_DTYPE)
    actions = np.zeros(max(n, 1), dtype=np.int64)
    for k, code in enumerate(st["log"][:n]):
        states[k] = shadow._st[0]
        actions[k] = int(code) % 128
        shadow._apply(int(code) % 128)
    states[n] = shadow._st[0]
    return states, actions


class HandReader:
    """Per-opponent particle filter over concealed hands, for opponents that play the heuristic.

    Args:
        particles: hypotheses kept per opponent.
        seed: the sampler's seed; the output is a function of the public facts, the seat's
            own tiles and the seed.
        moves: replay-checked changes tried per particle when the particles' current hands
            have collapsed (``research.hand_reading.smc_steps``; 0: never).
        collapse: rejuvenate when the distinct current hands times this fall below
            ``particles``.
        repair_tries: particles that search for a consistent trajectory when none explains
            an event (after the restarts failed).
        repair_budget: changes each of them tries.
        restarts: fresh particle sets run through the opponent's events so far when none
            explains the newest one.
        runs: independent particle sets whose beliefs are averaged (each a different
            seed: more runs cover more of the posterior than one larger set).
    """

    def __init__(
        self,
        particles: int = 256,
        seed: int = 0,
        moves: int = 2,
        collapse: int = 4,
        repair_tries: int = 16,
        repair_budget: int = 200,
        runs: int = 1,
        restarts: int = 2,
    ) -> None:
        ints = (("particles", particles), ("seed", seed), ("runs", runs), ("moves", moves),
                ("collapse", collapse), ("repair_tries", repair_tries),
                ("repair_budget", repair_budget), ("restarts", restarts))  # fmt: skip
        for name, v in ints:
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise TypeError(f"{name} must be an int, got {v!r}")
        if not 1 <= particles <= 1 << 16:
            raise ValueError(f"particles must be in [1, 65536], got {particles}")
        if not 0 <= seed < 2**24:
            raise ValueError(f"seed must be in [0, 2**24), got {seed}")
        if not 1 <= runs <= 64:
            raise ValueError(f"runs must be in [1, 64], got {runs}")
        for name, v in ints[3:]:
            if not 0 <= v <= 100_000:
                raise ValueError(f"{name} must be in [0, 100000], got {v}")
        self.particles, self.seed, self.runs = int(particles), int(seed), int(runs)
        self.cfg = np.array(
            [moves, collapse, repair_tries, repair_budget, restarts], dtype=np.int64
        )
        t = get_tables()
        self._flags, self._dist = t["FLAGS"], t["DIST"]
        self._events = (
            np.zeros((3, EV_MAX, K.EV_COLS), np.int64),
            np.zeros((3, EV_MAX, 27), np.int64),
            np.zeros(3, np.int64),
        )

    def predict_game(
        self, game: Game, seat: int, decisions: Sequence[int] | None = None
    ) -> dict[str, np.ndarray]:
        """Beliefs of ``seat`` at its decisions (log indices; default all), in order.

        Returns ``tenpai`` [n, 3], ``waits`` [n, 3, 27] (given tenpai), ``hand`` [n, 3, 27]
        (P(holds >= 1)), ``deal_in`` [n, 27] (some opponent wins on my discard), ``exact``
        [n] (no event was left unexplained so far, in any run), ``proposals`` [n]
        (particles times runs) and ``lost`` ``int64[4]``: events no particle explained,
        restarts or repairs that found a consistent set, accepted rejuvenation moves, events
        dropped (more than ``EV_MAX``), summed over the runs.

        Raises:
            TypeError: ``game`` is not a ``Game``.
            ValueError: a bad seat, or a 换三张 hand or one without 定缺 (not modelled).
        """
        if not isinstance(game, Game):
            raise TypeError(f"game must be a Game, got {type(game).__name__}")
        if game.rules.exchange_three:
            raise ValueError("换三张 hands are not supported by the hand reader")
        if not game.rules.declare_void:
            raise ValueError("the hand reader models 定缺 hands only (declare_void=True)")
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < 4:
            raise ValueError(f"seat must be 0..3, got {seat!r}")
        seat = int(seat)
        states, actions = replay_states(game)
        n = len(states) - 1
        mine = [k for k in range(n) if int(states[k]["to_act"]) == seat]
        if int(states[n]["phase"]) != PH_OVER and int(states[n]["to_act"]) == seat:
            mine.append(n)  # the pending decision
        if decisions is not None:
            want = {int(d) for d in decisions}
            mine = [k for k in mine if k in want]
        rows = np.array(mine, dtype=np.int64)
        m = len(rows)
        acc = {
            "tenpai": np.zeros((m, 3)),
            "waits": np.zeros((m, 3, 27)),  # unconditional here; divided by tenpai at the end
            "hand": np.zeros((m, 3, 27)),
            "deal_in": np.zeros((m, 27)),
        }
        stats = np.zeros(4, dtype=np.int64)
        lost_at = np.zeros(m, dtype=np.int64)
        for run in range(self.runs if m else 0):
            out = {k: np.zeros_like(v) for k, v in acc.items()}
            st_run = np.zeros(4, dtype=np.int64)
            lost_run = np.zeros(m, dtype=np.int64)
            S.read_hand(
                states, actions, n, seat, self.particles, (self.seed * 64 + run) * 4 + seat,
                self.cfg, kernel_rules(game.rules), self._flags, self._dist, rows,
                out["tenpai"], out["waits"], out["hand"], out["deal_in"], st_run, lost_run,
                *self._events, np.zeros(1, dtype=STATE_DTYPE), np.zeros((83, 27), np.uint8),
                np.zeros(88, np.int8), tuple(label_arrays().values()),
            )  # fmt: skip
            out["waits"] *= out["tenpai"][:, :, None]
            for k in acc:
                acc[k] += out[k] / self.runs
            stats += st_run
            lost_at += lost_run
        ten = acc["tenpai"][:, :, None]
        acc["waits"] = np.divide(acc["waits"], ten, out=np.zeros_like(acc["waits"]), where=ten > 0)
        res = {k: np.clip(v, 0.0, 1.0).astype(np.float32) for k, v in acc.items()}
        res["exact"] = lost_at == 0
        res["proposals"] = np.full(m, self.particles * self.runs, dtype=np.int64)
        res["lost"] = stats
        return res
