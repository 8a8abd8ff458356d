"""The hand reader's steps (numba): branch and resample, rejuvenate, restart, repair.

Each opponent's particle is a trajectory: its dealt tiles ``h0``, the tile it
drew at each of its own turns (``dr``, per event), and the hand these give now
(``hc``). ``research.hand_reading.smc_read.read_hand`` calls these steps at each event
(``research.hand_reading.smc_kernels`` has the checks):

- an own turn branches every particle over its possible draws and keeps the
  children that explain the public action (``branch``), resampled back to
  ``P`` with weights by the unseen copies of each draw;
- a window's outcome weights the particles (0 where the heuristic's answer
  differs) and applies their melds;
- when the particles' current hands collapse to few distinct ones, each
  particle tries ``moves`` changes to its trajectory (another dealt tile,
  another draw, or a dealt tile exchanged with a draw), each accepted when the
  whole trajectory replays consistently (``_rejuvenate``);
- when no particle explains an event, fresh particle sets are run through the
  opponent's events so far (``_refilter``, up to ``restarts`` times); if none
  gets through, up to ``repair`` particles run a greedy descent on the replay
  energy (``_repair``); those that reach 0 seed the set.
"""

from __future__ import annotations

import numpy as np

from research.hand_reading.smc_kernels import (
    EV_TURN,
    EV_WINDOW,
    OUT_KONG,
    OUT_PONG,
    fits,
    replay,
    sample_hand,
    turn_apply,
    turn_ok,
    void_ok,
    window_apply,
    window_ok,
)
from sichuan_env._jit import njit
from sichuan_env.engine.actions import DISCARD, SELF_KONG


@njit
def _pick(weights, n: int) -> int:
    """An index in ``[0, n)`` drawn with probability proportional to ``weights`` (-1: all 0)."""
    tot = 0.0
    for i in range(n):
        tot += weights[i]
    if tot <= 0:
        return -1
    u = np.random.random() * tot  # noqa: NPY002 (numba: the legacy API)
    for i in range(n):
        u -= weights[i]
        if u < 0:
            return i
    return n - 1


@njit
def resample(c0, cdr, chc, cw, n: int, h0, dr, hc, w) -> None:
    """Systematic resampling of ``n`` weighted children into the particle arrays (weights 1)."""
    p = h0.shape[0]
    total = 0.0
    for i in range(n):
        total += cw[i]
    step = total / p
    u = np.random.random() * step  # noqa: NPY002
    acc = cw[0]
    j = 0
    for i in range(p):
        while acc < u and j < n - 1:
            j += 1
            acc += cw[j]
        h0[i, :] = c0[j]
        dr[i, :] = cdr[j]
        hc[i, :] = chc[j]
        w[i] = 1.0
        u += step


@njit
def branch(tmp, src, me, r, e, ev, un, h0, dr, hc, w, c0, cdr, chc, cw, rules, flags, dist,
            obs, mask) -> int:  # fmt: skip
    """Children of opponent ``r``'s particles that explain own-turn event ``e``; their count."""
    o = (me + 1 + r) % 4
    a, tsumo, drew = ev[e, 2], ev[e, 3] != 0, ev[e, 4] != 0
    n = 0
    for i in range(h0.shape[0]):
        if w[i] <= 0:
            continue
        h = hc[i]
        tot = 0
        if drew:
            for d in range(27):
                tot += max(0, un[d] - h[d])
        for d in range(-1, 27 if drew else 0):
            if drew and d < 0:
                continue
            c = un[d] - h[d] if drew else 1
            if c <= 0 or not turn_ok(tmp, src, me, o, h, d, a, tsumo, rules, flags, dist, obs,
                                     mask):  # fmt: skip
                continue
            c0[n, :] = h0[i]
            cdr[n, :] = dr[i]
            cdr[n, e] = d
            chc[n, :] = h
            turn_apply(chc[n], d, a)
            if not fits(chc[n], un, a - DISCARD if DISCARD <= a < DISCARD + 27 else -1):
                continue
            cw[n] = w[i] * c / max(tot, 1)
            n += 1
    return n


