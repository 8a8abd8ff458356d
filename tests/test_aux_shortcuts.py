"""``aux_features`` and the heuristic after a claimable pong: one shanten call, not one per discard.

The shortcut rests on one identity of ``kernels.shanten`` (every target of a ``3k+1``
hand has the size of the ``3k+2`` hand it came from): for a ``3k+2`` hand ``H``,
``min over held t of shanten(H - t) == max(shanten(H), 0)``. The identity is checked
on random and constructed hands (complete ones, voids, seven pairs), and the features
are compared with the original one-call-per-case computation on played observations.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sichuan_env.agents.nn.features import AUX_PER_TILE, AUX_SIZE, SH_BINS, aux_features
from sichuan_env.agents.rule_based.heuristic import hand_of, void_of

from sichuan_env.encoding import observation as O
from sichuan_env.kernels.shanten import shanten
from sichuan_env.kernels.tables import get_tables
from sichuan_env.kernels.ukeire import discard_table

DIST = get_tables()["DIST"]


def _min_discard(hand: np.ndarray, void: int) -> int:
    best = 99
    for t in np.flatnonzero(hand):
        hand[t] -= 1
        best = min(best, shanten(hand, void, DIST))
        hand[t] += 1
    return best


def _hand(tiles: list[int]) -> np.ndarray:
    hand = np.zeros(27, np.uint8)
    for t in tiles:
        hand[t] += 1
    return hand


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from([2, 5, 8, 11, 14]),
    st.lists(st.integers(0, 26), min_size=30, max_size=30),
    st.integers(-1, 2),
)
def test_min_over_discards_is_the_clamped_shanten(size, tiles, void):
    hand = np.zeros(27, np.uint8)
    for t in tiles:  # the first tiles that fit, at most four of a kind
        if hand.sum() < size and hand[t] < 4:
            hand[t] += 1
    for t in range(27):  # draws that repeat a full kind: the rest from the low tiles
        while hand.sum() < size and hand[t] < 4:
            hand[t] += 1
    assert hand.sum() == size
    assert _min_discard(hand, void) == max(shanten(hand, void, DIST), 0)


def test_the_identity_on_complete_and_tenpai_hands():
    cases = {
        "complete 14": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 13],
        "seven pairs": [0, 0, 2, 2, 4, 4, 9, 9, 11, 11, 20, 20, 26, 26],
        "pair only": [5, 5],
        "complete 8": [0, 1, 2, 12, 12, 12, 20, 20],
        "one away": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15],
        "void tile": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 19],
    }
    seen = set()
    for name, tiles in cases.items():
        hand = _hand(tiles)
        void = 2 if name == "void tile" else -1
        sh = shanten(hand, void, DIST)
        seen.add(sh)
        assert _min_discard(hand, void) == max(sh, 0), name
    assert -1 in seen and 0 in seen  # both branches of the clamp happened


def _reference(obs: np.ndarray) -> np.ndarray:
    """The features as first written: one ``shanten`` call for the hand, one per discard after a pong."""
    out = np.zeros(AUX_SIZE, np.float32)
    hand = np.zeros(27, np.uint8)
    hand_of(obs, hand)
    void = void_of(obs)
    unseen = 4 - (obs[O.VISIBLE : O.VISIBLE + 4] != 0).sum(0).astype(np.int64)
    n = int(hand.sum())
    g = 27 * AUX_PER_TILE

    def put(at: int, sh: int) -> None:
        out[at + min(max(sh + 1, 0), SH_BINS - 1)] = 1.0

    if n % 3 == 2:
        now = shanten(hand, void, DIST)
        sh = np.zeros(27, np.int64)
        uk = np.zeros(27, np.int64)
        discard_table(hand, void, unseen, DIST, sh, uk)
        for t in np.flatnonzero(hand):
            hand[t] -= 1
            put(t * AUX_PER_TILE, sh[t])
            out[t * AUX_PER_TILE + SH_BINS] = min(uk[t] / 20.0, 1.0)
            if hand[t] == 3:
                hand[t] -= 3
                out[t * AUX_PER_TILE + SH_BINS + 1] = shanten(hand, void, DIST) <= now
                hand[t] += 3
            else:
                out[t * AUX_PER_TILE + SH_BINS + 1] = sh[t] <= now
            hand[t] += 1
    elif n % 3 == 1:
        now = shanten(hand, void, DIST)
        put(g, now)
        claim = np.flatnonzero(obs[O.CLAIM])
        c = int(claim[-1]) if claim.size else -1
        if c >= 0 and hand[c] >= 2:
            hand[c] -= 2
            put(g + SH_BINS, _min_discard(hand, void))
            hand[c] += 2
            if hand[c] >= 3:
                hand[c] -= 3
                put(g + 2 * SH_BINS, shanten(hand, void, DIST))
                hand[c] += 3
    return out


def _played_obs(steps: int = 80, envs: int = 64, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """The acting seat's v1 observation at every step of heuristic play with a share of random moves."""
    from sichuan_env.agents.nn.features import heuristic_choices

    from sichuan_env.envs.vector import VectorEnv

    rng = np.random.default_rng(seed)
    venv = VectorEnv(envs, seed=seed, obs_version=1)
    obs, mask, _ = venv.reset()
    out, masks = [], []
    for _ in range(steps):
        out.append(obs[:, :83].copy())
        masks.append(mask.copy())
        act = heuristic_choices(obs[:, :83], mask)
        for i in np.flatnonzero(rng.random(envs) < 0.2):
            act[i] = rng.choice(np.flatnonzero(mask[i]))
        act = np.where(act < 0, mask.argmax(1), act)
        obs, mask, *_ = venv.step(act)
    return np.concatenate(out), np.concatenate(masks)


