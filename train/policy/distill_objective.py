"""Search distillation's objective: dense targets, the regression loss and held-out estimates.

``prepare`` turns label rows (``sichuan_env.train.policy.search_labels``) into
dense targets and aux features; ``distill_loss`` fits ``l[a] - l[h]`` to each
candidate's rollout gain over the heuristic's action ``h`` and pushes the
other legal actions below ``h`` (a squared hinge); ``choices`` acts with the
heuristic boosted by a margin, and ``margin_table`` estimates, per margin, the
points per hand a seat gains over the heuristic on held-out hands. The
training run and its command line are ``sichuan_env.train.policy.search_distill``.
"""

from __future__ import annotations

import numpy as np
import torch
from sichuan_env.agents.nn.features import heuristic_choices
from sichuan_env.agents.nn.policy import PolicyNet

MARGINS = (0.2, 0.3, 0.5, 0.75, 1.0, 1.5)
"""The prior gains (points) chosen among by default."""


def dense_targets(cands: np.ndarray, gain: np.ndarray, base: np.ndarray):
    """``(is_candidate bool[N, 88], gain float32[N, 88], base_action int64[N])`` of label rows."""
    n = len(cands)
    c = cands.astype(np.int64)
    ok = c >= 0
    rows = np.repeat(np.arange(n), ok.sum(1))
    is_c = np.zeros((n, 88), bool)
    g = np.zeros((n, 88), np.float32)
    is_c[rows, c[ok]] = True
    g[rows, c[ok]] = gain[ok]
    return is_c, g, c[np.arange(n), base.astype(np.int64)]


def raw_logits(net: PolicyNet, obs: torch.Tensor, aux: torch.Tensor | None) -> torch.Tensor:
    """The network's own logits, without the heuristic prior."""
    none = torch.full((len(obs),), -1, dtype=torch.long, device=obs.device)
    return net.logits(obs, aux, prior=none)


def distill_loss(net, obs, aux, mask, is_c, gain, base, floor: float, hinge_coef: float):
    """``(loss, regression part, hinge part)`` of a batch (tensors as from ``dense_targets``)."""
    lg = raw_logits(net, obs, aux).float()
    diff = lg - lg.gather(1, base[:, None])
    other = torch.ones_like(is_c)
    other[torch.arange(len(base), device=base.device), base] = False
    reg_m = is_c & other
    reg = ((diff - gain) ** 2)[reg_m].sum() / max(int(reg_m.sum()), 1)
    hin_m = (mask != 0) & ~is_c
    hinge = (torch.relu(diff + floor) ** 2)[hin_m].sum() / max(int(hin_m.sum()), 1)
    return reg + hinge_coef * hinge, reg, hinge


def softmax_loss(net, obs, aux, mask, is_c, gain, base, floor: float, hinge_coef: float,
                 temperature: float = 1.0):  # fmt: skip
    """``(loss, cross-entropy part, hinge part)``: the value-based target distribution instead of regression.

    Among a row's candidates the target is ``softmax(gain / T)`` and the
    network's distribution ``softmax(l / T)`` (``T`` = ``temperature``, in
    points: at the optimum a logit difference is a gain in points, so the
    acting margin keeps its meaning); a row with one candidate adds nothing.
    Other legal actions get ``distill_loss``'s hinge.
    """
    lg = raw_logits(net, obs, aux).float()
    diff = lg - lg.gather(1, base[:, None])
    none = torch.tensor(-float("inf"), device=lg.device)
    log_q = torch.log_softmax(torch.where(is_c, gain / temperature, none), dim=1)
    log_p = torch.log_softmax(torch.where(is_c, lg / temperature, none), dim=1)
    ce_rows = -torch.where(is_c, log_q.exp() * log_p, torch.zeros((), device=lg.device)).sum(1)
    multi = is_c.sum(1) > 1
    ce = ce_rows[multi].sum() / max(int(multi.sum()), 1)
    hin_m = (mask != 0) & ~is_c
    hinge = (torch.relu(diff + floor) ** 2)[hin_m].sum() / max(int(hin_m.sum()), 1)
    return ce + hinge_coef * hinge, ce, hinge


OBJECTIVES = {"regression": distill_loss, "softmax": softmax_loss}
"""The fitting objectives of ``sichuan_env.train.policy.search_distill --objective``."""


@torch.no_grad()
def choices(net: PolicyNet, data: dict, margin: float, batch: int = 4096) -> np.ndarray:
    """The greedy action per row with the heuristic's action boosted by ``margin`` points."""
    out = []
    dev = next(net.parameters()).device
    for i in range(0, len(data["obs"]), batch):
        sl = slice(i, i + batch)
        obs, aux = (torch.from_numpy(data[k][sl]).to(dev) for k in ("obs", "aux"))
        lg = raw_logits(net, obs, aux).float().cpu()
        lg[torch.arange(len(lg)), torch.from_numpy(data["base_act"][sl])] += margin
        lg[torch.from_numpy(data["mask"][sl] == 0)] = -float("inf")
        out.append(lg.argmax(1).numpy())
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _per_hand(inv: np.ndarray, weights: np.ndarray, n_hands: int, p_label: float):
    """Mean and 95% half-width over hands of the rows' summed ``weights`` per seat-hand."""
    per_hand = np.bincount(inv, weights=weights, minlength=n_hands) / (4 * p_label)
    half = float(1.96 * per_hand.std(ddof=1) / np.sqrt(n_hands)) if n_hands > 1 else float("nan")
    return float(per_hand.mean()), half


