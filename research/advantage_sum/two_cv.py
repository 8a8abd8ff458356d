"""Does the luck adjustment add anything to the advantage sum? Both as control variates of plain.

    python -m research.advantage_sum.two_cv $(ls research/advantage_sum/results/*-s9??.json \
        | grep -v -e analyze -e paired) --out research/advantage_sum/results/two_cv.json

Per ``measure`` result (the same walls scored plain, luck-adjusted and by the advantage
sum), three estimates of the agent's points, each a per-wall sample:

- ``sum``: the raw advantage sum;
- ``blend``: ``plain - b (plain - sum)`` (what ``sichuan-eval`` reports);
- ``two``: ``plain - b1 (plain - sum) - b2 (plain - luck)``.

Both differences have mean zero, so any coefficients fixed in advance keep the plain
mean; ``b`` and ``(b1, b2)`` are least squares fitted on the other half of the walls
(even walls from odd ones and the other way round), so each wall's coefficients are
independent of it and the estimates stay unbiased. CI ratios are against plain.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from sichuan_env._cli import path_problem, write_atomic


def crossfit(y: np.ndarray, cvs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``y - cvs @ b`` with ``b`` fitted on the other fold; returns it and each fold's ``b``.

    Args:
        y: ``float[walls]``, the plain per-wall sample.
        cvs: ``float[walls, k]``, zero-mean control variates of the same walls.

    Raises:
        ValueError: shapes that do not match, or fewer than 2 walls per fold.
    """
    y, cvs = np.asarray(y, float), np.asarray(cvs, float)
    if cvs.ndim != 2 or len(cvs) != len(y):
        raise ValueError(f"cvs must be float[{len(y)}, k], got shape {cvs.shape}")
    if len(y) < 4:
        raise ValueError(f"at least 4 walls are needed, got {len(y)}")
    fold = np.arange(len(y)) % 2
    out, coefs = np.empty_like(y), np.zeros((2, cvs.shape[1]))
    for k in (0, 1):
        o = fold != k
        x = cvs[o] - cvs[o].mean(0)
        coefs[k] = np.linalg.lstsq(x, y[o] - y[o].mean(), rcond=None)[0]
        out[fold == k] = y[fold == k] - cvs[fold == k] @ coefs[k]
    return out, coefs


def ratios(doc: dict) -> dict:
    """The three estimates' means and CI ratios (sd over plain's) for one ``measure`` result."""
    pw = doc["per_wall"]
    plain, luck, adv = (np.asarray(pw[k], float) for k in ("plain", "luck", "advantage"))
    blend, b = crossfit(plain, (plain - adv)[:, None])
    two, b2 = crossfit(plain, np.stack([plain - adv, plain - luck], 1))
    sd = float(plain.std(ddof=1))
    out = {"agent": doc["agent"], "walls": len(plain), "seed": doc["seed"]}
    for name, x in (("sum", adv), ("blend", blend), ("two", two), ("luck", luck)):
        out[name] = {"mean": float(x.mean()), "ci_ratio": float(x.std(ddof=1) / sd)}
    out["blend"]["b"] = b[:, 0].round(3).tolist()
    out["two"]["b"] = b2.round(3).tolist()
    return out


def _row(ap: argparse.ArgumentParser, f: Path) -> dict:
    try:
        return ratios(json.loads(f.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        ap.error(f"{f}: not a measure.py result ({exc})")


def main(argv: list[str] | None = None) -> int:
    """Print one row per result and write them (``--out``, a new file)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path, nargs="+", help="measure.py JSON files")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    problem = "exists; choose another name" if args.out.exists() else path_problem(args.out)
    if problem:
        ap.error(f"--out: {problem}")
    rows = [_row(ap, f) for f in args.results]
    print("| agent | walls (seed) | sum | blend | + luck | luck alone |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| `{r['agent']}` | {r['walls']:,} ({r['seed']}) | {r['sum']['ci_ratio']:.3f} | "
              f"{r['blend']['ci_ratio']:.3f} | {r['two']['ci_ratio']:.3f} | {r['luck']['ci_ratio']:.3f} |")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, json.dumps(rows, indent=1, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
