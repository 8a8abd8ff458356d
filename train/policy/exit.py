"""Expert iteration, search ⇄ network, as one resumable pipeline.

Each round ``k`` (1, 2, ...) takes round ``k-1``'s network (round 0: ``--init``,
the shipped ``distill`` by default) and runs three stages:

1. **labels** (``sichuan_env.train.policy.exit_labels``): hands played by that network, in
   self-play and in one seat against three heuristics; at sampled own turns
   and claim answers, every candidate (the search's, the heuristic's action and
   the network's two best) is scored by paired determinized rollouts, played
   by the heuristic or (``--rollout network``) by the network itself.
2. **fit** (``sichuan_env.train.policy.search_distill``): the network is fitted to the
   search's per-candidate values (soft targets: the regression of each
   candidate's gain, not the argmax), starting from round ``k-1``'s weights, on
   the labels of every round so far (``--no-aggregate``: this round's only);
   the margin is chosen by a duplicate match. With ``--after-win`` (labels
   once some seat has won), ``--anchor-before-win ROWS`` holds the play before
   a win at round ``k-1``'s own predicted gains.
3. **eval**: duplicate matches of the new network against three heuristics and
   against three copies of round ``k-1``'s network (``--eval-walls`` walls
   × 4 rotations, 95% intervals), plain and adjusted: by the advantage-sum estimate
   (``--estimator advantage``, the default: ``sichuan_env.agents.eval.advantage``, the
   three opponents' policy as the reference, so only the new network's own decisions
   count), or by the luck adjustment (``--estimator luck``,
   ``sichuan_env.agents.eval.luck``). The fit's margin is chosen by the same estimate.

With ``--search value-leaf`` the labels are the value-leaf search's
(``sichuan_env.agents.search.value_leaf``: own turns, ``--samples``
determinizations to the next draw, then the whole-table value ``V``; a leaf costs
a forward pass, not a rollout), and a fourth stage follows:

4. **value** (``sichuan_env.train.policy.exit_value``): ``V`` refitted on
   ``--value-hands`` hands of the new network's play, starting from the ``V`` that
   labelled this round (round 1: ``--value-model``); round ``k + 1`` searches with it.

``RUN/exit.json`` holds the settings and each round's finished stages and
results; it is rewritten (atomically) after every stage, and ``--resume``
continues from the first unfinished one: label shards that exist are kept, an
interrupted fit starts over (minutes), a finished match is not replayed. The
driver prints where the run is and what is left. ``research/exit/plot.py``
draws the rounds. A resume with other settings is refused, naming the flags
(``--rounds``, ``--threads``, ``--device`` and ``--amp`` may change).

With ``--estimator luck`` the matches report luck-adjusted points, so the shipped value
model (``agents/checkpoints/luck.pt``) is loaded and checked before any work, for a new
run and for every ``--resume``: a missing or damaged one ends the driver at once
with one line (reinstall the package, or restore the file), rather than after a
round's labels and fit. (``sichuan-eval`` falls back to plain estimates instead;
a run whose rounds mixed plain and adjusted points could not be compared.) Runs made
before ``--estimator`` existed used the luck adjustment and resume with
``--estimator luck``.

    python -m sichuan_env.train.policy.exit --run runs/exit --rounds 3
    python -m sichuan_env.train.policy.exit --run runs/exit-vl --rounds 3 --search value-leaf \
        --no-claims --samples 8 --objective softmax
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from sichuan_env.agents.device import add_device_args
from sichuan_env.train.policy.exit_state import (
    LEGACY,
    SETTINGS,
    STAGES,
    _number,
    check_state,
    read_state,
    stages_of,
    write_state,
)
from sichuan_env.train.policy.exit_value import refit_value, value_of

from sichuan_env import RuleConfig
from sichuan_env._cli import (
    MAX_SEED,
    add_overwrite,
    claim_output_or_exit,
    dir_problem,
    fail,
    float_arg,
    int_arg,
    run,
)

PROG = "sichuan_env.train.policy.exit"
RUN_FILES = ("exit.json", "round-*")
"""What the driver writes in ``--run`` (``--overwrite`` removes these first)."""


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m sichuan_env.train.policy.exit``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], prog=PROG)
    p.add_argument("--run", type=Path, required=True, help="the run's directory")
    p.add_argument("--resume", action="store_true", help="continue the run in --run")
    add_overwrite(p, "expert-iteration run")
    p.add_argument("--rounds", type=int_arg(1, 1000), default=3, help="rounds to have finished (3)")
    p.add_argument("--init", default="distill", help="round 0's network: a prior policy checkpoint or a shipped name (distill)")  # fmt: skip
    p.add_argument("--hands", type=int_arg(1, 10**7), default=8192, help="hands labelled per round (8192)")  # fmt: skip
    p.add_argument("--samples", type=int_arg(2, 4096), default=16, help="determinizations per labelled decision (16)")  # fmt: skip
    p.add_argument("--p-label", type=float_arg(0, 1), default=0.35, help="share of searched decisions labelled (0.35)")  # fmt: skip
    p.add_argument("--no-claims", dest="claims", action="store_false", help="search own turns only")
    p.add_argument("--rollout", choices=("heuristic", "network"), default="heuristic",
                   help="who plays the label rollouts: the heuristic, or the network in its seats (exit_labels --rollout)")  # fmt: skip
    p.add_argument("--oracle", action="store_true", help="label rollouts from the true state, the undrawn wall reshuffled (exit_labels --oracle; --search rollout)")  # fmt: skip
    p.add_argument("--after-win", action="store_true", help="label only decisions once some seat has won (where the after-win hybrid searches)")  # fmt: skip
    p.add_argument("--search", choices=("rollout", "value-leaf"), default="rollout",
                   help="what labels: rollouts (default), or the value-leaf search, whose V is then "
                        "refitted on each new network's play (a 'value' stage; with --no-claims)")  # fmt: skip
    p.add_argument("--value-model", default="table_value", help="round 0's V for --search value-leaf: a shipped name or a .pt path (table_value)")  # fmt: skip
    p.add_argument("--value-hands", type=int_arg(64, 10**7), default=4096, help="hands of each new network's play V is refitted on (4096)")  # fmt: skip
    p.add_argument("--value-epochs", type=int_arg(1, 1000), default=1, help="epochs of each V refit (1)")  # fmt: skip
    p.add_argument("--anchor-before-win", type=int_arg(0, 10**8), default=0, metavar="ROWS",
                   help="fit: ROWS decisions from before any win held at the previous network's own "
                        "gains (search_distill --anchor-before-win; with --after-win) (0: none)")  # fmt: skip
    p.add_argument("--pool", type=float_arg(0, 1, include_lo=True), default=0.5, help="share of label hands against three heuristics (0.5)")  # fmt: skip
    p.add_argument("--no-aggregate", dest="aggregate", action="store_false", help="fit each round on its own labels only")  # fmt: skip
    p.add_argument("--epochs", type=int_arg(1, 1000), default=4, help="fit epochs per round (4)")
    p.add_argument("--lr", type=float_arg(0, 1), default=1e-4, help="fit learning rate (1e-4)")
    p.add_argument("--objective", choices=("regression", "softmax"), default="regression",
                   help="the fit: regression of each candidate's gain, or a cross-entropy to "
                        "softmax(gain) over the candidates (search_distill --objective)")  # fmt: skip
    p.add_argument("--margins", type=float_arg(0, 1000, include_lo=True), nargs="+", default=[0.2, 0.3, 0.5], help="margins to choose from (0.2 0.3 0.5)")  # fmt: skip
    p.add_argument("--select-walls", type=int_arg(0, 100_000), default=1500, help="walls per margin in the choice (1500)")  # fmt: skip
    p.add_argument("--eval-walls", type=int_arg(1, 100_000), default=2500, help="walls per evaluation match (2500)")  # fmt: skip
    p.add_argument("--estimator", choices=("advantage", "luck"), default="advantage",
                   help="the adjusted estimate of the matches and the margin's choice: the "
                        "advantage sum (default) or the luck adjustment (margin: plain points)")  # fmt: skip
    p.add_argument("--anchor-decisions", type=int_arg(1, 10**8), default=300_000, help="heuristic decisions scanned for setup anchor rows (300000)")  # fmt: skip
    p.add_argument("--seed", type=int_arg(0, MAX_SEED // 1000), default=0)
    p.add_argument("--threads", type=int_arg(1, 1024), default=2)
    add_device_args(p)  # the fit and the matches; the label stages play in numba on the CPU
    return p


def _init_path(init: str) -> Path:
    from sichuan_env.agents.checkpoint import SHIPPED_DIR

    shipped = Path(SHIPPED_DIR) / f"{init}.pt"
    if "/" in init or init.endswith(".pt") or not shipped.is_file():
        return Path(init)
    try:  # recorded in checkpoints and logs: relative to the working directory when inside it
        return shipped.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return shipped


def network_of(run_dir: Path, settings: dict, k: int) -> Path:
    """Round ``k``'s network (round 0: ``--init``)."""
    if k == 0:
        return _init_path(settings["init"])
    return run_dir / f"round-{k:02d}" / "fit" / "distilled.pt"