def test_features_equal_the_one_call_per_case_reference_on_played_rows():
    obs, _ = _played_obs()
    fast = aux_features(obs)
    kinds = {"complete": 0, "one away": 0, "pong": 0, "complete after the pong": 0}
    for i, o in enumerate(obs):
        assert np.array_equal(fast[i], _reference(o)), i
        hand = np.zeros(27, np.uint8)
        hand_of(o, hand)
        if hand.sum() % 3 == 2:
            sh = shanten(hand, void_of(o), DIST)
            kinds["complete"] += sh == -1
            kinds["one away"] += sh == 0
        elif hand.sum() % 3 == 1 and o[O.CLAIM].any() and hand[o[O.CLAIM].argmax()] >= 2:
            kinds["pong"] += 1
            hand[o[O.CLAIM].argmax()] -= 2
            kinds["complete after the pong"] += shanten(hand, void_of(o), DIST) == -1  # the clamp
    assert min(kinds.values()) > 0, kinds  # every shortcut's case was compared


def _claim_reference(obs: np.ndarray, mask: np.ndarray) -> int:
    """The heuristic's claim as first written: after a pong, every allowed discard tried."""
    from sichuan_env.agents.rule_based.heuristic import KONG, PASS, PONG

    hand = np.zeros(27, np.uint8)
    hand_of(obs, hand)
    void = void_of(obs)
    claim = np.flatnonzero(obs[O.CLAIM])
    if claim.size:
        t = int(claim[-1])
        now = shanten(hand, void, DIST)
        if mask[KONG] and hand[t] >= 3:
            hand[t] -= 3
            after = shanten(hand, void, DIST)
            hand[t] += 3
            if after <= now:
                return KONG
        if mask[PONG] and hand[t] >= 2:
            hand[t] -= 2
            holds = void >= 0 and hand[9 * void : 9 * void + 9].any()
            after = 99
            for d in np.flatnonzero(hand):
                if void < 0 or d // 9 == void or not holds:
                    hand[d] -= 1
                    after = min(after, shanten(hand, void, DIST))
                    hand[d] += 1
            hand[t] += 2
            if after <= now:
                return PONG
    return PASS if mask[PASS] else -1


def test_the_heuristics_claims_equal_the_reference_on_played_rows():
    from sichuan_env.agents.rule_based.heuristic import PONG, _claim

    obs, masks = _played_obs(seed=5)
    rows = np.flatnonzero(masks[:, PONG] != 0)
    decided, holding_void = {}, 0
    for i in rows:
        hand = np.zeros(27, np.uint8)
        hand_of(obs[i], hand)
        v = void_of(obs[i])
        holding_void += v >= 0 and bool(hand[9 * v : 9 * v + 9].any())
        got = _claim(obs[i], masks[i], hand, void_of(obs[i]), DIST)
        assert got == _claim_reference(obs[i], masks[i]), i
        decided[got] = decided.get(got, 0) + 1
    assert rows.size > 100 and len(decided) >= 2, decided  # pongs taken and passed
    assert 0 < holding_void < rows.size, holding_void  # both branches of the discard after it