@njit
def _propose(h0, dr, ev, un, n_ev: int, pool0, ph0, pdr) -> bool:
    """A changed trajectory into ``ph0``, ``pdr``: a draw, a dealt tile, or one exchanged."""
    ph0[:] = h0
    pdr[:] = dr
    free = np.zeros(n_ev, dtype=np.float64)  # own turns whose draw is not fixed by a 摸切
    nfree = 0
    for e in range(n_ev):
        if ev[e, 0] == EV_TURN and ev[e, 4] and not ev[e, 3]:
            free[e] = 1.0
            nfree += 1
    u = np.random.random()  # noqa: NPY002
    held = np.zeros(27, dtype=np.float64)
    for t in range(27):
        held[t] = h0[t]
    a = _pick(held, 27)
    if nfree and u < 0.4:  # another draw at one turn
        e = _pick(free, n_ev)
        x = ev[e, 2] - DISCARD if DISCARD <= ev[e, 2] < DISCARD + 27 else -1
        cand = np.zeros(27, dtype=np.float64)
        for t in range(27):
            if t != x and t != dr[e]:
                cand[t] = max(0, un[e, t])
        d = _pick(cand, 27)
        if d < 0:
            return False
        pdr[e] = d
        return True
    if nfree and u < 0.7:  # a dealt tile and a draw trade places
        e = _pick(free, n_ev)
        b = dr[e]
        x = ev[e, 2] - DISCARD if DISCARD <= ev[e, 2] < DISCARD + 27 else -1
        if a < 0 or b < 0 or a == b or a == x:
            return False
        ph0[a] -= 1
        ph0[b] += 1
        pdr[e] = a
        return True
    avail = np.zeros(27, dtype=np.float64)  # another dealt tile
    for t in range(27):
        if t != a:
            avail[t] = max(0, pool0[t] - h0[t])
    b = _pick(avail, 27)
    if a < 0 or b < 0:
        return False
    ph0[a] -= 1
    ph0[b] += 1
    return True


@njit
def _distinct(hc, w) -> int:
    """Distinct current hands among the particles of positive weight."""
    seen = set()
    for i in range(hc.shape[0]):
        if w[i] > 0:
            key = 0
            for t in range(27):
                key = key * 5 + np.int64(hc[i, t])
            seen.add(key)
    return len(seen)


@njit
def _rejuvenate(tmp, states, me, r, ev, un, n_ev, pool0, h0, dr, hc, w, moves, rules, flags,
                dist, obs, mask, ph0, pdr, ph) -> int:  # fmt: skip
    """``moves`` replay-checked changes per particle (accepted when consistent); accepted count."""
    acc = 0
    for i in range(h0.shape[0]):
        if w[i] <= 0:
            continue
        for _ in range(moves):
            if not _propose(h0[i], dr[i], ev, un, n_ev, pool0, ph0, pdr):
                continue
            if replay(tmp, states, me, r, ev, un, n_ev, ph0, pdr, ph, rules, flags, dist, obs,
                      mask) == 0:  # fmt: skip
                h0[i, :] = ph0
                dr[i, :] = pdr
                hc[i, :] = ph
                acc += 1
    return acc


@njit
def _force(h, dr, row, un, e: int) -> None:
    """Take event ``row`` as given on the hand ``h`` (no particle explained it).

    An own turn adds a draw (the discard itself for a 摸切, or when the hand lacks the
    discarded tile; else a tile ``me`` cannot see) and removes what the action used, so the
    hand keeps its size; a window's meld takes what the hand has of its tile.
    """
    if row[0] == EV_TURN:
        a = row[2]
        x = a - DISCARD if DISCARD <= a < DISCARD + 27 else -1
        d = -1
        if row[4]:
            if x >= 0 and (row[3] or h[x] == 0):
                d = x
            else:
                cand = np.zeros(27, dtype=np.float64)
                for t in range(27):
                    if t != x and h[t] < 4:
                        cand[t] = max(0, un[t] - h[t])
                d = _pick(cand, 27)
        dr[e] = d
        if d >= 0 and h[d] < 4:
            h[d] += 1
        if x >= 0 and h[x] > 0:
            h[x] -= 1
        elif SELF_KONG <= a < SELF_KONG + 27:
            k = a - SELF_KONG
            h[k] -= min(h[k], 4 if h[k] == 4 else 1)
    elif row[0] == EV_WINDOW:
        need = 2 if row[3] == OUT_PONG else 3 if row[3] == OUT_KONG else 0
        h[row[2]] -= min(h[row[2]], need)


