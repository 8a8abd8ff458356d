"""``--help`` is plain text for users: no reST markup, no internal notes, the right program name."""

from __future__ import annotations

import importlib

import pytest

CLIS = {
    "sichuan_env.play": "sichuan-play",
    "sichuan_env.replay": "sichuan-replay",
    "sichuan_env.agents.eval.cli": "sichuan-eval",
    "sichuan_env.agents.eval.ladder": "sichuan-ladder",
    "sichuan_env.viewer.__main__": "sichuan-viewer",
    "sichuan_env.demo": "python -m sichuan_env",
    "sichuan_env.train.policy.bc": None,
    "sichuan_env.train.policy.ppo": None,
    "sichuan_env.train.data.make_dataset": None,
    "sichuan_env.train.belief.train": None,
    "sichuan_env.train.belief.baselines": None,
    "sichuan_env.agents.rule_based.population": None,
}


@pytest.mark.parametrize("module", sorted(CLIS))
def test_help_is_plain_text(module, capsys):
    if ".train." in module:
        pytest.importorskip("torch")
    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: "), text[:200]
    if CLIS[module] is not None:
        assert text.startswith(f"usage: {CLIS[module]} "), text.splitlines()[0]
    for raw in ("``", ":mod:`", ":func:`", ":class:`", "Layering", "\\\\"):
        assert raw not in text, f"{module} --help shows {raw!r}"


def test_plain_text_drops_rest_markup():
    from sichuan_env._cli import plain_text

    assert (
        plain_text("``--walls`` and :mod:`sichuan_env.plugins`")
        == "--walls and sichuan_env.plugins"
    )