def value_model() -> Any:
    """The shipped value model for the driver's rules (``LuckModel``), loaded and checked.

    Raises:
        ValueError: it cannot be loaded (missing, damaged, altered) or does not cover the
            rules; the message is one line and says what to do.
    """
    from sichuan_env.agents.eval.luck import load_for

    model, why = load_for(RuleConfig())
    if model is None:
        raise ValueError(f"{why}; the matches report luck-adjusted points: reinstall "
                         "sichuan-env or restore agents/checkpoints/luck.pt and luck.json")  # fmt: skip
    return model


def match(
    new: Path,
    other: str | Path,
    walls: int,
    seed: int,
    device: str = "cpu",
    luck: Any = None,
    estimator: str = "luck",
) -> dict[str, Any]:
    """``new`` in one seat against three ``other`` (a name or a checkpoint), duplicate; its statistics.

    Plain points per hand with their 95% interval, win and deal-in rates, and the adjusted
    ones (``adjusted``, ``adjusted_ci95``; ``estimator`` names which): ``"luck"``, the value
    model's corrections (``luck`` or the shipped one, ``sichuan_env.agents.eval.luck``), or
    ``"advantage"``, the advantage-sum estimate with ``other`` as the reference (it must
    be a rule-based style or a greedy network the rollouts can play), each blended with
    the plain points by the cross-fitted coefficient of ``match_stats.per_wall``.

    Raises:
        ValueError: an unknown ``estimator``, or a reference the rollouts cannot play.
    """
    from sichuan_env.agents.eval.advantage import AdvantageSum
    from sichuan_env.agents.eval.evaluate import play_duplicate
    from sichuan_env.agents.eval.match_stats import mean_ci, per_wall, summarize
    from sichuan_env.agents.registry import make_agent
    from sichuan_env.agents.rule_based.fused import STYLES

    if estimator not in ("luck", "advantage"):
        raise ValueError(f"estimator must be 'luck' or 'advantage', got {estimator!r}")
    theirs = str(other) if str(other) in STYLES else "other"  # trusted by the advantage sum
    agents = {
        "new": make_agent(str(new), seed, device=device),
        theirs: make_agent(str(other), seed + 1, device=device),
    }
    lineup = ["new", theirs, theirs, theirs]
    est = AdvantageSum(lineup, RuleConfig(), seed=seed, reference=str(other)) if (
        estimator == "advantage") else None  # fmt: skip
    records = play_duplicate(lineup, walls, RuleConfig(), seed, progress=True, agents=agents)
    s = summarize(lineup, records, walls)["new"]
    keys = ("points_per_hand", "ci95", "win_rate", "deal_in_rate")
    if est is not None:
        corr = est.of(records, progress=True)
    else:
        model = value_model() if luck is None else luck
        corr = model.corrections([r for _, _, r in records]).total
    adjusted = per_wall(lineup, records, walls, corr)["new"][1]
    assert adjusted is not None
    m, c = mean_ci(adjusted)
    return {k: float(s[k]) for k in keys} | {"adjusted": m, "adjusted_ci95": c, "walls": walls,
                                             "seed": seed, "estimator": estimator}  # fmt: skip


