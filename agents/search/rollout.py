"""Rollout search over determinized hands, in numba (policy improvement over a rule-based style).

At an own-turn decision of seat ``me``, every candidate action (each legal
discard and kong; a legal win is always taken) is scored by playing the hand
to its end many times, all seats by a rule-based style (``sichuan_env.agents.rule_based.fused``),
from the same ``n_samples`` *determinizations*: states in which everything
``me`` cannot see is drawn again at random, consistent with what it can see.
The candidate with the most points on average is chosen (common random
numbers: every candidate meets the same samples, so their difference has a
small variance). This is one step of policy iteration on the style: the
searcher plays the style's own moves afterwards.

Determinizations (``sichuan_env.agents.search.determinize``) redraw
everything ``me`` cannot see, consistent with what it can see; each is the
one kept of ``draws`` draws, the one whose opponents are closest to ready or,
with a belief row per seat (``bel``), one resampled by the beliefs' likelihood
ratio. At a claim (or robbing) decision the window is opened again on the
redrawn hands (who else may claim, and with what, is hidden), and the seats
asked before ``me`` answer by their style (``reopen_window``): their answers
so far are hidden too. At 定缺 (with ``setup``) the seats that declared
before ``me`` declare again by their style on the redrawn hands
(``reopen_setup``): declarations stay hidden until all four are made.
换三张 picks are never searched: the tiles already picked are hidden and
out of the redrawn pool.

Kernels only; ``sichuan_env.agents.search.agent``, ``sichuan_env.agents.search.play``
and the label scripts of ``sichuan_env.train.policy`` drive them.
"""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.eval.metrics import paired_stats
from sichuan_env.agents.rule_based.fused import run_styles, style_action
from sichuan_env.agents.search.determinize import determinize_best, shuffle_undrawn

from sichuan_env._jit import njit
from sichuan_env.engine.actions import DISCARD, HU, PASS, PONG, SELF_KONG, VOID
from sichuan_env.engine.claims import open_window
from sichuan_env.engine.core import void_of, window_ctx
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_CLAIM, PH_ROB, PH_TURN, PH_VOID
from sichuan_env.engine.step import apply
from sichuan_env.kernels.shanten import shanten

MAX_CANDIDATES = 32


@njit
def window_open(st) -> bool:
    """True in a claim or robbing window (a discard or an added kong awaiting answers)."""
    return st.phase == PH_CLAIM or st.phase == PH_ROB


@njit
def reopen_window(st, me: int, styles, rules, flags, waits, obs, mask, dist) -> bool:
    """Open a claim or robbing window again on a determinized state; False if ``me`` is not asked.

    The seats asked, their options and their answers before ``me`` depend on
    hidden hands: the window is rebuilt from the redrawn hands (same tile,
    same context) and the seats before ``me`` answer by ``styles``.
    """
    melds = st.phase == PH_CLAIM
    open_window(st, st.claim_from, st.claim_tile, window_ctx(st), melds, rules, flags)
    while (st.phase == PH_CLAIM or st.phase == PH_ROB) and st.to_act != me:
        a = style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
        if a < 0:
            return False
        apply(st, a, rules, flags, waits)
    return (st.phase == PH_CLAIM or st.phase == PH_ROB) and st.to_act == me


@njit
def forget_declarations(st, me: int) -> None:
    """Clear the 定缺 declarations made before ``me`` (hidden from it until all four are made)."""
    if st.phase == PH_VOID:
        s = int(st.dealer)
        while s != me:
            st.void[s] = -1
            s = (s + 1) % 4


@njit
def reopen_setup(st, me: int, styles, rules, flags, waits, obs, mask, dist) -> bool:
    """Declare 定缺 again for the seats before ``me`` on a determinized state; False if ``me`` is not asked.

    Declarations stay hidden until all four have declared (RULES §10), and
    they depend on the hands, which were redrawn: the seats from the dealer
    up to ``me`` declare again by ``styles`` (their log entries replaced).
    """
    if st.phase != PH_VOID:
        return False
    forget_declarations(st, me)
    st.n_log -= st.n_declared
    st.n_declared = 0
    st.to_act = st.dealer
    while st.phase == PH_VOID and st.to_act != me:
        a = style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
        if a < 0:
            return False
        apply(st, a, rules, flags, waits)
    return st.phase == PH_VOID and st.to_act == me


@njit
def is_searched(st, claims: bool, setup: bool) -> bool:
    """Whether the decision pending in ``st`` is one the search scores (see ``decision_candidates``)."""
    if st.phase == PH_TURN:
        return True
    if st.phase == PH_CLAIM or st.phase == PH_ROB:
        return claims
    return setup and st.phase == PH_VOID


