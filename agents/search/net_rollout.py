"""Rollouts played by a network: the search's candidate values under the network's own play.

``sichuan_env.agents.search.rollout.evaluate_candidates`` plays every seat by
its rule-based style after the searched decision, so the value it estimates
is the style's (``Q_style(s, a)``): distilling it gives one step of policy
improvement over the style, however often it is repeated. Here the seats in
``net_seats`` play a network instead (``sichuan_env.agents.nn.numba_policy``), so the
search estimates ``Q_network(s, a)`` and expert iteration can compound. The
determinizations, the pairing and the window handling are
``evaluate_candidates``'s. A network decision keeps its first layer up to
date from the seat's last observation (``sichuan_env.agents.nn.net_cache``)
and costs a few style decisions (``benchmarks/labels.py``).
"""

from __future__ import annotations

from sichuan_env.agents.nn.net_cache import cached_action, forget
from sichuan_env.agents.rule_based.fused import style_action
from sichuan_env.agents.search.rollout import draw_sample, search_choice, search_start

from sichuan_env._jit import njit
from sichuan_env.engine.state import PH_OVER
from sichuan_env.engine.step import apply


@njit
def run_mixed(st, net_seats, weights, styles, rules, flags, waits, obs, mask, dist, cache) -> int:
    """Play ``st`` to its end: seats in ``net_seats`` by the network, the others by ``styles``.

    ``cache``: ``net_cache.new_cache(weights)``, emptied first (a rollout's
    play depends on its state alone). Returns the decisions played, or -1 if
    a seat had no legal action.
    """
    forget(cache)
    n = 0
    while st.phase != PH_OVER:
        if net_seats[st.to_act]:
            a = cached_action(st, weights, rules, flags, dist, cache)
        else:
            a = style_action(st, styles[st.to_act], rules, flags, obs, mask, dist)
        if a < 0:
            return -1
        apply(st, a, rules, flags, waits)
        n += 1
    return n


@njit
def evaluate_candidates_net(scratch, raw, orig, me: int, cands, n_cands: int, n_samples: int,
                            draws: int, bel, seed, styles, rules, flags, waits, obs, mask, dist, vals,
                            net_seats, weights, cache) -> None:  # fmt: skip
    """``evaluate_candidates`` with the rollouts played by ``run_mixed`` (same samples, same pairing)."""
    rng = seed
    for k in range(n_samples):
        rng, base = draw_sample(
            scratch, raw, orig, me, rng, draws, bel, styles, rules, flags, waits, obs, mask, dist
        )
        for c in range(n_cands):
            raw[1, :] = raw[0, :]
            st = scratch[1]
            apply(st, cands[c], rules, flags, waits)
            run_mixed(st, net_seats, weights, styles, rules, flags, waits, obs, mask, dist, cache)
            vals[k, c] = float(st.scores[me] - base)


@njit
def search_action_net(scratch, raw, orig, n_samples: int, draws: int, gap: int, z: float,
                      claims: bool, setup: bool, bel, prior: int, seed, styles, rules, flags,
                      waits, obs, mask, dist, cands, gains, vals, net_seats, weights,
                      cache) -> int:  # fmt: skip
    """``rollout.search_action`` with the rollouts' seats ``net_seats`` played by the network.

    The same candidates, determinizations, pairing and choice; only who plays
    the rollouts differs (``run_mixed``, ``cache`` from ``net_cache.new_cache``).
    """
    n, base, default = search_start(scratch, raw, orig, prior, gap, claims, setup, styles, rules,
                                    flags, obs, mask, dist, cands, gains)  # fmt: skip
    if n <= 1:
        return default
    evaluate_candidates_net(scratch, raw, orig, scratch[0].to_act, cands, n, n_samples, draws, bel,
                            seed, styles, rules, flags, waits, obs, mask, dist, vals, net_seats,
                            weights, cache)  # fmt: skip
    return search_choice(vals, n_samples, n, base, z, cands, gains)
