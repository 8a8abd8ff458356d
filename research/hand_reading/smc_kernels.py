"""Kernels of the sequential Monte Carlo hand reader (numba): one particle set per opponent.

The opponents play ``HeuristicAgent``, a deterministic function of its own
hand and of public facts, so what an opponent did says much about what it
holds. ``read_hand`` follows one hand from one seat's view (``me``), decision
by decision, and keeps for each of the three opponents ``P`` weighted
hypotheses of its concealed tiles (the opponents are filtered separately:
their hands are coupled only through the tile counts, which the filter
ignores beyond each opponent's own). Every update is an exact consequence of
public events under the heuristic:

- the 定缺 reveal: each particle's hand would have declared the void it did
  (hands are drawn until they do);
- an opponent's own turn: for each tile ``d`` it may have drawn (weight: the
  copies of ``d`` that ``me`` cannot see and the particle does not hold), the
  heuristic on the particle's hand plus ``d`` (the engine's ``legal_mask`` and
  v1 observation of that seat) must take the public action (the discard,
  with 摸切 exactly when ``d`` is the discarded tile; the kong; the self-drawn
  win); each particle branches into the draws that explain it, and the
  children are resampled back to ``P``;
- another seat's discard or added kong: the engine's ``open_window`` gives the
  particle's options, and the heuristic's answer must match the public
  outcome (it won on the tile, ponged or konged it, or did neither: then it
  would have passed, or wanted a meld that a win on the same tile overrode).

Nothing hidden is read: every engine state is first scrubbed
(``scrub``: the other seats' hands, the wall, their drawn tile, who was asked
in a window, the decision log), and the decisions of a claim window (who was
asked is hidden) are skipped; only its resolved, public outcome is used. The
labels of a decision are the engine's ``opponent_labels`` on the scrubbed
state with each particle's hands put in, averaged with the weights.

When no particle explains an event (the independent-opponent approximation,
or a particle set that lost the true hand), the opponent's particles keep
their weights and take the public action as given (``lost`` counts these).
"""

from __future__ import annotations

import numpy as np
from sichuan_env.agents.rule_based.heuristic import decide

from sichuan_env._jit import njit
from sichuan_env.encoding.v1 import encode_v1
from sichuan_env.engine.actions import DISCARD, HU, KONG, PASS, PONG, SELF_KONG, VOID
from sichuan_env.engine.claims import open_window
from sichuan_env.engine.core import tiles_left
from sichuan_env.engine.labels import opponent_labels
from sichuan_env.engine.legal import legal_mask
from sichuan_env.engine.state import PH_CLAIM, PH_EXCHANGE, PH_ROB, PH_TURN, PH_VOID
from sichuan_env.kernels.layout import (
    CTX_KONG_DISCARD,
    CTX_LAST_TILE,
    CTX_ROBBING_KONG,
    MELD_KONG,
    MELD_PONG,
)

# what an opponent's particle set must explain at a claim or robbing window
OUT_PASS = 0
OUT_HU = 1
OUT_PONG = 2
OUT_KONG = 3


@njit
def scrub(st, me: int) -> None:
    """Erase from the record ``st`` (in place) every field ``me`` cannot know."""
    setup = st.phase == PH_VOID or st.phase == PH_EXCHANGE
    for o in range(4):
        if o != me:
            st.hands[o, :] = 0
            st.passed_fan[o] = -1  # a heuristic never declines a win
            if setup:
                st.void[o] = -1  # the voids are revealed once all four have declared
    st.wall[:] = 0
    if not (st.phase == PH_TURN and st.to_act == me):
        st.drawn_tile = -1
    st.claim_seats[:] = -1
    st.claim_opts[:] = 0
    st.claim_fan[:] = -1
    st.claim_ans[:] = -1
    st.n_claim = 0
    st.claim_pos = 0
    if (st.phase == PH_CLAIM or st.phase == PH_ROB) and st.to_act != me:
        st.to_act = -1
    st.log[:] = 0
    st.n_log = 0


@njit
def fits(h, unseen, x: int) -> bool:
    """Can a hand hold ``h`` (after discarding ``x``; -1: none) when ``me`` cannot see ``unseen``?"""
    for t in range(27):
        if h[t] + (1 if t == x else 0) > unseen[t]:
            return False
    return True