@njit
def add_candidate(cands, n: int, x: int, mask) -> int:
    """``x`` appended to the first ``n`` of ``cands`` when legal in ``mask``, new and room is left.

    Returns the new count (``n`` when ``x`` is -1, illegal, already there, or ``cands`` is full).
    """
    if x < 0 or x >= mask.shape[0] or mask[x] == 0 or n >= cands.shape[0]:
        return n
    for c in range(n):
        if cands[c] == x:
            return n
    cands[n] = x
    return n + 1


@njit
def decision_candidates(
    st, rules, flags, mask, dist, gap: int, claims: bool, setup: bool, out
) -> int:
    """The candidates of the decision pending in ``st``, into ``out``; returns their number.

    Own turn: ``candidates``. With ``claims``, every legal answer in a claim or
    robbing window (hu, pong, kong and pass: passing a win is legal in 血战, a
    bigger one may come). With ``setup``, every legal 定缺 suit. 0 for any other
    decision (换三张 picks are never searched).
    """
    if st.phase == PH_TURN:
        return candidates(st, rules, flags, mask, dist, gap, out)
    if not is_searched(st, claims, setup):
        return 0
    legal_mask(st, rules, flags, mask)
    lo, hi = (VOID, VOID + 3) if st.phase == PH_VOID else (PONG, PASS + 1)
    n = 0
    for a in range(lo, hi):
        if mask[a] and n < out.shape[0]:
            out[n] = a
            n += 1
    return n


@njit
def candidates(st, rules, flags, mask, dist, gap: int, out) -> int:
    """The own-turn actions worth searching, into ``out``; returns their number.

    A legal win alone if there is one; else every legal kong and every legal
    discard that leaves a void-aware shanten within ``gap`` of the best
    (``gap`` < 0: every legal discard). 0 when it is not ``st.to_act``'s turn.
    """
    if st.phase != PH_TURN:
        return 0
    legal_mask(st, rules, flags, mask)
    if mask[HU]:
        out[0] = HU
        return 1
    me = st.to_act
    h = st.hands[me]
    v = void_of(st, me, rules)
    sh = np.full(27, 99, dtype=np.int64)
    best = 99
    for t in range(27):
        if mask[DISCARD + t] and h[t] > 0:
            h[t] -= 1
            sh[t] = shanten(h, v, dist)
            h[t] += 1
            best = min(best, sh[t])
    n = 0
    for t in range(27):
        if mask[SELF_KONG + t] and n < out.shape[0]:
            out[n] = SELF_KONG + t
            n += 1
    for t in range(27):
        if mask[DISCARD + t] and (gap < 0 or sh[t] <= best + gap) and n < out.shape[0]:
            out[n] = DISCARD + t
            n += 1
    return n


ORACLE = -1
"""``draws`` that makes ``draw_sample`` keep the true state (labels only, never play)."""


@njit
def draw_sample(
    scratch, raw, orig, me: int, rng, draws: int, bel, styles, rules, flags, waits, obs, mask, dist
):
    """One determinization of the state ``orig`` into ``scratch[0]``; returns ``(rng, me's score before)``.

    In a claim or robbing window the window is opened again on the redrawn
    hands (``reopen_window``); at 定缺 the earlier declarations are made again
    (``reopen_setup``). ``bel``: belief rows (``determinize_best``; 0 rows: none).
    ``draws`` = ``ORACLE`` (-1) keeps every hand as it is and shuffles the undrawn wall
    only (``shuffle_undrawn``: labels from the states a recorded play visits; a player
    must never search that way). Shared by every rollout evaluator.
    """
    raw[0, :] = orig
    window = scratch[0].phase == PH_CLAIM or scratch[0].phase == PH_ROB
    setup = scratch[0].phase == PH_VOID
    base = scratch[0].scores[me]
    if draws < 0:  # ORACLE: the true state, only the undrawn wall's order redrawn
        return shuffle_undrawn(scratch[0], rng), base
    forget_declarations(scratch[0], me)  # before the deals are scored: they are hidden
    rng = determinize_best(scratch[0], me, rng, draws, bel, rules, dist)
    if window and not reopen_window(scratch[0], me, styles, rules, flags, waits, obs, mask, dist):
        raw[0, :] = orig  # cannot happen (me's options are its own): keep the true window
    if setup and not reopen_setup(scratch[0], me, styles, rules, flags, waits, obs, mask, dist):
        raw[0, :] = orig  # cannot happen: keep the true declarations
    return rng, base


