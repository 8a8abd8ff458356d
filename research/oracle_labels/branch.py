"""Branch an expert-iteration run after round K's labels, to refit round K under other settings.

Round K's labels are the expensive part of a round (47-63 minutes for 32,768 hands on the 2-core
machine); the fit that follows takes minutes. This script starts a new run folder that holds
rounds 1..K-1 whole and round K's labels only, with ``aggregate`` switched off (``--no-aggregate``:
round K is fitted on its own labels, not on every round's), so that ``exit --resume`` on it fits
and screens round K again and then carries on with round K+1 under the new setting.

Files are hard-linked where the file system allows (the driver replaces files, never rewrites
them in place, so the source run is never changed) and copied otherwise. An existing ``--to`` is
refused.

    python -m research.oracle_labels.branch runs/exit-oracle-net-big runs/exit-oracle-net-na \
        --through 2 --no-aggregate
    bash research/oracle_labels/run.sh runs/exit-oracle-net-na 3 --rollout network \
        --hands 32768 --samples 8 --no-aggregate
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
from pathlib import Path

from sichuan_env.train.policy.exit import build_parser, read_state, write_state


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def branch(src: Path, dst: Path, through: int, aggregate: bool) -> dict:
    """Write ``dst``: ``src``'s rounds before ``through`` whole, round ``through``'s labels only.

    Raises:
        ValueError: ``dst`` exists, or ``src`` has not finished round ``through``'s labels.
    """
    if dst.exists():
        raise ValueError(f"{dst} exists: a branch is written to a new folder only")
    defaults = vars(build_parser().parse_args(["--run", str(src)]))
    doc = read_state(src, defaults)
    rounds = doc["rounds"]
    if through < 1 or len(rounds) < through or "labels" not in rounds[through - 1]["done"]:
        raise ValueError(f"{src} has not finished round {through}'s labels")
    new = {"settings": dict(doc["settings"], aggregate=aggregate), "rounds": []}
    for r in rounds[: through - 1]:
        new["rounds"].append(copy.deepcopy(r))
    last = rounds[through - 1]
    new["rounds"].append({"round": through, "done": ["labels"],
                          "seconds": {"labels": last["seconds"]["labels"]},
                          "labels": copy.deepcopy(last["labels"])})  # fmt: skip
    tmp = dst.with_name(dst.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for k in range(1, through + 1):
        name = f"round-{k:02d}"
        parts = [src / name] if k < through else [src / name / "labels"]
        for part in parts:
            shutil.copytree(part, tmp / part.relative_to(src), copy_function=_link_or_copy)
    write_state(tmp, new)
    tmp.rename(dst)
    return new


def main(argv: list[str] | None = None) -> dict:
    """Write the branch; returns its state (``exit.json``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src", type=Path, help="the run folder to branch from (RUN/exit.json)")
    p.add_argument("dst", type=Path, help="the new run folder (must not exist)")
    p.add_argument("--through", type=int, required=True, help="the round whose labels are kept")
    p.add_argument("--no-aggregate", dest="aggregate", action="store_false",
                   help="the branch fits each round on its own labels only")  # fmt: skip
    args = p.parse_args(argv)
    if args.aggregate:
        p.error("nothing to change: pass --no-aggregate (the only setting a branch changes)")
    try:
        doc = branch(args.src, args.dst, args.through, args.aggregate)
    except ValueError as exc:
        p.error(str(exc))
    print(f"{args.dst}: rounds 1-{args.through - 1} whole, round {args.through}'s labels; "
          f"aggregate={doc['settings']['aggregate']}")  # fmt: skip
    return doc


if __name__ == "__main__":
    main()
