"""Adapters that call peer mahjong libraries on our corpus, each in its own layout.

Every adapter converts the hands *before* timing (``prepare``) and exposes
the tasks it can do as callables over the prepared hands. Peers that are not
installed are skipped with a note; install them with ``pip install -e .[bench]``.

Rule differences that make a peer's answer differ from ours on some
Sichuan hands are listed in ``NOTES``; the benchmark reports the agreement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

NOTES = {
    "mahjong": "riichi rules: seven pairs need seven distinct pairs (no quads); shanten also "
    "counts thirteen orphans; its waits here = tiles t with is_agari(hand + t)",
    "PyMahjongGB": "Chinese Official (MCR) rules: shanten and waits also count knitted and "
    "honours-and-knitted forms; shanten and waits take 13 tiles only, so is_win is "
    "'13 tiles + the 14th among the tenpai tiles'",
    "riichienv": "riichi rules (seven pairs without quads); 136-tile ids; is_win = shanten == -1",
    "mahjax": "riichi rules (seven pairs without quads); JAX jit+vmap on the CPU, batches of 4096",
}


@dataclass
class Peer:
    """One peer library: how to prepare hands and which tasks it runs."""

    name: str
    batched: bool
    prepare: Callable[[np.ndarray], object]
    tasks: dict[str, Callable[[object, int], list]] = field(default_factory=dict)
    """task -> f(prepared hands, count) returning one answer per hand."""


def _to34(hands: np.ndarray) -> list[list[int]]:
    out = np.zeros((hands.shape[0], 34), dtype=np.int64)
    out[:, :27] = hands
    return out.tolist()


def _waits_from(answer_bits: list[bool]) -> tuple[int, ...]:
    return tuple(t for t, b in enumerate(answer_bits) if b and t < 27)


def mahjong_peer() -> Peer:
    """The `mahjong` package (pure Python, riichi)."""
    from mahjong.agari import Agari
    from mahjong.shanten import Shanten

    shanten = Shanten()

    def is_win(hands: list, n: int) -> list:
        return [bool(Agari.is_agari(hands[i])) for i in range(n)]

    def calc_shanten(hands: list, n: int) -> list:
        return [int(shanten.calculate_shanten(hands[i])) for i in range(n)]

    def waits(hands: list, n: int) -> list:
        out = []
        for i in range(n):
            h = list(hands[i])
            ws = []
            for t in range(34):
                if h[t] >= 4:
                    continue
                h[t] += 1
                if Agari.is_agari(h):
                    ws.append(t)
                h[t] -= 1
            out.append(tuple(ws))
        return out

    return Peer(
        "mahjong", False, _to34, {"is_win": is_win, "shanten": calc_shanten, "waits": waits}
    )


def _gb_tiles(hands: np.ndarray) -> list[tuple[str, ...]]:
    names = [f"{'WBT'[t // 9]}{t % 9 + 1}" for t in range(27)]
    return [tuple(names[t] for t in range(27) for _ in range(int(h[t]))) for h in hands]


def pymahjonggb_peer() -> Peer:
    """PyMahjongGB (C++, Chinese Official rules)."""
    import MahjongGB

    index = {f"{'WBT'[t // 9]}{t % 9 + 1}": t for t in range(27)}

    def waits_of(tiles: tuple[str, ...]) -> tuple[int, ...]:
        s1, u1 = MahjongGB.RegularShanten(tiles)
        s2, u2 = MahjongGB.SevenPairsShanten(tiles)
        ws = set()
        if s1 == 0:
            ws |= {index[x] for x in u1 if x in index}
        if s2 == 0:
            ws |= {index[x] for x in u2 if x in index}
        return tuple(sorted(ws))

    def is_win(hands: list, n: int) -> list:
        out = []
        for i in range(n):
            tiles = hands[i]
            last = tiles[-1]
            out.append(index[last] in waits_of(tiles[:-1]))
        return out

    def shanten(hands: list, n: int) -> list:
        return [int(MahjongGB.MahjongShanten((), hands[i])) for i in range(n)]

    def waits(hands: list, n: int) -> list:
        return [waits_of(hands[i]) for i in range(n)]

    return Peer(
        "PyMahjongGB", False, _gb_tiles, {"is_win": is_win, "shanten": shanten, "waits": waits}
    )


def _to136(hands: np.ndarray) -> list[list[int]]:
    return [[4 * t + k for t in range(27) for k in range(int(h[t]))] for h in hands]


def riichienv_peer() -> Peer:
    """riichienv (Rust, riichi)."""
    import riichienv
    from riichienv import _riichienv as core

    def is_win(hands: list, n: int) -> list:
        return [core.calculate_shanten(hands[i]) == -1 for i in range(n)]

    def shanten(hands: list, n: int) -> list:
        return [int(core.calculate_shanten(hands[i])) for i in range(n)]

    def waits(hands: list, n: int) -> list:
        return [
            tuple(sorted(t for t in riichienv.HandEvaluator(hands[i]).get_waits() if t < 27))
            for i in range(n)
        ]

    return Peer("riichienv", False, _to136, {"is_win": is_win, "shanten": shanten, "waits": waits})


def mahjax_peer(chunk: int = 4096) -> Peer:
    """mahjax (JAX, riichi), jit + vmap on the CPU in fixed-size chunks."""
    import jax
    import jax.numpy as jnp
    from mahjax.no_red_mahjong.hand import Hand
    from mahjax.no_red_mahjong.shanten import Shanten

    win = jax.jit(jax.vmap(Hand.can_tsumo))
    shanten = jax.jit(jax.vmap(Shanten.number))

    def waits_one(h: jax.Array) -> jax.Array:
        return jax.vmap(lambda t: (h[t] < 4) & Hand.can_ron(h, t))(jnp.arange(34))

    waits = jax.jit(jax.vmap(waits_one))

    def prepare(hands: np.ndarray) -> np.ndarray:
        n = hands.shape[0]
        padded = np.zeros((-(-n // chunk) * chunk, 34), dtype=np.int32)
        padded[:n, :27] = hands
        return padded

    def run(fn: Callable) -> Callable[[np.ndarray, int], list]:
        def call(hands: np.ndarray, n: int) -> list:
            parts = [
                np.asarray(fn(hands[start : start + chunk]).block_until_ready())
                for start in range(0, n, chunk)
            ]
            return list(np.concatenate(parts)[:n]) if parts else []

        return call

    def as_waits(rows: list) -> list:
        return [_waits_from(list(r)) for r in rows]

    return Peer(
        "mahjax",
        True,
        prepare,
        {
            "is_win": lambda h, n: [bool(x) for x in run(win)(h, n)],
            "shanten": lambda h, n: [int(x) for x in run(shanten)(h, n)],
            "waits": lambda h, n: as_waits(run(waits)(h, n)),
        },
    )


FACTORIES = {
    "mahjong": mahjong_peer,
    "PyMahjongGB": pymahjonggb_peer,
    "riichienv": riichienv_peer,
    "mahjax": mahjax_peer,
}


def load(names: list[str]) -> tuple[list[Peer], list[str]]:
    """The peers that import, and a note for each that does not."""
    peers, missing = [], []
    for name in names:
        peer = _try_load(name)
        if isinstance(peer, Peer):
            peers.append(peer)
        else:
            missing.append(peer)
    return peers, missing


def _try_load(name: str) -> Peer | str:
    try:
        return FACTORIES[name]()
    except ImportError as exc:
        return f"{name}: not installed ({exc.name}); pip install -e .[bench]"
