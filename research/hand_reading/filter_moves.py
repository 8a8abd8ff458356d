"""The belief filter's MCMC over walls (numba): tile swaps and a heat-bath redraw of one position.

Two moves, both symmetric in the uniform distribution over consistent walls
(``research.hand_reading.filter_kernels``: energy 0), so that at energy 0 the chain
samples that distribution exactly:

- **swap**: exchange the tiles of an opponent's slot and of an undrawn
  position (half the swaps: the only swaps that change a hand and often keep
  it consistent), of another slot of the same opponent (a quarter: they
  change when its tiles came, a bridge between consistent walls), or of any
  free position (Metropolis);
- **redraw** (``redraw``): the tile at one opponent slot ``p`` is drawn anew,
  heat-bath, from the multiset of itself and the undrawn tiles, the only
  tiles it can trade with without touching any other seat's hand. Every tile
  kind is replayed (the undrawn tiles are never read by the replay, so the
  kind decides the energy), and one is chosen with probability proportional
  to its copies times ``[energy 0]`` (at energy 0) or ``exp(-energy / temp)``
  (during the burn-in); the copy it trades with is uniform among its
  positions. The replays start from the engine state just before ``p`` was
  drawn (``kernels.resume``), so a recent draw is redrawn for a few steps of
  replay each, and a filter carried to the next decision repairs an
  opponent's new draws first.

At energy 0 every replay also stops at the first opponent decision it does
not explain (``cap`` 0): only energy 0 is ever accepted then.
"""

from __future__ import annotations

import numpy as np

from research.hand_reading.filter_kernels import BIG, _labels, replay, resume
from sichuan_env._jit import njit
from sichuan_env.engine.deal import deal, splitmix64


@njit
def _rand(rng) -> np.uint64:
    """64 random bits from the splitmix64 stream whose state is ``rng[0]``."""
    rng[0], r = splitmix64(rng[0])
    return r


@njit
def _below(rng, n: int) -> int:
    """A uniform integer in ``[0, n)``."""
    return np.int64(_rand(rng) % np.uint64(n))