@njit
def _act(st, seat: int, rules, flags, dist, obs, mask) -> int:
    """The heuristic's action for ``seat`` to act in ``st`` (the engine's mask and v1 view)."""
    st.to_act = seat
    legal_mask(st, rules, flags, mask)
    encode_v1(st, seat, False, rules, obs)
    return decide(obs, mask, dist)


@njit
def sample_hand(pool, n: int, buf, out) -> None:
    """``n`` tiles drawn without replacement from the counts ``pool`` into ``out`` (counts)."""
    k = 0
    for t in range(27):
        for _ in range(pool[t]):
            buf[k] = t
            k += 1
    out[:] = 0
    for i in range(n):
        j = i + np.random.randint(k - i)  # noqa: NPY002 (numba: the legacy API)
        buf[i], buf[j] = buf[j], buf[i]
        out[buf[i]] += 1


# per-opponent events (rows of ``ev``: kind, state index, action or tile, 摸切 or outcome,
# drew or any-win, origin, robbing)
EV_VOID = 0
EV_TURN = 1
EV_WINDOW = 2
EV_COLS = 7


@njit
def turn_ok(tmp, src, me, o, h, d, action, tsumo, rules, flags, dist, obs, mask) -> bool:
    """Would the heuristic holding ``h`` and drawing ``d`` (-1: no draw) take ``action`` in ``src``?"""
    x = action - DISCARD if DISCARD <= action < DISCARD + 27 else -1
    if x >= 0:
        if tsumo != (d >= 0 and d == x):
            return False  # 摸切 exactly when the discard is the drawn tile type
        if not tsumo and h[x] == 0:
            return False
    if d >= 0 and h[d] >= 4:
        return False
    tmp[0] = src
    t = tmp[0]
    scrub(t, me)
    t.hands[o, :] = h
    if d >= 0:
        t.hands[o, d] += 1
        t.drawn_tile = d
    return _act(t, o, rules, flags, dist, obs, mask) == action


@njit
def turn_apply(h, d, action) -> bool:
    """``h`` after drawing ``d`` and taking ``action`` (in place); False if it cannot hold."""
    if d >= 0:
        h[d] += 1
    if DISCARD <= action < DISCARD + 27:
        x = action - DISCARD
        if h[x] == 0:
            return False
        h[x] -= 1
    elif SELF_KONG <= action < SELF_KONG + 27:
        k = action - SELF_KONG
        if h[k] == 4:
            h[k] = 0
        elif h[k] >= 1:
            h[k] -= 1
        else:
            return False
    return True


@njit
def window_ok(tmp, src, me, o, h, origin, tile, robbing, outcome, any_hu, rules, flags, dist,
              obs, mask) -> bool:  # fmt: skip
    """Does the heuristic holding ``h`` answer ``origin``'s ``tile`` with the public ``outcome``?

    ``src`` is the state before the discard (or added kong); the window is opened on a
    scrubbed copy with the engine's ``open_window``.
    """
    tmp[0] = src
    t = tmp[0]
    scrub(t, me)
    t.hands[o, :] = h
    if robbing:
        n = open_window(t, origin, tile, CTX_ROBBING_KONG, False, rules, flags)
    else:
        k = t.n_river[origin]  # the discard enters the river as in ``claims.discard``
        t.river[origin, k] = tile
        t.river_flag[origin, k] = 0
        t.river_tsumo[origin, k] = 0
        t.n_river[origin] = k + 1
        ctx = CTX_KONG_DISCARD if t.replacement else 0
        if tiles_left(t) <= 0:
            ctx |= CTX_LAST_TILE
        n = open_window(t, origin, tile, ctx, True, rules, flags)
    ans = PASS
    for q in range(n):
        if t.claim_seats[q] == o:
            t.claim_pos = q
            t.phase = PH_ROB if robbing else PH_CLAIM
            ans = _act(t, o, rules, flags, dist, obs, mask)
    if outcome == OUT_HU:
        return ans == HU
    if outcome == OUT_PONG:
        return ans == PONG
    if outcome == OUT_KONG:
        return ans == KONG
    return ans == PASS or ((ans == PONG or ans == KONG) and any_hu)


@njit
def window_apply(h, tile, outcome) -> bool:
    """``h`` after the window's outcome (a pong takes 2, a kong 3); False if it cannot hold."""
    need = 2 if outcome == OUT_PONG else 3 if outcome == OUT_KONG else 0
    if h[tile] < need:
        return False
    h[tile] -= need
    return True


