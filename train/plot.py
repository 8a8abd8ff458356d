"""Learning curves from training metrics (``metrics.jsonl`` of ``sichuan_env.train.policy.bc`` and ``sichuan_env.train.policy.ppo``).

    python -m sichuan_env.train.plot --bc runs/bc/metrics.jsonl --ppo runs/ppo/metrics.jsonl --out docs/img/training.png

Panels, each over wall-clock minutes (BC first, PPO after it): the BC
held-out accuracy; PPO's points per hand against three heuristics (the
periodic duplicate evaluation, with its 95% confidence interval) and, in the
training games, against the pool's heuristic; the PPO losses; the policy
entropy and its KL to the reference (BC) policy.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from sichuan_env._files import save_figure


def read_jsonl(path: Path) -> list[dict]:
    """The rows of a metrics file, plain or ``.gz`` (lines that are not JSON are reported, skipped)."""
    path = Path(path)
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            print(f"{path}:{n}: not JSON, skipped", file=sys.stderr)
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _series(rows: list[dict], key: str, offset: float) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for r in rows:
        if key in r and "wall_clock_s" in r:
            xs.append(offset + r["wall_clock_s"] / 60)
            ys.append(r[key])
    return xs, ys


def plot(bc: list[dict], ppo: list[dict], out: Path, title: str = "") -> None:
    """Draw the four panels into ``out`` (PNG)."""
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    bc_end = max((r.get("wall_clock_s", 0) for r in bc), default=0) / 60
    ax = axes[0, 0]
    ax.plot(*_series(bc, "val_acc", 0), label="BC held-out accuracy")
    ax.plot(*_series(bc, "train_acc", 0), label="BC train accuracy", alpha=0.6)
    ax.set_ylabel("accuracy (teacher's action)")
    ax.set_title("behaviour cloning of the heuristic")
    ax.legend()
    ax = axes[0, 1]
    xs, ys = _series(ppo, "eval_points_per_hand", bc_end)
    _, ci = _series(ppo, "eval_ci95", bc_end)
    if xs:
        ax.errorbar(xs, ys, yerr=ci, fmt="o-", capsize=3, label="duplicate eval vs 3 heuristics")
    xs, ys = _series(ppo, "vs_heuristic_points", bc_end)
    if xs:
        k = max(1, len(ys) // 50)
        smooth = [sum(ys[max(0, i - k) : i + 1]) / len(ys[max(0, i - k) : i + 1]) for i in range(len(ys))]  # fmt: skip
        ax.plot(xs, smooth, alpha=0.5, label="training games vs heuristic (smoothed)")
    ax.axhline(0, color="gray", lw=0.8)
    ax.set_ylabel("points per hand")
    ax.set_title("PPO agent against the heuristic")
    ax.legend(fontsize=8)
    ax = axes[1, 0]
    for key in ("pg_loss", "v_loss"):
        ax.plot(*_series(ppo, key, bc_end), label=key)
    ax.plot(*_series(bc, "train_loss", 0), label="BC cross-entropy")
    ax.set_yscale("symlog", linthresh=1e-2)
    ax.set_title("losses")
    ax.legend()
    ax = axes[1, 1]
    ax.plot(*_series(ppo, "entropy", bc_end), label="policy entropy")
    ax.plot(*_series(ppo, "kl_ref", bc_end), label="KL to the BC policy")
    ax.set_title("PPO entropy and KL")
    ax.legend()
    for a in axes.flat:
        a.set_xlabel("wall-clock minutes")
        a.grid(alpha=0.3)
        if bc_end:
            a.axvline(bc_end, color="gray", ls=":", lw=0.8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """CLI entry point."""
    p = argparse.ArgumentParser(prog="sichuan_env.train.plot", description=__doc__)
    p.add_argument("--bc", type=Path, default=None, help="BC metrics.jsonl")
    p.add_argument("--ppo", type=Path, default=None, help="PPO metrics.jsonl")
    p.add_argument("--out", type=Path, default=Path("docs/img/training.png"))
    p.add_argument("--title", default="")
    args = p.parse_args(argv)
    if args.bc is None and args.ppo is None:
        p.error("give --bc and/or --ppo")
    for f in (args.bc, args.ppo):
        if f is not None and not f.is_file():
            p.error(f"{f} is not a file")
    bc = read_jsonl(args.bc) if args.bc else []
    ppo = read_jsonl(args.ppo) if args.ppo else []
    plot(bc, ppo, args.out, args.title)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
