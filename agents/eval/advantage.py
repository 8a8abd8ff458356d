"""The advantage-sum estimate: every decision scored by its advantage under a reference policy.

Take a deterministic reference policy ``mu`` that the kernels can roll out: a rule-based
style (``heuristic``, ``value``, ``defensive``) or a greedy MLP network agent such as
``distill``, played by ``numba_policy``. With ``V`` and ``Q`` the values of ``mu``'s own
play (``mu`` in every seat, the undrawn wall in a uniformly random order), every seat's
points in one hand satisfy the performance-difference identity::

    points = V(deal) + sum over every decision t, of any seat, of A(s_t, a_t)
                     + sum over the draws of [V after the draw - its mean over the draw]

with ``A = Q - V`` taken for that seat. ``A`` is exactly 0 wherever the deciding seat
plays ``mu``'s action; the draw terms have mean zero given the past; and over a wall's
four rotations each lineup entry sits in every seat equally often, so its share of
``V(deal)`` sums to exactly 0. An agent's estimate on a wall is therefore its rotation
mean of the summed advantages, each estimated at a decision that leaves ``mu`` by
``reps`` paired rollouts (both actions, every seat then played by ``mu``, the undrawn
wall in the same random orders): unbiased whatever ``reps``, with no luck of the draws
at all, and rollouts only where a seat leaves ``mu``.

Against three copies of ``mu`` only the agent's own decisions count, and the estimate is
sharpest; the reference defaults to those copies when the rollouts can play them
(``default_reference``), else to ``heuristic``: every decision of every seat that is not
the heuristic's then counts, which suits lineups of agents close to it (the networks
distilled from searches over the heuristic) and costs rollouts in proportion to how far
the lineup is from it. What remains is the spread of the advantages themselves (a
discard that deals in, or that ``mu``'s would have dealt in, given hands the player
cannot see) and the rollouts' noise. Measured figures: docs/evaluation.md.

``AdvantageSum.of(records)`` gives per-record, per-seat corrections ``plain - adjusted``
like the luck adjustment's ``Corrections.of``, so the tools' per-wall samples,
summaries and ``--target-ci`` take either.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numba
import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from sichuan_env.agents.base import check_seed
from sichuan_env.agents.eval import advantage_kernels as K
from sichuan_env.agents.eval import advantage_net_kernels as KN
from sichuan_env.agents.eval.luck_events import record_logs
from sichuan_env.agents.rule_based.fused import STYLES

from sichuan_env import RuleConfig
from sichuan_env._progress import progress_bar
from sichuan_env.engine.state import STATE_DTYPE
from sichuan_env.kernels.tables import get_tables
from sichuan_env.rules.config import kernel_rules
from sichuan_env.tiles import InputTypeError

REPS = 32
"""Paired rollouts per such decision by default."""
CHUNK = 64
"""Records per kernel call (the progress bar's step)."""
FALLBACK = "heuristic"
"""The reference where the lineup is not one agent against three copies of a playable one."""


def split_lineup(lineup: Sequence[str]) -> tuple[str, str] | None:
    """``(agent, others)``, or None unless ``lineup`` is one agent against three copies of one.

    Four copies of one agent give ``(name, name)``.
    """
    names = list(lineup)
    if len(names) != 4 or not all(isinstance(n, str) for n in names):
        return None
    counts = Counter(names)
    if len(counts) == 1:
        (name,) = counts
        return name, name
    if len(counts) != 2:
        return None
    (ref, n_ref), (agent, n_agent) = counts.most_common()
    return (agent, ref) if (n_ref, n_agent) == (3, 1) else None


def reference_policy(name: str) -> tuple[int, tuple]:
    """``(style code, weights)`` of a reference the kernels can roll out.

    A rule-based style (``STYLES``, with ``no_weights()``), or an agent spec that makes a
    greedy ``TorchAgent`` over an MLP network (``K.NET`` with its exported weights).

    Raises:
        ValueError: any other agent (a search, a guarded or sampling network, ``random``),
            with the reason.
    """
    from sichuan_env.agents.nn.mlp_kernels import no_weights

    if name in STYLES:
        return STYLES[name], no_weights()
    try:
        from sichuan_env.agents.nn.numba_policy import export
        from sichuan_env.agents.nn.torch_agent import TorchAgent
        from sichuan_env.agents.registry import make_agent

        agent = make_agent(name)
    except (ImportError, ValueError) as exc:
        raise ValueError(f"the reference {name!r} cannot be made here: {exc}") from None
    if type(agent) is not TorchAgent or not agent.greedy:
        raise ValueError(
            f"the reference {name!r} is no rule-based style ({', '.join(sorted(STYLES))}) and "
            "no greedy network agent: the rollouts cannot play it"
        )
    try:
        return K.NET, export(agent.net)
    except ValueError as exc:
        raise ValueError(f"the reference {name!r}: {exc}") from None


def default_reference(lineup: Sequence[str]) -> str:
    """The reference of ``lineup``: the three copies' policy, else ``FALLBACK``.

    The copies are the reference when ``lineup`` is one agent against three copies of a
    policy the rollouts can play (only the agent's decisions then count).
    """
    pair = split_lineup(lineup)
    if pair is not None:
        try:
            reference_policy(pair[1])
            return pair[1]
        except ValueError:
            pass
    return FALLBACK


def record_keys(seed: int, records: Sequence[tuple[int, int, Any]]) -> np.ndarray:
    """One 64-bit key per record from ``(seed, wall, rotation)``.

    Keys do not depend on how the records are split into calls.
    """
    out = np.zeros(len(records), np.uint64)
    for i, (wall, rot, _) in enumerate(records):
        out[i] = np.random.default_rng([seed, int(wall), int(rot), 0xADA]).integers(
            0, 2**63, dtype=np.uint64
        )
    return out


def _scores(records: Sequence[tuple[int, int, Any]], offset: int) -> np.ndarray:
    """``float[len(records), 4]``: each record's final scores.

    Raises:
        ValueError: a record without the scores of 4 seats (numbered from ``offset``).
    """
    i = 0
    try:
        out = np.zeros((len(records), 4))
        for i, (_, _, rec) in enumerate(records):
            out[i] = np.asarray(rec["result"]["scores"], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"record {offset + i} has no result scores of 4 seats") from None
    return out


class AdvantageSum:
    """The advantage-sum estimate of a duplicate match's lineup.

    Args:
        lineup: the match's lineup (seats 0..3 in the first rotation).
        rules: the ruleset the records were played under.
        reps: paired rollouts per decision that leaves the reference (at least 2).
        seed: seeds the rollouts' wall orders (with each record's wall and rotation); an
            integer in ``[0, 2**64)``.
        reference: the reference policy (default: ``default_reference(lineup)``).
        shuffle: False keeps the real wall order in the rollouts (a check: each seat's
            sum then telescopes to its points minus the reference's on that wall).

    Raises:
        ValueError: a lineup that is not 4 names, a reference the rollouts cannot play
            (``reference_policy``), ``reps`` under 2, a bad seed.
        InputTypeError: ``rules`` that is no ``RuleConfig``.
    """

    def __init__(
        self, lineup: Sequence[str], rules: RuleConfig, reps: int = REPS, seed: int | None = 0,
        reference: str | None = None, shuffle: bool = True,
    ) -> None:  # fmt: skip
        names = list(lineup) if not isinstance(lineup, str) else []
        if len(names) != 4 or not all(isinstance(n, str) for n in names):
            raise ValueError(f"lineup must be 4 agent names, got {lineup!r}")
        if not isinstance(rules, RuleConfig):
            raise InputTypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
        if isinstance(reps, (bool, np.bool_)) or not isinstance(reps, (int, np.integer)):
            raise ValueError(f"reps must be an int of at least 2, got {reps!r}")
        if reps < 2:
            raise ValueError(f"reps must be an int of at least 2, got {reps!r}")
        checked = check_seed(seed)
        self.lineup = names
        self.reference = default_reference(names) if reference is None else str(reference)
        self._style, self._weights = reference_policy(self.reference)
        # seats of the reference's own rule-based code (the agent and the style share
        # ``decide``): their decisions cannot leave it and are not replayed through it; a
        # network's torch play is always checked against its numba copy
        self._trusted = [n == self.reference and n in STYLES for n in names]
        self.rules, self.reps, self.shuffle = rules, int(reps), bool(shuffle)
        self.seed = 0 if checked is None else checked
        self.seconds = 0.0
        self.hands = 0  # estimated so far
        self.divergences = np.zeros(4, np.int64)  # by lineup position, so far
        self._done: list[np.ndarray] = []
        self._n = 0

    def sums(
        self, records: Sequence[tuple[int, int, dict]], progress: Callable[[int], Any] | None = None,
        offset: int = 0,
    ) -> dict[str, np.ndarray]:  # fmt: skip
        """Per record and seat: ``sum``, ``noise`` and ``divergences``.

        ``sum`` is the seat's summed advantage estimates, ``noise`` the rollouts' variance
        of it, ``divergences`` the seat's decisions that left the reference.

        ``offset`` is added to the record numbers in error messages (the records before
        these in a growing match).

        Raises:
            ValueError: a record that cannot be replayed.
        """
        out = {"sum": np.zeros((len(records), 4)), "noise": np.zeros((len(records), 4)),
               "divergences": np.zeros((len(records), 4), np.int64)}  # fmt: skip
        starts = list(range(0, len(records), CHUNK))
        workers = max(1, min(numba.get_num_threads(), len(starts)))
        pool = ThreadPoolExecutor(workers)  # the kernels release the GIL
        pending: deque[tuple[int, Future]] = deque()  # a few chunks' buffers at a time
        try:
            for first in starts:
                chunk = records[first : first + CHUNK]
                pending.append((first, pool.submit(self.terms, chunk, offset + first)))
                if len(pending) > 2 * workers:
                    self._collect(out, *pending.popleft(), progress, offset)
            while pending:
                self._collect(out, *pending.popleft(), progress, offset)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return out

    def _collect(
        self, out: dict[str, np.ndarray], first: int, job: Future, progress: Callable | None,
        offset: int,
    ) -> None:  # fmt: skip
        """Check one chunk's kernel output and add it to ``out`` from record ``first`` on."""
        o = job.result()
        status, n_div, est, var, who = (o[k] for k in ("status", "n_div", "est", "var", "who"))
        h = len(status)
        if (status != K.OK).any():  # FULL cannot happen: room for every decision of the log
            bad = offset + first + int(np.flatnonzero(status != K.OK)[0])
            raise ValueError(f"record {bad} cannot be replayed under these rules")
        live = (np.arange(est.shape[1])[None, :] < n_div[:, None])[..., None]
        sl = slice(first, first + h)
        out["sum"][sl] = np.where(live, est, 0.0).sum(axis=1)
        out["noise"][sl] = np.where(live, var, 0.0).sum(axis=1)
        for q in range(4):
            out["divergences"][sl, q] = ((who == q) & live[..., 0]).sum(axis=1)
        if progress is not None:
            progress(h)

    def terms(
        self, chunk: Sequence[tuple[int, int, dict]], first: int = 0
    ) -> dict[str, np.ndarray]:
        """One kernel call: every decision of ``chunk`` that leaves the reference.

        Returns ``status`` and ``n_div`` per record and, per record and divergence,
        ``est`` (every seat's mean advantage), ``var`` (its variance), ``who`` (the seat
        that decided) and ``acts`` (its action, the reference's).

        Raises:
            ValueError: a record of other rules or without a replayable log (numbered
                from ``first``).
        """
        t = get_tables()
        h = len(chunk)
        walls, dealers, offsets, logs, n_logs = record_logs(
            [r for _, _, r in chunk], self.rules, first
        )
        trust = np.array(
            [[self._trusted[(q + int(rot)) % 4] for q in range(4)] for _, rot, _ in chunk],
            dtype=np.bool_,
        ).reshape(h, 4)
        room = max(1, int(n_logs.max(initial=0)))  # a hand cannot leave the reference more often
        o = {"est": np.zeros((h, room, 4)), "var": np.zeros((h, room, 4)),
             "who": np.zeros((h, room), np.int64), "acts": np.zeros((h, room, 2), np.int64),
             "status": np.zeros(h, np.int64), "n_div": np.zeros(h, np.int64)}  # fmt: skip
        kernels = KN if self._style == K.NET else K
        kernels.advantages(
            np.zeros(h, STATE_DTYPE), np.zeros(h, STATE_DTYPE), walls, dealers, offsets, logs,
            n_logs, trust, self._style, self._weights, self.reps, record_keys(self.seed, chunk),
            self.shuffle, kernel_rules(self.rules), t["FLAGS"], t["WAITS"], t["DIST"], o["est"],
            o["var"], o["who"], o["acts"], o["status"], o["n_div"],
        )  # fmt: skip
        return o

    def of(self, records: list[tuple[int, int, dict]], progress: bool = False) -> np.ndarray:
        """``float[len(records), 4]``: each hand's and seat's correction (plain minus adjusted).

        ``records`` only grows between calls (``--target-ci``); each record is estimated
        once. ``progress`` shows a bar on stderr (not while another bar is live). Every
        wall must come with its four rotations, since ``V(deal)`` cancels only over them.

        Raises:
            ValueError: a wall without its four rotations, or see ``sums``.
        """
        if self._n < len(records):
            t0 = time.perf_counter()
            try:
                fresh = records[self._n :]
                rots: dict[int, set[int]] = {}
                for wall, rot, _ in fresh:
                    rots.setdefault(int(wall), set()).add(int(rot) % 4)
                if any(len(r) != 4 for r in rots.values()):
                    raise ValueError("every wall needs its four rotations for this estimate")
                columns = (TextColumn("advantage estimate"), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn())  # fmt: skip
                scores = _scores(fresh, self._n)
                with progress_bar(*columns, disable=not progress) as bar:
                    task = bar.add_task("advantage estimate", total=len(fresh))
                    s = self.sums(fresh, lambda k: bar.advance(task, k), offset=self._n)
                self._done.append(scores - s["sum"])
                self._n = len(records)
                self.hands += len(fresh)
                for i, (_, rot, _) in enumerate(fresh):  # by lineup position, not seat
                    self.divergences += np.roll(s["divergences"][i], int(rot))
            finally:
                self.seconds += time.perf_counter() - t0
        return np.concatenate(self._done) if self._done else np.zeros((0, 4))

    def describe(self) -> dict[str, Any]:
        """What the JSON of a match says about the estimate."""
        hands = max(self.hands, 1)
        per: dict[str, float] = {}
        for pos, name in enumerate(self.lineup):
            per[name] = per.get(name, 0.0) + float(self.divergences[pos]) / hands
        return {
            "estimator": "advantage-sum", "reference": self.reference, "reps": self.reps,
            "seed": self.seed, "divergences_per_hand": per,
        }  # fmt: skip