@njit
def evaluate_candidates(
    scratch,
    raw,
    orig,
    me: int,
    cands,
    n_cands: int,
    n_samples: int,
    draws: int,
    bel,
    seed: np.uint64,
    styles,
    rules,
    flags,
    waits,
    obs,
    mask,
    dist,
    vals,
) -> None:
    """``me``'s point change after each candidate in ``n_samples`` determinized rollouts.

    ``bel``: belief rows for the determinizations (0 rows: none).
    ``scratch`` is a ``STATE_DTYPE`` array of 2 records and ``raw`` its byte
    view (``scratch.view(np.uint8).reshape(2, -1)``); ``orig`` is the bytes of
    the state searched (an own turn or a claim window). ``vals[k, c]``:
    sample ``k``, candidate ``c`` (every candidate meets the same samples).
    """
    rng = seed
    for k in range(n_samples):
        rng, base = draw_sample(
            scratch, raw, orig, me, rng, draws, bel, styles, rules, flags, waits, obs, mask, dist
        )
        for c in range(n_cands):
            raw[1, :] = raw[0, :]
            st = scratch[1]
            apply(st, cands[c], rules, flags, waits)
            run_styles(st, styles, -1, rules, flags, waits, obs, mask, dist)
            vals[k, c] = float(st.scores[me] - base)


@njit
def search_action(
    scratch,
    raw,
    orig,
    n_samples: int,
    draws: int,
    gap: int,
    z: float,
    claims: bool,
    setup: bool,
    bel,
    prior: int,
    seed: np.uint64,
    styles,
    rules,
    flags,
    waits,
    obs,
    mask,
    dist,
    cands,
    gains,
    vals,
) -> int:
    """The searched action of the seat to act in the state ``orig`` (bytes); -1 if not searched.

    Searched: own turns, with ``claims`` the answers in claim and robbing
    windows, with ``setup`` the 定缺 declaration; -1 for any other decision
    (the caller plays the style's).

    The default is ``prior`` when it is >= 0 (a legal action of the decision, e.g. a
    network's choice: the hybrid player), else the seat's own style's action; a
    candidate replaces it
    only when its mean gain over the default (paired over the samples) is
    more than ``z`` standard errors above zero (``z`` = 0: the best mean).
    On return ``cands[:n]`` are the candidates and ``gains[:n]`` their mean
    gains over the default. ``vals`` is ``float64[n_samples, MAX_CANDIDATES]``.
    ``bel``: belief rows for the determinizations (``determinize_best``; 0 rows: none).
    """
    n, base, default = search_start(scratch, raw, orig, prior, gap, claims, setup, styles, rules,
                                    flags, obs, mask, dist, cands, gains)  # fmt: skip
    if n <= 1:
        return default
    evaluate_candidates(
        scratch,
        raw,
        orig,
        scratch[0].to_act,
        cands,
        n,
        n_samples,
        draws,
        bel,
        seed,
        styles,
        rules,
        flags,
        waits,
        obs,
        mask,
        dist,
        vals,
    )
    return search_choice(vals, n_samples, n, base, z, cands, gains)


@njit
def search_start(scratch, raw, orig, prior: int, gap: int, claims: bool, setup: bool, styles,
                 rules, flags, obs, mask, dist, cands, gains) -> tuple:  # fmt: skip
    """``(n, base, default)``: the candidates of the decision ``orig`` (``cands[:n]``), the default's index.

    Copies ``orig`` into ``scratch[0]``. ``n`` <= 1 means nothing to score:
    return ``default`` (-1 when the decision is not searched; ``gains[0]`` is
    0 then). The default is ``prior`` (>= 0) or the seat's style's action,
    added to the candidates if missing.
    """
    raw[0, :] = orig
    st = scratch[0]
    me = st.to_act
    gains[0] = 0.0
    if not is_searched(st, claims, setup):
        return -1, -1, -1
    if prior >= 0:
        default = prior
    else:
        default = style_action(st, styles[me], rules, flags, obs, mask, dist)
    n = decision_candidates(st, rules, flags, mask, dist, gap, claims, setup, cands)
    base = -1
    for c in range(n):
        if cands[c] == default:
            base = c
    if base < 0 and n < cands.shape[0]:
        cands[n] = default
        base = n
        n += 1
    if base < 0:  # no room for the default (never: fewer candidates than MAX_CANDIDATES)
        return 0, -1, default
    return n, base, default


@njit
def search_choice(vals, n_samples: int, n: int, base: int, z: float, cands, gains) -> int:
    """The candidate that replaces the default (``cands[base]``), or the default; ``gains[:n]`` its mean gains.

    A candidate replaces it only when its mean gain over the default (paired
    over the samples) is more than ``z`` standard errors above zero.
    """
    best, best_score = base, 0.0
    for c in range(n):
        mean, se = paired_stats(vals, n_samples, c, base)
        gains[c] = mean
        if c != base and mean > z * se and mean - z * se > best_score:
            best, best_score = c, mean - z * se
    return cands[best]