@njit
def _uniform(rng) -> float:
    """A uniform float in ``[0, 1)``."""
    return np.float64(_rand(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit
def _from_ck(
    p: int, cap: int, states, ck, ckv, wall, dealer: int, rules, flags, waits, dist, me: int,
    ev, n_ev: int, voids, own, n_own: int, target, obs1, obs2, mask, fail,
) -> int:  # fmt: skip
    """Energy of ``wall`` when it differs from the recorded one only at ``p`` and undrawn positions."""
    if p < 53:  # a dealt tile: from the deal
        return replay(states, wall, dealer, rules, flags, waits, dist, me, ev, n_ev, voids,
                      own, n_own, target, obs1, obs2, mask, fail)  # fmt: skip
    states[0] = ck[0]
    states[0].wall[:] = wall
    fail[0], fail[1], fail[2] = ckv[3], ckv[4], ckv[5]
    return resume(states, rules, flags, waits, dist, me, ev, n_ev, voids, own, n_own, target,
                  obs1, obs2, mask, fail, ckv[0], ckv[1], ckv[2], cap, -1, ck, ckv)  # fmt: skip


@njit
def redraw(
    p: int, undrawn, e: int, cap: int, temp: float, rng, states, ck, ckv, wall, dealer: int, rules,
    flags, waits, dist, me: int, ev, n_ev: int, voids, own, n_own: int, target, obs1, obs2,
    mask, fail,
) -> tuple:  # fmt: skip
    """Heat-bath redraw of the tile at ``p`` (module docstring); ``(energy, replays)``.

    ``e`` is the current wall's energy; with ``cap`` below ``BIG`` only kinds of
    energy at most ``cap`` are chosen (sampling), else any (burn-in). ``wall`` and
    ``states[0]`` end as the chosen wall and its replay (``fail`` set for it).
    """
    cnt = np.zeros(27, dtype=np.int64)
    cnt[wall[p]] += 1
    for u in undrawn:
        cnt[wall[u]] += 1
    orig = wall[p]
    if p >= 53:  # record the state before p is drawn, replaying the current wall
        e = replay_rec(p, states, ck, ckv, wall, dealer, rules, flags, waits, dist, me, ev,
                       n_ev, voids, own, n_own, target, obs1, obs2, mask, fail)  # fmt: skip
    en = np.full(27, BIG * 2, dtype=np.int64)
    en[orig] = e
    n = 1
    for t in range(27):
        if cnt[t] == 0 or t == orig:
            continue
        wall[p] = t
        en[t] = _from_ck(p, cap, states, ck, ckv, wall, dealer, rules, flags, waits, dist, me,
                         ev, n_ev, voids, own, n_own, target, obs1, obs2, mask, fail)  # fmt: skip
        n += 1
    wall[p] = orig
    lo = en.min()
    w = np.zeros(27)
    for t in range(27):
        if cnt[t] > 0 and en[t] <= cap:
            w[t] = cnt[t] * np.exp(-(en[t] - lo) / temp)
    x = _uniform(rng) * w.sum()
    pick = orig
    for t in range(27):
        if w[t] > 0:
            pick = t
            x -= w[t]
            if x < 0:
                break
    if pick != orig:
        m = _below(rng, cnt[pick])  # the m-th undrawn copy of pick
        for u in undrawn:
            if wall[u] == pick:
                if m == 0:
                    wall[p], wall[u] = pick, orig
                    break
                m -= 1
    e2 = _from_ck(p, BIG, states, ck, ckv, wall, dealer, rules, flags, waits, dist, me, ev,
                  n_ev, voids, own, n_own, target, obs1, obs2, mask, fail)  # fmt: skip
    return e2, n + 1


@njit
def replay_rec(
    p: int, states, ck, ckv, wall, dealer: int, rules, flags, waits, dist, me: int, ev,
    n_ev: int, voids, own, n_own: int, target, obs1, obs2, mask, fail,
) -> int:  # fmt: skip
    """``replay`` that records in ``ck``/``ckv`` the state just before position ``p`` is drawn."""
    deal(states, 0, wall, dealer, 0, rules)
    fail[0], fail[1], fail[2] = -1, -1, n_ev
    return resume(states, rules, flags, waits, dist, me, ev, n_ev, voids, own, n_own, target,
                  obs1, obs2, mask, fail, 0, 0, 0, BIG, p, ck, ckv)  # fmt: skip


@njit
def _replay_cap(
    cap: int, states, wall, dealer: int, rules, flags, waits, dist, me: int, ev, n_ev: int,
    voids, own, n_own: int, target, obs1, obs2, mask, fail,
) -> int:  # fmt: skip
    """``replay`` that stops once more than ``cap`` opponent decisions differ."""
    deal(states, 0, wall, dealer, 0, rules)
    fail[0], fail[1], fail[2] = -1, -1, n_ev
    return resume(states, rules, flags, waits, dist, me, ev, n_ev, voids, own, n_own, target,
                  obs1, obs2, mask, fail, 0, 0, 0, cap, -1, states, fail)  # fmt: skip


@njit
def _target_slot(rng, movable, owner, when, s: int, at: int) -> int:
    """A slot of ``s`` it had drawn before event ``at``: half the time its latest, else any."""
    best = -1
    for q in movable:
        if owner[q] == s and when[q] < at and (best < 0 or when[q] > when[best]):
            best = q
    if best >= 0 and _uniform(rng) < 0.5:
        return best
    p = movable[_below(rng, movable.shape[0])]
    for _ in range(30):
        if owner[p] == s and when[p] < at:
            break
        p = movable[_below(rng, movable.shape[0])]
    return p


@njit
def chain(
    states, wall, movable, pool, undrawn, sweep, owner, when, burn: int, steps: int,
    temp: float, redraws: float, slack: int, seed: int, dealer: int, rules, flags, waits,
    dist, me: int, ev, n_ev: int, voids, own, n_own: int, target, obs1, obs2, mask, fail, lab,
    sums, ck, ckv,
) -> tuple:  # fmt: skip
    """Redraw ``sweep``'s positions, anneal ``wall`` to energy 0 (``burn`` replays), make ``steps`` moves.

    A move is a redraw (probability ``redraws``) or a swap of the tile of an
    opponent's slot (``movable``) with that of any free position (``pool``:
    opponents' slots and the ``undrawn`` wall). While the wall is infeasible, half
    the swaps put the tile an opponent lacked (``fail``), or a tile of the first
    opponent that played otherwise than the heuristic, into one of its slots
    (``owner``: seat per position; ``when``: the event index of each position's
    draw, -1 for the deal), and redraws pick a slot of that opponent. After each
    sampling move the current wall's labels (``_labels`` rows) are added to
    ``sums`` (``float64[7, 28]``). Once the chain has reached energy 0 it samples
    ``exp(-energy / temp)`` restricted to energy at most ``slack`` with symmetric
    moves only, and adds only the walls at energy 0: their share of the samples
    is then exactly uniform over the consistent walls, while walls at energy 1 or
    2 bridge consistent walls no single move joins. If the burn-in ended above
    0, the sampler goes on at ``temp`` and adds every feasible wall (approximate
    samples) until it reaches 0. ``wall`` ends as the last accepted wall, or the
    last one at energy 0 if the chain reached it.
    Returns ``(energy, replays, accepted, samples)``.
    """
    rng = np.full(1, np.uint64(seed), dtype=np.uint64)
    args = (dealer, rules, flags, waits, dist, me, ev, n_ev, voids, own, n_own, target, obs1,
            obs2, mask, fail)  # fmt: skip
    e = replay(states, wall, *args)
    n_prop = 1
    for p in sweep:
        e, n = redraw(p, undrawn, e, 0 if e == 0 else 2 * BIG, temp, rng, states, ck, ckv, wall,
                      *args)  # fmt: skip
        n_prop += n
    reached = e == 0
    last0 = wall.copy()  # the last wall at energy 0
    cur = np.zeros((7, 28), dtype=np.float64)
    if e < BIG:
        _labels(states[0], me, rules, flags, dist, lab, cur)
    n_acc = 0
    n_samples = 0
    done = 0  # sampling moves made (after energy 0 or the burn-in budget)
    while done < steps:
        burning = not reached and n_prop < burn
        cap = slack if reached else 2 * BIG
        s, t, at = fail[0], fail[1], fail[2]
        if _uniform(rng) < redraws:
            p = movable[_below(rng, movable.shape[0])]
            if not reached and s >= 0:
                p = _target_slot(rng, movable, owner, when, s, at)
            e, n = redraw(p, undrawn, e, cap, temp, rng, states, ck, ckv, wall, *args)
            n_prop += n
            n_acc += 1
            if e < BIG:
                _labels(states[0], me, rules, flags, dist, lab, cur)
        else:
            n_prop += 1
            i = movable[_below(rng, movable.shape[0])]
            r = _uniform(rng)
            if r < 0.5 and undrawn.shape[0] > 0:  # with the wall: the hand changes
                j = undrawn[_below(rng, undrawn.shape[0])]
            elif r < 0.75:  # within one hand: when its tiles came
                j = movable[_below(rng, movable.shape[0])]
                while owner[j] != owner[i]:
                    j = movable[_below(rng, movable.shape[0])]
            else:
                j = pool[_below(rng, pool.shape[0])]
            if not reached and s >= 0 and _uniform(rng) < 0.5:
                if t >= 0:  # a copy of the tile s lacked, from outside s's hand
                    for _ in range(30):
                        j = pool[_below(rng, pool.shape[0])]
                        if wall[j] == t and owner[j] != s:
                            break
                for _ in range(30):  # into one of s's slots it had by then
                    i = movable[_below(rng, movable.shape[0])]
                    if owner[i] == s and wall[i] != t and when[i] < at:
                        break
            same = i < 53 and j < 53 and owner[i] == owner[j]  # one hand's deal: no change
            if i != j and wall[i] != wall[j] and not same:
                wall[i], wall[j] = wall[j], wall[i]
                e2 = _replay_cap(cap, states, wall, *args)
                if e2 <= e:
                    ok = True
                else:
                    ok = e2 <= cap and e2 < BIG and _uniform(rng) < np.exp(-(e2 - e) / temp)
                if ok:
                    e = e2
                    n_acc += 1
                    if e < BIG:
                        _labels(states[0], me, rules, flags, dist, lab, cur)
                else:
                    wall[i], wall[j] = wall[j], wall[i]
        if e == 0:
            reached = True
            last0[:] = wall
        if not burning:
            done += 1
            if e == 0 or (e < BIG and not reached):
                sums += cur
                n_samples += 1
    if reached and e != 0:  # end on the last consistent wall (a sample as good as any)
        wall[:] = last0
        e = 0
    return e, n_prop, n_acc, n_samples
