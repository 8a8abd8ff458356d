"""The training and dataset CLIs' numeric options under hostile values ("Hardening, round 2").

Every numeric flag is range-checked by its type (``float_arg`` / ``int_arg``): NaN, infinities
and out-of-range values are bad usage (exit 2, the flag named on stderr, never a traceback).
Split from ``test_hostile_train.py``.
"""

from __future__ import annotations

import argparse
import math

import pytest

pytest.importorskip("torch")
pytest.importorskip("pyarrow")

import sichuan_env.train.belief.report as belief_report
import sichuan_env.train.belief.train as belief
from sichuan_env.train.data import make_dataset
from sichuan_env.train.policy import bc, ppo, search_distill, search_labels

from sichuan_env._cli import float_arg, int_arg


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "0", "-1", "1e309", "2", "x", ""])
def test_float_arg_refuses_nan_inf_and_out_of_range(text):
    with pytest.raises(argparse.ArgumentTypeError):
        float_arg(0, 1)(text)


def test_float_arg_bounds():
    assert float_arg(0, 1)("1") == 1.0 and float_arg(0, 1, include_lo=True)("0") == 0.0
    assert float_arg(0, math.inf, finite=False)("inf") == math.inf
    with pytest.raises(argparse.ArgumentTypeError):
        float_arg(0, math.inf, finite=False)("nan")
    with pytest.raises(argparse.ArgumentTypeError, match="integer"):
        int_arg(0, 10)(str(2**70))


NUMERIC = {
    "bc": (
        bc.main,
        [],
        [
            ("--lr", "inf"),
            ("--lr", "nan"),
            ("--lr", "0"),
            ("--lr", "-1e-3"),
            ("--minutes", "nan"),
            ("--minutes", "0"),
            ("--hidden", "0"),
            ("--layers", "99"),
            ("--seed", str(2**70)),
            ("--seed", "-1"),
            ("--batch", "0"),
            ("--envs", "10000000"),
            ("--epochs", "1.5"),
        ],
    ),
    "ppo": (
        ppo.main,
        [],
        [
            ("--lr", "inf"),
            ("--clip", "nan"),
            ("--gamma", "2"),
            ("--kl-coef", "-1"),
            ("--minutes", "-inf"),
            ("--seed", str(2**64)),
            ("--hidden", "0"),
            ("--layers", "99"),
            ("--minibatch", "0"),
            ("--reward-scale", "1e400"),
        ],
    ),
    "belief": (
        belief.main,
        ["--data", "x"],
        [
            ("--lr", "inf"),
            ("--dropout", "1"),
            ("--weight-decay", "-1"),
            ("--hidden", "0"),
            ("--layers", "99"),
            ("--seed", str(2**70)),
            ("--batch", "-5"),
            ("--seq-lr-mult", "nan"),
        ],
    ),
    "search_distill": (
        search_distill.main,
        ["--labels", "x", "--run", "y"],
        [
            ("--lr", "inf"),
            ("--minutes", "nan"),
            ("--margins", "nan"),
            ("--floor", "inf"),
            ("--val-mod", "1"),
            ("--seed", str(2**70)),
        ],
    ),
    "search_labels": (
        search_labels.main,
        ["--out", "x"],
        [("--p-label", "0"), ("--p-label", "nan"), ("--hands", "-5"), ("--seed", str(2**70))],
    ),
    "make_dataset": (
        make_dataset.main,
        ["--out", "x"],
        [("--hands", "0"), ("--seed", "-1"), ("--envs", "0")],
    ),
    "belief_report": (
        belief_report.main,
        ["none", "--data", "x"],
        [("--max-rows", "-5"), ("--games", "0"), ("--threads", "nan")],
    ),
}


@pytest.mark.parametrize(
    ("cli", "flag", "value"),
    [(cli, f, v) for cli, (_, _, cases) in NUMERIC.items() for f, v in cases],
)
def test_every_numeric_flag_is_range_checked(cli, flag, value, capsys):
    main, base, _ = NUMERIC[cli]
    with pytest.raises(SystemExit) as info:
        main([*base, flag, value])
    err = capsys.readouterr().err
    assert info.value.code == 2 and flag in err and "Traceback" not in err, err