def run_round(
    run_dir: Path,
    doc: dict,
    k: int,
    threads: int,
    device: str = "cpu",
    amp: str = "auto",
    luck: Any = None,
) -> None:
    """Finish round ``k``'s remaining stages, saving the state after each (``device``: fit, eval).

    ``luck``: the value model of the matches (None: the shipped one, loaded then).
    """
    from sichuan_env.train.policy import exit_labels, search_distill

    s = doc["settings"]
    if len(doc["rounds"]) < k:
        doc["rounds"].append({"round": k, "done": [], "seconds": {}})
    entry = doc["rounds"][k - 1]
    rdir = run_dir / f"round-{k:02d}"
    prev = network_of(run_dir, s, k - 1)
    for stage in stages_of(s):
        if stage in entry["done"]:
            continue
        print(f"[exit] round {k}: {stage} (network of round {k - 1}: {prev})", flush=True)
        t0 = time.time()
        if stage == "labels":
            out = rdir / "labels"
            argv = ["--net", str(prev), "--out", str(out), "--hands", str(s["hands"]),
                    "--samples", str(s["samples"]), "--p-label", str(s["p_label"]),
                    "--pool", str(s["pool"]), "--seed", str(1000 * s["seed"] + k),
                    "--threads", str(threads)]  # fmt: skip
            argv += [] if s["claims"] else ["--no-claims"]
            argv += ["--rollout", s["rollout"]]
            argv += ["--after-win"] if s["after_win"] else []
            argv += ["--oracle"] if s["oracle"] else []
            if s["search"] == "value-leaf":
                argv += ["--search", "value-leaf", "--value-model", value_of(run_dir, s, k - 1)]
            argv += ["--resume"] if (out / "meta.json").exists() else []
            entry["labels"] = exit_labels.main(argv)
        elif stage == "fit":
            fit = rdir / "fit"
            shutil.rmtree(fit, ignore_errors=True)  # an interrupted fit starts over
            first = 1 if s["aggregate"] else k
            dirs = [str(run_dir / f"round-{j:02d}" / "labels") for j in range(first, k + 1)]
            argv = ["--labels", *dirs, "--init", str(prev), "--keep-head", "--run", str(fit),
                    "--epochs", str(s["epochs"]), "--lr", str(s["lr"]),
                    "--select-walls", str(s["select_walls"]), "--select-seed", str(100 + k),
                    "--threads", str(threads), "--seed", str(s["seed"] + k),
                    "--anchor-decisions", str(s["anchor_decisions"]), "--objective", s["objective"],
                    "--margins", *map(str, s["margins"])]  # fmt: skip
            argv += ["--no-anchor-claims"] if s["claims"] else []
            if s["anchor_before_win"]:
                argv += ["--anchor-before-win", str(s["anchor_before_win"])]
            argv += ["--device", device, "--amp", amp, "--select-estimator",
                     "advantage" if s["estimator"] == "advantage" else "plain"]  # fmt: skip
            fitted = search_distill.main(argv)
            entry["fit"] = {"margin": fitted["chosen"]["margin"], "selection": fitted["chosen"]}
        elif stage == "value":
            entry["value"] = refit_value(rdir, network_of(run_dir, s, k), value_of(run_dir, s, k - 1),
                                         s["value_hands"], s["value_epochs"], 1000 * s["seed"] + k,
                                         threads, device)  # fmt: skip
        else:
            new = network_of(run_dir, s, k)
            walls, seed = s["eval_walls"], 1000 * s["seed"]
            est = s["estimator"]
            entry["vs_heuristic"] = match(new, "heuristic", walls, seed, device, luck, est)
            entry["vs_previous"] = match(new, prev, walls, seed + k, device, luck, est)
        entry["seconds"][stage] = round(time.time() - t0, 1)
        entry["done"].append(stage)
        write_state(run_dir, doc)
    report(doc)


