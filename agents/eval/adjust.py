"""The luck adjustment in the evaluation tools (``sichuan-eval``, ``sichuan-ladder``).

The tools share: the options (``--value-model``, ``--no-adjust``), the model for a
preset with a one-line reason when there is none (``model_for``), the
corrections of a match's records with a progress bar on stderr (``Corrections``,
``corrections_with_bar``), the per-wall samples in the JSON (``per_wall_doc``)
and the stopping rule of ``--target-ci`` (``target_stop``). The corrections come
from the records alone, so they are the same for matches played in one process,
on Ray, or by agents that read the engine state (the searches).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from sichuan_env.agents.eval.advantage import (
    FALLBACK,
    REPS,
    AdvantageSum,
    default_reference,
    reference_policy,
    split_lineup,
)
from sichuan_env.agents.eval.match_stats import mean_ci, per_wall

from sichuan_env import RuleConfig
from sichuan_env._cli import int_arg
from sichuan_env._progress import progress_bar

SHIPPED = "luck"
"""The value model used by default: the shipped per-seat ``agents/checkpoints/luck.pt``.

The whole-table model (``table_value``) predicts the points to come better (held-out
R² 0.238 against 0.13) but removes less luck: its values move more between one
counterfactual draw and the next (docs/evaluation.md, "The whole-table value network")."""


def add_luck_args(p: argparse.ArgumentParser) -> None:
    """``--value-model SPEC`` and ``--no-adjust``."""
    p.add_argument(
        "--value-model", default=SHIPPED, metavar="SPEC",
        help="the luck adjustment's value model: 'luck' (shipped, per seat; the default), "
             "'table_value' (shipped, the whole-table network) or a .pt path of either "
             "(python -m sichuan_env.train.value, python -m sichuan_env.train.table_value.fit); "
             "the estimates stay plain where it does not cover the preset",
    )  # fmt: skip
    p.add_argument(
        "--no-adjust", action="store_true",
        help="plain estimates only (no luck-adjusted points per hand)",
    )  # fmt: skip
    p.add_argument(
        "--fine-tune", type=int_arg(0, 100), default=0, metavar="EPOCHS",
        help="with --value-model table_value: fine-tune it on the match's own hands, cross-fitted "
             "(each half of the walls adjusted by a copy fitted on the other half: still "
             "unbiased), for lineups the shipped model does not know; 0: off",
    )  # fmt: skip


def add_estimator_args(p: argparse.ArgumentParser) -> None:
    """``--estimator``, ``--reference`` and ``--reps`` (``sichuan-eval``)."""
    p.add_argument(
        "--estimator", choices=("auto", "advantage", "luck"), default="auto",
        help="the adjusted estimate: 'advantage' (the advantage-sum estimate: every decision "
             "that leaves a reference policy scored by paired rollouts), 'luck' (the value "
             "model's luck adjustment) or 'auto' (the default: 'advantage' for one agent "
             "against three copies of a rule-based style or greedy network, unless "
             "--value-model or --fine-tune is given; else 'luck')",
    )  # fmt: skip
    p.add_argument(
        "--reference", default=None, metavar="AGENT",
        help="the advantage-sum estimate's reference policy (a rule-based style or a greedy "
             "network agent; default: the three copies where the lineup is one agent against "
             "three, else heuristic)",
    )  # fmt: skip
    p.add_argument(
        "--reps", type=int_arg(2, 4096), default=None, metavar="N",
        help=f"the advantage-sum estimate's paired rollouts per decision that leaves the "
             f"reference (default {REPS})",
    )  # fmt: skip


def add_ladder_estimator_args(p: argparse.ArgumentParser) -> None:
    """``--estimator``, ``--reference`` and ``--reps`` (``sichuan-ladder``: luck by default)."""
    p.add_argument(
        "--estimator", choices=("luck", "advantage"), default="luck",
        help="the adjusted points: the value model's luck adjustment (default) or the "
             "advantage-sum estimate against --reference (every decision that is not the "
             "reference's scored by --reps paired rollouts; sharpest for agents close to it)",
    )  # fmt: skip
    p.add_argument("--reference", default=None, metavar="AGENT",
                   help=f"the advantage-sum estimate's reference policy (default {FALLBACK})")  # fmt: skip
    p.add_argument("--reps", type=int_arg(2, 4096), default=None, metavar="N",
                   help=f"the advantage-sum estimate's rollouts per decision (default {REPS})")  # fmt: skip


def ladder_advantage(p: argparse.ArgumentParser, args: argparse.Namespace) -> dict | None:
    """``{"reference", "reps"}`` of the ladder's ``--estimator advantage``, or None (luck).

    Its options with the luck adjustment's, or without ``--estimator advantage``, and a
    reference the rollouts cannot play, are usage errors (exit 2).
    """
    if args.estimator != "advantage":
        if args.reference is not None or args.reps is not None:
            p.error("--reference and --reps are the advantage-sum estimate's: "
                    "add --estimator advantage")  # fmt: skip
        return None
    if args.no_adjust or args.fine_tune or args.value_model != SHIPPED:
        p.error("--estimator advantage takes no --no-adjust, --value-model or --fine-tune")
    reference = FALLBACK if args.reference is None else args.reference
    try:
        reference_policy(reference)
    except ValueError as exc:
        p.error(f"--reference: {exc}")
    return {"reference": reference, "reps": REPS if args.reps is None else args.reps}


class AdvantageCorrections(AdvantageSum):
    """``AdvantageSum`` whose failures are ``AdjustError`` (what the tools report in one line)."""

    def of(self, records: list[tuple[int, int, dict]], progress: bool = False) -> np.ndarray:
        """See ``AdvantageSum.of``.

        Raises:
            AdjustError: a record it cannot replay, a wall without its four rotations.
        """
        try:
            return super().of(records, progress)
        except ValueError as exc:
            raise AdjustError(str(exc)) from None


def advantage_for(
    p: argparse.ArgumentParser, args: argparse.Namespace, rules: RuleConfig
) -> AdvantageCorrections | None:
    """The advantage-sum estimate ``args`` ask for, or None (the luck adjustment, or none).

    ``auto`` picks it for one agent against three copies of a policy the rollouts can
    play, with no ``--value-model`` or ``--fine-tune``. ``--estimator advantage`` (or
    ``--reference`` / ``--reps``) takes any lineup; with ``--value-model`` /
    ``--fine-tune`` / ``--no-adjust``, or a ``--reference`` the rollouts cannot play, it
    is a usage error (exit 2), as are ``--reference`` / ``--reps`` with ``--estimator luck``.
    """
    own = [o for o, v in (("--reference", args.reference), ("--reps", args.reps)) if v is not None]
    if args.no_adjust and (args.estimator == "advantage" or own):
        p.error(f"--no-adjust asks for no adjusted estimate: drop {(own or ['--estimator'])[0]}")
    if args.estimator == "luck":
        if own:
            p.error(f"{own[0]} is the advantage-sum estimate's: drop it or --estimator luck")
        return None
    if args.no_adjust:
        return None
    explicit = args.estimator == "advantage" or bool(own)
    luck_asked = bool(args.fine_tune) or args.value_model != SHIPPED
    if explicit and luck_asked:
        p.error("the advantage-sum estimate takes no --value-model or --fine-tune")
    if not explicit:
        pair = split_lineup(args.lineup)
        if luck_asked or pair is None or pair[0] == pair[1]:
            return None
        if default_reference(args.lineup) != pair[1]:
            return None  # the three copies cannot be rolled out: the luck adjustment
    try:
        return AdvantageCorrections(
            args.lineup,
            rules,
            reps=REPS if args.reps is None else args.reps,
            seed=args.seed,
            reference=args.reference,
        )
    except ValueError as exc:
        p.error(f"the advantage-sum estimate: {exc}")


def model_for(args: argparse.Namespace, rules: RuleConfig, quiet: bool = False) -> Any:
    """The value model for ``rules`` (``LuckModel``) or None, saying why on stderr when None.

    A missing torch, a damaged file or a model of other rules gives None and one line;
    an explicit ``--value-model`` that cannot be used is an error (exit 2) instead.
    """
    if args.no_adjust:
        return None
    try:
        from sichuan_env.agents.eval.table_value import load_table_for
    except ImportError as exc:  # torch missing: the adjustment needs the [train] extra
        print(f"no luck adjustment: {exc} (pip install -e '.[train]')", file=sys.stderr)
        return None
    model, why = load_table_for(rules, args.value_model)
    if model is None and args.value_model != SHIPPED:
        raise SystemExit(f"error: --value-model: {why}")
    if model is None or not quiet:
        print(why, file=sys.stderr)
    return model


class AdjustError(ValueError):
    """The luck adjustment failed: a record it cannot replay, or a value model that overflows."""


def lineup_ids(lineup: Sequence[str], records: Sequence[tuple[int, int, dict]]) -> np.ndarray:
    """``int8[len(records), 4]``: the whole-table model's policy id of each hand's seats."""
    from sichuan_env.agents.eval.table_rows import seat_ids

    by_rotation = [seat_ids(lineup, r) for r in range(4)]
    return (
        np.stack([by_rotation[rot % 4] for _, rot, _ in records])
        if records
        else np.zeros((0, 4), dtype=np.int8)
    )


def corrections_with_bar(
    model: Any, records: Sequence[dict], progress: bool = True, lineups: np.ndarray | None = None
) -> Any:
    """``model.corrections(records)`` (a ``luck.Corrections``), with a bar on stderr.

    ``lineups`` (``lineup_ids``) tells a whole-table model who plays each seat; the older
    per-seat model does not read it.

    The adjustment replays every hand (seconds per thousand hands, more on a cold numba
    cache), so it shows its own bar after the hands' bar rather than a silent pause.

    Raises:
        ValueError: see ``LuckModel.corrections`` (a record it cannot replay, non-finite
            corrections).
    """
    columns = (TextColumn("luck adjustment"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())  # fmt: skip
    with progress_bar(*columns, disable=not progress) as bar:
        task = bar.add_task("luck adjustment", total=len(records))
        advance = lambda k: bar.advance(task, k)
        if lineups is not None and _reads_lineups(model):
            return model.corrections(records, lineups, progress=advance)
        return model.corrections(records, progress=advance)


def _reads_lineups(model: Any) -> bool:
    from sichuan_env.agents.eval.table_value import TableModel

    return isinstance(model, TableModel)


class Corrections:
    """The corrections of a growing list of match records, each record's computed once.

    ``seconds`` is the time spent computing them, so far (the ``--target-ci`` checks during
    play included).
    """

    def __init__(self, model: Any, lineup: Sequence[str] | None = None, fine_tune: int = 0) -> None:
        self.model = model
        self.lineup = list(lineup) if lineup is not None else None
        self.fine_tune = fine_tune
        if fine_tune and (self.lineup is None or not _reads_lineups(model)):
            raise ValueError(
                "--fine-tune fine-tunes the whole-table value model: add --value-model table_value"
            )
        self.seconds = 0.0
        self._done: list[np.ndarray] = []
        self._n = 0

    def of(self, records: list[tuple[int, int, dict]], progress: bool = False) -> np.ndarray:
        """``float[len(records), 4]``: each hand's and seat's luck (``records`` only grows).

        Args:
            records: the match's records so far.
            progress: show a bar on stderr (not while another bar is live: the hands').

        Raises:
            AdjustError: see ``LuckModel.corrections`` (also from ``target_stop``'s checks
                during play, which the tools report as one line).
        """
        if self._n < len(records):
            t0 = time.perf_counter()
            try:
                if self.fine_tune:  # cross-fitted over the whole match: all at once
                    self._done = [self._cross_fitted(records, progress)]
                    self._n = len(records)
                    return self._done[0]
                fresh = records[self._n :]
                ids = None if self.lineup is None else lineup_ids(self.lineup, fresh)
                new = [r for _, _, r in fresh]
                self._done.append(corrections_with_bar(self.model, new, progress, ids).total)
                self._n = len(records)
            except ValueError as exc:
                raise AdjustError(str(exc)) from None
            finally:
                self.seconds += time.perf_counter() - t0
        return np.concatenate(self._done) if self._done else np.zeros((0, 4))

    def _cross_fitted(self, records: list, progress: bool) -> np.ndarray:
        from sichuan_env.agents.eval.table_finetune import cross_fitted_corrections

        assert self.lineup is not None
        columns = (TextColumn("luck adjustment, cross-fitted"), BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn())  # fmt: skip
        with progress_bar(*columns, disable=not progress) as bar:
            task = bar.add_task("luck adjustment", total=len(records))
            c = cross_fitted_corrections(
                self.model, records, lineup_ids(self.lineup, records), self.fine_tune,
                progress=lambda k: bar.advance(task, k),
            )  # fmt: skip
        return c.total


def per_wall_doc(samples: dict[str, tuple[np.ndarray, np.ndarray | None]]) -> dict[str, Any]:
    """The JSON of ``match_stats.per_wall``: per agent, ``plain`` and ``adjusted`` lists."""
    return {
        name: {"plain": [round(float(x), 6) for x in plain],
               "adjusted": None if adj is None else [round(float(x), 6) for x in adj]}
        for name, (plain, adj) in samples.items()
    }  # fmt: skip


def target_stop(
    lineup: list[str], corrections: Corrections | None, target: float,
    log: Callable[[str], None] | None = None,
) -> Callable[[list[tuple[int, int, dict]]], bool]:  # fmt: skip
    """The ``stop`` of ``play_duplicate`` for ``--target-ci``: every agent's CI at most ``target``.

    The CI is the adjusted one with ``corrections``, else the plain one.
    """

    def stop(records: list[tuple[int, int, dict]]) -> bool:
        walls = max(w for w, _, _ in records) + 1
        corr = corrections.of(records) if corrections is not None else None
        samples = per_wall(lineup, records, walls, corr)
        worst = max(
            mean_ci(adj if adj is not None else plain)[1] for plain, adj in samples.values()
        )
        if log is not None:
            log(f"--target-ci: {walls} walls, widest 95% CI {worst:.4f} (target {target})")
        return walls >= 2 and worst <= target

    return stop