@njit
def _repair(tmp, states, me, r, ev, un, n_ev, pool0, h0, dr, hc, w, tries, budget, rules,
            flags, dist, obs, mask, ph0, pdr, ph, c0, cdr, chc, cw) -> bool:  # fmt: skip
    """Greedy descent on the replay energy from ``tries`` particles; True if one reached 0.

    The particles that reach 0 are resampled into the whole set; if none does, the set
    keeps every particle (weights 1), unexplained events and all.
    """
    p = h0.shape[0]
    e_new = n_ev - 1
    n = 0
    for q in range(min(tries, p)):
        i = (q * p) // max(1, min(tries, p))
        if ev[e_new, 0] == EV_TURN and ev[e_new, 4]:  # a guess for the new draw
            x = ev[e_new, 2] - DISCARD if DISCARD <= ev[e_new, 2] < DISCARD + 27 else -1
            if ev[e_new, 3]:
                dr[i, e_new] = x
            else:
                cand = np.zeros(27, dtype=np.float64)
                for t in range(27):
                    if t != x:
                        cand[t] = max(0, un[e_new, t])
                dr[i, e_new] = _pick(cand, 27)
        energy = replay(tmp, states, me, r, ev, un, n_ev, h0[i], dr[i], ph, rules, flags, dist,
                        obs, mask)  # fmt: skip
        for _ in range(budget):
            if energy == 0:
                break
            if not _propose(h0[i], dr[i], ev, un, n_ev, pool0, ph0, pdr):
                continue
            e2 = replay(tmp, states, me, r, ev, un, n_ev, ph0, pdr, ph, rules, flags, dist, obs,
                        mask)  # fmt: skip
            if e2 <= energy:
                h0[i, :] = ph0
                dr[i, :] = pdr
                energy = e2
        if energy == 0:
            replay(tmp, states, me, r, ev, un, n_ev, h0[i], dr[i], ph, rules, flags, dist, obs,
                   mask)  # fmt: skip
            c0[n, :] = h0[i]
            cdr[n, :] = dr[i]
            chc[n, :] = ph
            cw[n] = 1.0
            n += 1
    if n == 0:
        for i in range(p):
            _force(hc[i], dr[i], ev[e_new], un[e_new], e_new)
            w[i] = 1.0
        return False
    resample(c0, cdr, chc, cw, n, h0, dr, hc, w)
    return True


@njit
def window_step(tmp, a, me, r, origin, tile, robbing, out, any_hu, hc, w, un, rules, flags,
                dist, obs, mask) -> int:  # fmt: skip
    """Weight opponent ``r``'s particles by a window's outcome and apply its meld; survivors.

    ``un``: the copies ``me`` cannot see once the window is resolved (a particle holding more
    is dropped).
    """
    o = (me + 1 + r) % 4
    alive = 0
    for i in range(hc.shape[0]):
        if w[i] <= 0:
            continue
        if window_ok(tmp, a, me, o, hc[i], origin, tile, robbing, out, any_hu, rules, flags,
                     dist, obs, mask):  # fmt: skip
            alive += 1
        else:
            w[i] = 0.0
    if alive:
        for i in range(hc.shape[0]):
            if w[i] > 0:
                window_apply(hc[i], tile, out)
                if not fits(hc[i], un, -1):
                    w[i] = 0.0
                    alive -= 1
    return alive