def report(doc: dict) -> None:
    """Print the rounds so far: stages done, points against the heuristic and the previous round."""
    from rich.console import Console
    from rich.table import Table

    t = Table(title="expert iteration: points per hand, duplicate, 95% CI")
    for c in (
        "round",
        "stages",
        "label rows",
        "margin",
        "vs 3 heuristics",
        "vs 3 x previous",
        "minutes",
    ):
        t.add_column(c, justify="right")
    for r in doc["rounds"]:
        cell = [_points(r[k]) if k in r else "-" for k in ("vs_heuristic", "vs_previous")]
        labels = r.get("labels", {})
        rows = labels.get("rows", labels.get("new_rows", "-"))  # on disk (older states: new)
        margin = r.get("fit", {}).get("margin", "-")
        t.add_row(str(r["round"]), f"{len(r['done'])}/{len(stages_of(doc['settings']))}", str(rows), str(margin), *cell,
                  f"{sum(r['seconds'].values()) / 60:.1f}")  # fmt: skip
    Console().print(t)


def _points(m: dict) -> str:
    """A match's points: adjusted where it was measured (by the run's estimator), else plain."""
    if _number(m.get("adjusted")) and _number(m.get("adjusted_ci95")):
        return f"{m['adjusted']:+.3f} ± {m['adjusted_ci95']:.3f} adj."
    return f"{m['points_per_hand']:+.3f} ± {m['ci95']:.3f}"


