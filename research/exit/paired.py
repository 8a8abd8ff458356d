"""Two networks against the same three opponents on the same walls, paired wall by wall.

    sichuan-eval --lineup A.pt distill distill distill --walls 5000 --seed 52 --json a.json
    sichuan-eval --lineup B.pt distill distill distill --walls 5000 --seed 52 --json b.json
    python -m research.exit.paired a.json b.json --out research/exit/results/paired.json

Each file is a ``sichuan-eval`` JSON whose first seat is the candidate; the
files must share the seed, the walls, the preset and the three opponents.
The difference of the candidates' per-wall means (plain and luck-adjusted)
is the gain of the first over the second, with a 95% interval over walls:
the deals cancel between the two matches, so it is far tighter than the
two intervals side by side. A file made with ``--no-adjust`` (or on a preset
the value model does not cover) holds plain samples only: then the plain
figures are paired alone, and the adjusted ones are ``null``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from sichuan_env.agents.eval.match_stats import mean_ci

from sichuan_env._cli import fail, path_problem, run
from sichuan_env._files import write_atomic


def _load(path: Path) -> dict[str, Any]:
    """A ``sichuan-eval`` JSON: its lineup, seed, walls, preset and the first seat's per-wall samples."""
    try:
        doc = json.loads(path.read_text())
        lineup, walls = list(doc["lineup"]), int(doc["walls"])
        first = doc["per_wall"][lineup[0]]
        samples = {
            k: None if first.get(k) is None and k == "adjusted" else np.asarray(first[k], float)
            for k in ("plain", "adjusted")
        }
        key = (int(doc["seed"]), walls, str(doc["preset"]), tuple(lineup[1:]))
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"{path}: not a sichuan-eval JSON with per-wall samples ({exc})") from exc
    if lineup[0] in lineup[1:]:
        raise ValueError(f"{path}: the candidate {lineup[0]} also sits among the opponents")
    for k, v in samples.items():
        if v is not None and (v.shape != (walls,) or not np.isfinite(v).all()):
            raise ValueError(f"{path}: {k} per-wall samples are not {walls} finite numbers")
    return {"agent": lineup[0], "key": key, **samples}


def paired(a: Path, b: Path) -> dict[str, Any]:
    """The first file's candidate minus the second's, wall by wall; each alone too.

    The ``*_adjusted`` figures are None unless both files hold luck-adjusted samples
    (``sichuan-eval --no-adjust`` writes plain ones only); ``adjusted_missing`` names
    the files without them.

    Raises:
        ValueError: a file that is not a ``sichuan-eval`` JSON with per-wall
            samples, or two matches on other walls or against other opponents.
    """
    x, y = _load(a), _load(b)
    if x["key"] != y["key"]:
        raise ValueError(f"{a} and {b} are not the same walls and opponents: "
                         f"(seed, walls, preset, opponents) {x['key']} != {y['key']}")  # fmt: skip
    seed, walls, preset, opponents = x["key"]
    out: dict[str, Any] = {"a": x["agent"], "b": y["agent"], "seed": seed, "walls": walls,
                           "preset": preset, "opponents": list(opponents)}  # fmt: skip
    out["adjusted_missing"] = [str(f) for f, d in ((a, x), (b, y)) if d["adjusted"] is None]
    for k in ("plain", "adjusted"):
        if x[k] is None or y[k] is None:
            out.update({f"{name}_{k}": None for name in ("a", "b", "a_minus_b")})
            continue
        for name, s in (("a", x[k]), ("b", y[k]), ("a_minus_b", x[k] - y[k])):
            m, c = mean_ci(s)
            out[f"{name}_{k}"] = {"mean": m, "ci95": c}
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the two candidates and their paired difference; ``--out`` writes them as JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("a", type=Path, help="the candidate's sichuan-eval JSON")
    p.add_argument("b", type=Path, help="the baseline's, on the same walls")
    p.add_argument("--out", type=Path, help="write the figures here (JSON; a new file)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    args = p.parse_args(argv)
    if args.out:  # before any work: a folder, an unwritable place, a file not to replace
        if problem := path_problem(args.out):
            p.error(f"--out: {problem}")
        if args.out.exists() and not args.overwrite:
            p.error(f"--out: {args.out} exists (--overwrite replaces it)")
    try:
        doc = paired(args.a, args.b)
    except ValueError as exc:
        p.error(str(exc))
    print(f"{doc['walls']} walls (seed {doc['seed']}), against {', '.join(doc['opponents'])}")
    for name, label in (("a", doc["a"]), ("b", doc["b"]), ("a_minus_b", "first - second")):
        pl, ad = doc[f"{name}_plain"], doc[f"{name}_adjusted"]
        adjusted = "none" if ad is None else f"{ad['mean']:+.3f} ± {ad['ci95']:.3f}"
        print(f"  {label:<48} plain {pl['mean']:+.3f} ± {pl['ci95']:.3f}   adjusted {adjusted}")
    if doc["adjusted_missing"]:
        print(f"  (no luck-adjusted samples in {', '.join(doc['adjusted_missing'])}: "
              "made with --no-adjust; plain figures only)")  # fmt: skip
    if args.out:
        try:
            write_atomic(args.out, json.dumps(doc, indent=1))
        except OSError as exc:
            fail(p.prog, f"--out: cannot write {args.out}: {exc.strerror or exc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main, "paired"))
