"""Rollouts played by a network: the search's candidate values under the network's own play.

``sichuan_env.agents.search.rollout.evaluate_candidates`` plays every seat by
its rule-based style after the searched decision, so the value it estimates
is the style's (``Q_style(s, a)``): distilling it gives one step of policy
improvement over the style, however often it is repeated. Here the seats in
``net_seats`` play a network instead (``sichuan_env.agents.nn.numba_policy``), so the
search estimates ``Q_network(s, a)`` and expert iteration can compound. The
determinizations, the pairing and the window handling are
``evaluate_candidates``'s; a network decision costs several style decisions
(measured in ``research/exit/README.md``).
"""

from __future__ import annotations

from sichuan_env.agents.nn.numba_policy import net_action
from sichuan_env.agents.rule_based.fused import style_action
from sichuan_env.agents.search.rollout import draw_sample

from sichuan_env._jit import njit
from sichuan_env.engine.state import PH_OVER
from sichuan_env.engine.step import apply


@njit
def run_mixed(st, net_seats, weights, styles, rules, flags, waits, obs, mask, dist, bufs) -> int:
    """Play ``st`` to its end: seats in ``net_seats`` by the network, the others by ``styles``.

    ``bufs`` is ``(aux, h0, h1, logits)`` (``numba_policy.scratch`` less its first two).
    Returns the decisions played, or -1 if a seat had no legal action.
    """
    aux, h0, h1, logits = bufs
    n = 0
    while st.phase != PH_OVER:
        if net_seats[st.to_act]:
            a = net_action(st, weights, rules, flags, obs, mask, dist, aux, h0, h1, logits)
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
                            net_seats, weights, bufs) -> None:  # fmt: skip
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
            run_mixed(st, net_seats, weights, styles, rules, flags, waits, obs, mask, dist, bufs)
            vals[k, c] = float(st.scores[me] - base)