def main(argv: list[str] | None = None) -> dict:
    """Run (or continue) the rounds; returns the state."""
    p = build_parser()
    args = p.parse_args(argv)
    problem = dir_problem(args.run)
    if problem:
        p.error(f"--run: {problem}")
    settings = {k: getattr(args, k) for k in SETTINGS}
    if args.search == "value-leaf" and args.claims:
        p.error("--search value-leaf labels own turns only: pass --no-claims")
    if args.search == "value-leaf" and args.oracle:
        p.error("--oracle is the rollout search's: --search value-leaf determinizes")
    if args.search == "value-leaf" and args.rollout != "heuristic":
        p.error("--rollout is the rollout search's: --search value-leaf plays no rollouts")
    luck = None
    if args.estimator == "luck":  # before any work: a damaged model would end a round late
        try:
            luck = value_model()
        except ValueError as exc:
            fail(PROG, exc)
    held = claim_output_or_exit(p, "--run", args.run, RUN_FILES, resume=args.resume,
                                overwrite=args.overwrite, what="expert-iteration run")  # fmt: skip
    if held and (args.run / "exit.json").exists():
        defaults = vars(p.parse_args(["--run", str(args.run)]))  # keys newer than the run
        try:
            doc = read_state(args.run, defaults)
        except ValueError as exc:
            fail(PROG, exc)
        old = doc["settings"]
        doc["settings"] = {k: old.get(k, LEGACY.get(k, defaults[k])) for k in SETTINGS}
        from sichuan_env.train.common import refuse_changed_settings

        refuse_changed_settings(PROG, p, args.run, doc["settings"], settings)
    elif args.resume:
        fail(PROG, f"--resume: no exit.json in {args.run}")
    else:
        if not _init_path(args.init).is_file():
            p.error(f"--init: no checkpoint {args.init}")
        args.run.mkdir(parents=True, exist_ok=True)
        doc = {"settings": settings, "rounds": []}
        write_state(args.run, doc)
    from sichuan_env.threads import set_threads

    set_threads(args.threads)
    for k in range(1, args.rounds + 1):
        n_stages = len(stages_of(doc["settings"]))
        finished = len(doc["rounds"]) >= k and len(doc["rounds"][k - 1]["done"]) == n_stages
        if finished:
            continue
        left = args.rounds - k + 1
        print(f"[exit] round {k} of {args.rounds}; {left} round(s) left", flush=True)
        run_round(args.run, doc, k, args.threads, args.device, args.amp, luck)
    report(doc)
    return doc


__all__ = [
    "PROG",
    "RUN_FILES",
    "SETTINGS",
    "STAGES",
    "build_parser",
    "check_state",
    "main",
    "match",
    "network_of",
    "read_state",
    "refit_value",
    "report",
    "run_round",
    "stages_of",
    "value_model",
    "value_of",
    "write_state",
]


if __name__ == "__main__":
    sys.exit(run(lambda: main() and 0, PROG))