@njit
def deal(tmp, src, me, o, void, pool0, size, buf, h0, dr, hc, w, rules, flags, dist, obs,
          mask) -> int:  # fmt: skip
    """Fresh deals for seat ``o``'s particles, each redrawn until it declares ``void``.

    A particle that never does gets weight 0; returns 1 if none did (all then keep weight 1).
    """
    hits = 0
    for i in range(h0.shape[0]):
        ok = False
        for _ in range(400):
            sample_hand(pool0, size, buf, h0[i])
            if void_ok(tmp, src, me, o, h0[i], void, rules, flags, dist, obs, mask):
                ok = True
                break
        hits += ok
        hc[i, :] = h0[i]
        dr[i, :] = -1
        w[i] = 1.0 if ok else 0.0
    if hits == 0:
        w[:] = 1.0
        return 1
    return 0


@njit
def _refilter(tmp, states, me, r, ev, un, n_ev, pool0, buf, h0, dr, hc, w, moves, collapse,
              rules, flags, dist, obs, mask, ph0, pdr, ph, c0, cdr, chc, cw) -> bool:  # fmt: skip
    """A fresh particle set run through opponent ``r``'s first ``n_ev`` events (a restart).

    On success the particle arrays hold it; otherwise they are left as they were.
    """
    p = h0.shape[0]
    o = (me + 1 + r) % 4
    g0, gd, gc, gw = h0.copy(), dr.copy(), hc.copy(), w.copy()
    src = states[ev[0, 1]]
    deal(tmp, src, me, o, ev[0, 2], pool0, 14 if o == states[0].dealer else 13, buf, h0, dr,
          hc, w, rules, flags, dist, obs, mask)  # fmt: skip
    ok = True
    for e in range(1, n_ev):
        a = states[ev[e, 1]]
        if ev[e, 0] == EV_TURN:
            m = branch(tmp, a, me, r, e, ev, un[e], h0, dr, hc, w, c0, cdr, chc, cw, rules,
                        flags, dist, obs, mask)  # fmt: skip
            if m == 0:
                ok = False
                break
            resample(c0, cdr, chc, cw, m, h0, dr, hc, w)
        elif window_step(tmp, a, me, r, ev[e, 5], ev[e, 2], ev[e, 6] != 0, ev[e, 3],
                         ev[e, 4] != 0, hc, w, un[e], rules, flags, dist, obs, mask) == 0:  # fmt: skip
            ok = False
            break
        if moves > 0 and _distinct(hc, w) * collapse < p:
            _rejuvenate(tmp, states, me, r, ev, un, e + 1, pool0, h0, dr, hc, w, moves, rules,
                        flags, dist, obs, mask, ph0, pdr, ph)  # fmt: skip
    if not ok:
        h0[:] = g0
        dr[:] = gd
        hc[:] = gc
        w[:] = gw
    return ok


@njit
def after_event(tmp, states, me, r, ev, un, n_ev, pool0, buf, h0, dr, hc, w, survivors, cfg,
                 rules, flags, dist, obs, mask, ph0, pdr, ph, c0, cdr, chc, cw, stats) -> None:  # fmt: skip
    """Restart or repair when nothing survived; rejuvenate when the current hands collapsed."""
    moves, collapse, tries, budget, restarts = cfg[0], cfg[1], cfg[2], cfg[3], cfg[4]
    if survivors == 0:
        for _ in range(restarts):
            if _refilter(tmp, states, me, r, ev, un, n_ev, pool0, buf, h0, dr, hc, w, moves,
                         collapse, rules, flags, dist, obs, mask, ph0, pdr, ph, c0, cdr, chc,
                         cw):  # fmt: skip
                survivors = 1
                stats[1] += 1
                break
    if survivors == 0:
        if not _repair(tmp, states, me, r, ev, un, n_ev, pool0, h0, dr, hc, w, tries, budget,
                       rules, flags, dist, obs, mask, ph0, pdr, ph, c0, cdr, chc, cw):  # fmt: skip
            stats[0] += 1
        else:
            stats[1] += 1
    if moves > 0 and _distinct(hc, w) * collapse < h0.shape[0]:
        stats[2] += _rejuvenate(tmp, states, me, r, ev, un, n_ev, pool0, h0, dr, hc, w, moves,
                                rules, flags, dist, obs, mask, ph0, pdr, ph)  # fmt: skip
