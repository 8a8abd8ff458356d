"""Agents, plugins and run state as a hostile user writes them (hardening round 3, #29).

- every agent's answer is checked in ``sichuan_env.envs.acting.ask`` (floats, NaN, wrong
  counts, illegal ids), the error naming the agent and the rows;
- a spec is checked to be an agent class or factory before it is called (``sys:exit``),
  and a plugin that fails to import or build is one line naming it in every CLI;
- ladder pair files are named by a digest of the agents and their checkpoints' content;
- the expert-iteration driver's ``exit.json`` is validated whole, its counts come from disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sichuan_env.agents import registry
from sichuan_env.agents.eval import ladder as L

from sichuan_env import plugins
from sichuan_env.engine.errors import IllegalActionError
from sichuan_env.envs.acting import Decisions, SeatMemory, ask, ask_one
from sichuan_env.envs.vector import VectorEnv

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''
import numpy as np


def _legal(masks):
    return np.argmax(np.asarray(masks) == 1, axis=1)


class NotAnAgent:
    pass


def unannotated(seed=None):
    raise AssertionError("an unannotated function must never be called")


class Boom:
    name, obs_version = "boom", 1

    def __init__(self, seed=None):
        raise RuntimeError("the plugin's constructor failed")

    def act(self, obs, mask): ...
    def act_batch(self, obs, masks): ...


class FloatAgent:
    """A duck-typed agent answering a legal id + 0.7."""

    name, obs_version = "float", 1

    def __init__(self, seed=None):
        pass

    def act(self, obs, mask):
        return float(_legal(np.asarray(mask)[None])[0]) + 0.7

    def act_batch(self, obs, masks):
        return _legal(masks) + 0.7
'''


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    (tmp_path / "hostile_plugin_mod.py").write_text(PLUGIN)
    (tmp_path / "hostile_plugin_boom.py").write_text("raise RuntimeError('broken plugin')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


# ---- agents' answers -----------------------------------------------------------------------


class Duck:
    """Answers ``answer(masks)`` through whichever method the host calls."""

    obs_version = 1

    def __init__(self, answer, name="duck", reads_state=False, stateful=False):
        self.answer, self.name = answer, name
        self.reads_state, self.stateful = reads_state, stateful

    def act(self, obs, mask):
        return self.answer(np.asarray(mask)[None])  # one row's answer, as an array

    def act_batch(self, obs, masks):
        return self.answer(masks)

    def act_states(self, states, masks, rules):
        return self.answer(masks)

    def act_stateful(self, obs, masks, keys, starts):
        return self.answer(masks)


def _legal(masks):
    return np.argmax(np.asarray(masks) == 1, axis=1)


def _illegal(masks):
    return np.argmin(np.asarray(masks) == 1, axis=1)


@pytest.fixture(scope="module")
def decisions():
    venv = VectorEnv(4, seed=3)
    obs, mask, seat = venv.reset()
    return Decisions(venv.states_of(np.arange(4)), mask, venv.rules, seat, obs=obs,
                     obs_version=1, memory=SeatMemory(4))  # fmt: skip


BAD_ANSWERS = {
    "legal + 0.7": (lambda m: _legal(m) + 0.7, IllegalActionError, r"non-integral.* rows? \["),
    "NaN": (lambda m: np.full(len(m), np.nan), IllegalActionError, "non-finite"),
    "inf": (lambda m: np.full(len(m), np.inf), IllegalActionError, "non-finite"),
    "2N answers": (lambda m: np.tile(_legal(m), 2), IllegalActionError, "shape"),
    "N-1 answers": (lambda m: _legal(m)[:-1], IllegalActionError, "shape"),
    "illegal ids": (_illegal, IllegalActionError, r"not legal at rows? \["),
    "out of range": (lambda m: np.full(len(m), 88), IllegalActionError, "not legal"),
    "negative": (lambda m: np.full(len(m), -1), IllegalActionError, "not legal"),
    "strings": (lambda m: np.array(["3"] * len(m)), TypeError, "not integer action ids"),
    "booleans": (lambda m: np.ones(len(m), bool), TypeError, "bool"),
    "None": (lambda m: None, TypeError, "not integer"),
}


@pytest.mark.parametrize("how", ["act_batch", "act", "act_states", "act_stateful"])
@pytest.mark.parametrize("case", sorted(BAD_ANSWERS))
def test_every_bad_answer_is_refused_naming_the_agent(decisions, how, case):
    answer, exc, match = BAD_ANSWERS[case]
    agent = Duck(answer, name="quack", reads_state=how == "act_states",
                 stateful=how == "act_stateful")  # fmt: skip
    rows = np.array([2]) if how == "act" else None  # one row: the act path
    with pytest.raises(exc, match=match) as info:
        ask(agent, decisions, rows)
    assert "'quack'" in str(info.value)
    if case == "illegal ids":
        assert ("row [2]" if how == "act" else "rows [0, 1, 2, 3]") in str(info.value)


def test_legal_answers_of_any_numeric_kind_are_accepted(decisions):
    want = _legal(decisions.masks)
    for answer in (want.astype(np.int8), want.astype(np.float32), want.tolist(), want[:, None]):
        got = ask(Duck(lambda m, a=answer: a), decisions)
        assert got.dtype == np.int64 and got.tolist() == want.tolist()
    state = decisions.states[1:2]
    mask = decisions.masks[1]
    assert ask_one(Duck(lambda m: _legal(m) + 0.0), state, mask, decisions.rules, 0) == want[1]
    with pytest.raises(IllegalActionError, match="'duck'"):
        ask_one(Duck(lambda m: _legal(m) + 0.7), state, mask, decisions.rules, 0)


def test_the_vector_env_still_refuses_illegal_actions_of_direct_callers():
    venv = VectorEnv(2, seed=1)
    _, mask, _ = venv.reset()
    with pytest.raises(IllegalActionError):
        venv.step(_illegal(mask))


def test_sichuan_eval_with_a_duck_agent_answering_floats_is_one_line(plugin_path):
    env = {**os.environ, "PYTHONPATH": f"{plugin_path}{os.pathsep}{ROOT}"}
    argv = ["-m", "sichuan_env.agents.eval", "--walls", "1", "--quiet", "--lineup",
            "hostile_plugin_mod:FloatAgent", "random", "random", "random"]  # fmt: skip
    r = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT,
                       env=env, check=False)  # fmt: skip
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("error") == 1 and "agent 'float'" in r.stderr


# ---- the registry and plugins ----------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, match",
    [
        ("sys:exit", "not an agent factory: builtin"),
        ("os:_exit", "not an agent factory"),
        ("shutil:rmtree", "not an agent factory: function"),
        ("hostile_plugin_mod:NotAnAgent", "not an agent factory: type"),
        ("hostile_plugin_mod:unannotated", "not an agent factory: function"),
        ("hostile_plugin_mod:Boom", "cannot build agent .*RuntimeError: the plugin's constructor"),
        ("hostile_plugin_boom:Agent", "cannot import agent .*RuntimeError: broken plugin"),
        ("hostile_no_such_module_xyz:Agent", "cannot import agent .*ModuleNotFoundError"),
    ],
)
def test_a_spec_is_checked_before_it_is_called(plugin_path, spec, match):
    with pytest.raises(ValueError, match=match) as info:
        registry.make_agent(spec)  # sys:exit would end the test run if it were called
    assert repr(spec) in str(info.value)


def test_every_cli_reports_a_bad_spec_in_one_line(plugin_path, tmp_path, capsys):
    from sichuan_env.agents.eval.cli import main as evaluate

    for spec in ("hostile_plugin_mod:NotAnAgent", "hostile_plugin_boom:Agent", "sys:exit"):
        with pytest.raises(SystemExit) as info:
            evaluate(["--walls", "1", "--lineup", spec, "random", "random", "random"])
        err = capsys.readouterr().err
        assert info.value.code == 2 and spec in err and err.count("error:") == 1
        with pytest.raises(SystemExit) as info:
            L.main(["--agents", spec, "heuristic", "--out", str(tmp_path / "L")])
        err = capsys.readouterr().err
        assert info.value.code == 2 and spec in err and err.count("error:") == 1
    assert not (tmp_path / "L").exists()


@pytest.mark.parametrize("ref", ["hostile_no_such_module_xyz:Agent", "hostile_plugin_boom:Agent"])
def test_ladder_all_with_a_broken_entry_point(plugin_path, tmp_path, monkeypatch, capsys, ref):
    registry.available()  # the entry points are read once; then one broken plugin is added
    monkeypatch.setitem(registry._FACTORIES, "broken-plugin", ref)
    with pytest.raises(SystemExit) as info:
        L.main(["--agents", "all", "--walls", "2", "--out", str(tmp_path / "L")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "'broken-plugin'" in err and "Traceback" not in err


def test_a_broken_resolver_entry_point_is_a_value_error(monkeypatch):
    class EP:
        name, value = "agent", "broken_resolver:make"

        def load(self):
            raise RuntimeError("cannot import it")

    monkeypatch.setattr(plugins, "entry_points", lambda group: [EP()])
    plugins.agent_resolver.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"broken_resolver:make.*RuntimeError"):
            plugins.agent_resolver()
    finally:
        plugins.agent_resolver.cache_clear()


# ---- ladder pairs --------------------------------------------------------------------------


def test_pair_files_are_named_by_a_digest_of_the_pair(tmp_path):
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    a, b = deep / ("a" * 110 + ".pt"), deep / ("b" * 110 + ".pt")
    (tmp_path / "p").mkdir()
    for f in (a, b, tmp_path / "p" / "bc.pt", tmp_path / "p_bc.pt"):
        f.write_bytes(b"weights")
    long = L._pair_file(tmp_path, str(a), str(b), L.pair_identity(str(a), str(b)))
    assert len(long.name) < 100  # a file name any file system takes
    names = set()
    for x in ("random", str(tmp_path / "p" / "bc.pt"), str(tmp_path / "p_bc.pt")):
        for y in ("heuristic",):
            names.add(L._pair_file(tmp_path, x, y, L.pair_identity(x, y)).name)
    assert len(names) == 3  # p/bc.pt and p_bc.pt are two pairs, not one file
    before = L.pair_identity(str(a), "random")
    a.write_bytes(b"retrained weights")  # the same path, other content: another pair
    after = L.pair_identity(str(a), "random")
    assert before != after
    assert L._pair_file(tmp_path, str(a), "random", before) != L._pair_file(
        tmp_path, str(a), "random", after
    )
    assert "sha256" in L.pair_identity("random", "bc")["agents"][1]  # shipped ones too


def test_a_pair_file_of_other_checkpoints_is_never_reused(tmp_path):
    settings = L._settings(2, 0, L.RuleConfig())
    ident = L.pair_identity("random", "heuristic")
    path = tmp_path / "pair.json"
    doc = {"agents": ["random", "heuristic"], "identity": ident, **settings, "points": [1, -1]}
    path.write_text(json.dumps(doc))
    assert L.load_pair(path, "random", "heuristic", settings, ident).tolist() == [1, -1]
    other = {**ident, "agents": [ident["agents"][0], {"spec": "heuristic", "sha256": ["x"]}]}
    with pytest.raises(ValueError, match="other agents or checkpoints"):
        L.load_pair(path, "random", "heuristic", settings, other)


def test_two_ladders_into_one_folder_at_once(tmp_path):
    out = tmp_path / "L"
    argv = [sys.executable, "-m", "sichuan_env.agents.eval.ladder", "--agents", "random",
            "heuristic", "--walls", "2", "--out", str(out), "--quiet", "--resume"]  # fmt: skip
    procs = [subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]  # fmt: skip
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    assert (out / "ladder.png").stat().st_size > 0 and json.loads((out / "ladder.json").read_text())
    leftovers = [p.name for p in out.rglob("*") if p.name.endswith(".tmp") or ".tmp." in p.name]
    assert not leftovers


# ---- the expert-iteration driver's state ---------------------------------------------------


def _state(**round_changes):
    match = {"points_per_hand": 0.1, "ci95": 0.2, "win_rate": 0.3, "deal_in_rate": 0.1,
             "walls": 4, "seed": 0}  # fmt: skip
    r = {"round": 1, "done": ["labels", "fit", "eval"],
         "seconds": {"labels": 1.0, "fit": 2.0, "eval": 3.0},
         "labels": {"shards": 1, "new_rows": 5, "rows": 9}, "fit": {"margin": 0.3, "selection": {}},
         "vs_heuristic": match, "vs_previous": match}  # fmt: skip
    r.update(round_changes)
    return {"settings": {"hands": 8}, "rounds": [{k: v for k, v in r.items() if v is not None}]}


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"seconds": None}, "seconds"),
        ({"labels": 5}, "'labels'"),
        ({"labels": {"shards": 1, "new_rows": -1}}, "'labels'"),
        ({"fit": {"margin": "0.3", "selection": {}}}, "'fit'"),
        ({"vs_heuristic": {"points_per_hand": float("nan")}}, "'vs_heuristic'"),
        ({"done": ["fit"]}, "'done'"),
        ({"round": 2}, "not round 1"),
        ({"extra": 1}, "unexpected keys"),
    ],
)
def test_exit_json_is_validated_whole(tmp_path, changes, match, capsys):
    import sichuan_env.train.policy.exit as ex

    doc = _state(**changes)
    with pytest.raises(ValueError, match=match):
        ex.check_state(doc, Path("exit.json"))
    (tmp_path / "exit.json").write_text(json.dumps(doc))
    with pytest.raises(SystemExit) as info:
        ex.main(["--run", str(tmp_path), "--resume"])
    err = capsys.readouterr().err
    assert info.value.code == 1 and err.count("error:") == 1 and "Traceback" not in err


def test_exit_settings_and_a_good_state(tmp_path):
    import sichuan_env.train.policy.exit as ex

    defaults = vars(ex.build_parser().parse_args(["--run", "x"]))
    ex.check_state(_state(), Path("exit.json"), defaults)
    for bad in ({"hands": "8"}, {"hands": 8.5}, {"claims": 1}, {"margins": ["a"]}, {"x": 1}):
        with pytest.raises(ValueError, match="setting"):
            ex.check_state({**_state(), "settings": bad}, Path("exit.json"), defaults)


def test_label_rows_are_counted_on_disk(tmp_path):
    import sichuan_env.train.policy.search_labels as sl

    for s, n in enumerate((3, 5)):
        part = {k: np.zeros((n, *spec.shape[1:]), spec.dtype) for k, spec in sl.SHARD.items()}
        sl.write_shard(tmp_path, s, part)
    assert sl.count_label_rows(tmp_path) == {"shards_on_disk": 2, "rows": 8}
    (tmp_path / "shard-00002.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="shard-00002"):
        sl.count_label_rows(tmp_path)