@njit
def void_ok(tmp, src, me, o, h, void, rules, flags, dist, obs, mask) -> bool:
    """Would the heuristic dealt ``h`` declare suit ``void``?"""
    tmp[0] = src
    t = tmp[0]
    scrub(t, me)
    t.phase = PH_VOID
    t.hands[o, :] = h
    return _act(t, o, rules, flags, dist, obs, mask) == VOID + void


@njit
def replay(tmp, states, me, r, ev, unseen, n_ev, h0, dr, h, rules, flags, dist, obs,
           mask) -> int:  # fmt: skip
    """Opponent ``r``'s first ``n_ev`` events replayed from the deal ``h0`` and draws ``dr``.

    Returns the energy (events the trajectory does not explain, 0: consistent); ``h`` ends as
    the hand after them. ``unseen[e]`` (copies ``me`` could not see at the event, after a
    window) bounds each draw and what the hand may hold.
    """
    o = (me + 1 + r) % 4
    h[:] = h0
    energy = 0
    for e in range(n_ev):
        kind = ev[e, 0]
        src = states[ev[e, 1]]
        if kind == EV_VOID:
            if not void_ok(tmp, src, me, o, h0, ev[e, 2], rules, flags, dist, obs, mask):
                energy += 1
        elif kind == EV_TURN:
            d = dr[e]
            if ev[e, 4] and (d < 0 or unseen[e, d] - h[d] <= 0):
                energy += 1
            a, tsumo = ev[e, 2], ev[e, 3] != 0
            if not turn_ok(tmp, src, me, o, h, d, a, tsumo, rules, flags, dist, obs, mask):
                energy += 1
            if not turn_apply(h, d, a):
                energy += 1
            if not fits(h, unseen[e], a - DISCARD if DISCARD <= a < DISCARD + 27 else -1):
                energy += 1
        else:
            tile, out = ev[e, 2], ev[e, 3]
            if not window_ok(tmp, src, me, o, h, ev[e, 5], tile, ev[e, 6] != 0, out,
                             ev[e, 4] != 0, rules, flags, dist, obs, mask):  # fmt: skip
                energy += 1
            if not window_apply(h, tile, out):
                energy += 1
            if not fits(h, unseen[e], -1):
                energy += 1
    return energy


@njit
def outcome_of(a, b, o: int) -> tuple:
    """(public outcome for seat ``o``, any win) of a window: ``a`` before it opened, ``b`` after."""
    any_hu = b.n_won > a.n_won
    if b.won[o] and not a.won[o]:
        return OUT_HU, any_hu
    if b.n_melds[o] > a.n_melds[o]:
        kind = b.melds[o, b.n_melds[o] - 1, 0]
        if kind == MELD_PONG:
            return OUT_PONG, any_hu
        if kind == MELD_KONG:
            return OUT_KONG, any_hu
    return OUT_PASS, any_hu


@njit
def predict(tmp, src, me, hands, w, rules, flags, dist, lab, acc) -> None:
    """Weighted label sums of the particles into ``acc`` (``float64[10, 28]``).

    Rows ``r`` (waits), ``3 + r`` (held tiles), ``6 + r`` (deal-in) per opponent, column 27 the
    total weight (row ``r``) and the tenpai weight (row ``3 + r``); row 9 the probability that
    some opponent wins on each tile (the opponents taken as independent).
    """
    p = hands.shape[1]
    tenpai, waits, shan, hand, deal_in, active = lab
    acc[:] = 0.0
    for i in range(p):
        tmp[0] = src
        scrub(tmp[0], me)
        for r in range(3):
            tmp[0].hands[(me + 1 + r) % 4, :] = hands[r, i]
        opponent_labels(tmp[0], me, rules, flags, dist, tenpai, waits, shan, hand, deal_in, active)
        for r in range(3):
            q = w[r, i]
            acc[r, 27] += q  # total weight
            if tenpai[r]:
                acc[3 + r, 27] += q
            for t in range(27):
                if waits[r, t]:
                    acc[r, t] += q
                if hand[r, t]:
                    acc[3 + r, t] += q
                if deal_in[r, t] > 0:
                    acc[6 + r, t] += q
    for t in range(27):
        safe = 1.0
        for r in range(3):
            if acc[r, 27] > 0:
                safe *= 1.0 - acc[6 + r, t] / acc[r, 27]
        acc[9, t] = 1.0 - safe