def margin_table(net: PolicyNet, val: dict, p_label: float, margins=MARGINS,
                 ref_choice: np.ndarray | None = None) -> list[dict]:  # fmt: skip
    """Per margin: estimated points per seat-hand over the heuristic (95% CI over hands), deviation rate.

    Rows come from all four seats of each held-out hand: a hand's gains are
    summed, divided by ``p_label`` (the share of decisions labelled) and by 4
    (seats). A first-order estimate (gains of one deviation from heuristic
    play, off-candidate choices scored 0), noisy; the duplicate match decides.
    ``deviation_rate`` is over the held-out labelled own-turn decisions.

    With ``ref_choice`` (another policy's action at each row, e.g. the ``--init`` network's),
    each margin also gets ``gain_over_init`` and its ``gain_over_init_ci95``: the same sum of
    the rows' gains of the network's choice minus the reference's, paired row by row (rows
    where the two agree add exactly 0). Where the labels' rollouts play that reference and its
    play made the states, this is the first-order improvement over it (one step of policy
    iteration, the performance-difference identity).
    """
    hands, inv = np.unique(val["hand"], return_inverse=True)
    rows = np.arange(len(val["hand"]))
    out = []
    for m in margins:
        a = choices(net, val, m)
        g = val["gain_d"][rows, a]
        mean, half = _per_hand(inv, g, len(hands), p_label)
        row = {
            "margin": m, "gain_per_hand": mean, "ci95": half,
            "deviation_rate": float((a != val["base_act"]).mean()),
            "off_candidate": int((~val["is_c"][rows, a]).sum()),
        }  # fmt: skip
        if ref_choice is not None:
            d = g - val["gain_d"][rows, ref_choice]
            row["gain_over_init"], row["gain_over_init_ci95"] = _per_hand(
                inv, d, len(hands), p_label
            )
            row["init_agreement"] = float((a == ref_choice).mean())
        out.append(row)
    return out


def init_choices(path: str, val: dict, device: torch.device | str = "cpu") -> np.ndarray | None:
    """The actions the prior network at ``path`` plays at each row of ``val`` (its own margin).

    ``None``, with a note on stderr, when it cannot be read or is not a prior network: the
    margin table then goes without its ``gain_over_init`` column.
    """
    import sys

    from sichuan_env.agents.nn.torch_agent import load_network

    try:
        ref, _ = load_network(path)
    except (OSError, ValueError) as exc:
        print(f"note: no gain over the init network ({path}: {exc})", file=sys.stderr)
        return None
    if not ref.config.prior:
        print(
            f"note: no gain over the init network ({path} is not a prior network)", file=sys.stderr
        )
        return None
    ref.to(device).eval()
    return choices(ref, val, float(ref.prior_gain.detach()))


def prepare(rows: dict, net: PolicyNet) -> dict:
    """Label rows with dense targets and the network's aux features.

    Raises:
        ValueError: a row's heuristic action (``cands[base]``) is not what
            ``HeuristicAgent`` plays on its observation and mask (rows that do not belong together).
    """
    is_c, g, base_act = dense_targets(rows["cands"], rows["gain"], rows["base"])
    obs = np.ascontiguousarray(rows["obs"])
    bad = heuristic_choices(obs, rows["mask"]) != base_act
    if bad.any():
        raise ValueError(
            f"{int(bad.sum())} label rows whose heuristic action does not match their observation"
        )
    aux = net.aux_of(torch.from_numpy(obs)) if net.config.aux else None
    aux_np = aux.numpy() if aux is not None else np.zeros((len(obs), 0), np.float32)
    return {"obs": obs, "aux": aux_np, "mask": rows["mask"], "is_c": is_c, "gain_d": g,
            "base_act": base_act, "hand": rows["hand"]}  # fmt: skip


def tensors(data: dict, idx: np.ndarray, device: torch.device | str = "cpu"):
    """The tensors of rows ``idx`` of ``prepare``d data on ``device``, in ``distill_loss``'s order."""

    def t(key: str) -> torch.Tensor:
        return torch.from_numpy(data[key][idx]).to(device)

    aux = t("aux") if data["aux"].shape[1] else None
    return t("obs"), aux, t("mask"), t("is_c"), t("gain_d"), t("base_act")


@torch.no_grad()
def val_loss(net: PolicyNet, val: dict, floor: float, batch: int = 4096) -> float:
    """Held-out regression error (points squared): each batch's mean over its non-base candidates, weighted by its rows.

    (Batches hold 4096 rows, so this is close to the mean over all targets;
    it picks the kept epoch, and is left as is so that runs stay reproducible.)
    """
    tot, n = 0.0, 0
    for i in range(0, len(val["obs"]), batch):
        idx = np.arange(i, min(i + batch, len(val["obs"])))
        _, reg, _ = distill_loss(net, *tensors(val, idx, next(net.parameters()).device), floor, 0.0)
        tot += float(reg) * len(idx)
        n += len(idx)
    return tot / max(n, 1)
