"""Hardening, round 4: the paired tool's --out, seeds, checkpoint kinds and folders, local
module specs, "did you mean", the refused Parallel API, the docs extra, the docs' figures
and the Gymnasium env's subpackage."""

import errno
import json
import os
import sys
from pathlib import Path

import pytest
import tomllib
from sichuan_env.agents.checkpoint import SHIPPED_DIR
from sichuan_env.agents.eval.cli import main as evaluate
from sichuan_env.agents.registry import make_agent

import sichuan_env
from research.exit import paired as P

ROOT = Path(__file__).resolve().parents[1]


# --- 1. research/exit/paired.py --out ---------------------------------------------------


def _match(path, agent, plain, adjusted):
    doc = {
        "lineup": [agent, "distill", "distill", "distill"], "walls": len(plain), "seed": 52,
        "preset": "xuezhan", "per_wall": {agent: {"plain": plain, "adjusted": adjusted}},
    }  # fmt: skip
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.fixture
def pair(tmp_path):
    return (
        _match(tmp_path / "a.json", "a.pt", [1.0, 2.0, 0.5], [1.0, 1.5, 0.5]),
        _match(tmp_path / "b.json", "b.pt", [0.0, 1.0, 0.5], [0.5, 1.0, 0.0]),
    )


def test_paired_out_in_a_missing_folder_is_written(pair, tmp_path):
    out = tmp_path / "new" / "deeper" / "paired.json"
    assert P.main([*pair, "--out", str(out)]) == 0
    assert json.loads(out.read_text())["a_minus_b_plain"]["mean"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_paired_out_that_is_a_folder_is_one_usage_line(pair, tmp_path, capsys, overwrite):
    folder = tmp_path / "results"
    folder.mkdir()
    with pytest.raises(SystemExit) as info:
        P.main([*pair, "--out", str(folder), *overwrite])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "is a directory" in err and err.count("error:") == 1


def test_paired_out_under_a_file_is_one_usage_line(pair, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        P.main([*pair, "--out", str(tmp_path / "a.json" / "p.json")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "not a directory" in err and "Traceback" not in err


def test_paired_failed_write_is_one_error_line(pair, tmp_path, capsys, monkeypatch):
    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(P, "write_atomic", full)
    with pytest.raises(SystemExit) as info:
        P.main([*pair, "--out", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert info.value.code == 1 and "cannot write" in err and "No space left" in err


def test_paired_plain_only_files_pair_their_plain_samples(tmp_path, capsys):
    # sichuan-eval --no-adjust writes "adjusted": null
    a = _match(tmp_path / "a.json", "a.pt", [1.0, 2.0, 0.5], None)
    b = _match(tmp_path / "b.json", "b.pt", [0.0, 1.0, 0.5], None)
    out = tmp_path / "p.json"
    assert P.main([a, b, "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["a_minus_b_plain"]["mean"] == pytest.approx(2 / 3)
    assert doc["a_minus_b_adjusted"] is None and doc["adjusted_missing"] == [a, b]
    assert "--no-adjust" in capsys.readouterr().out
    # one file with adjusted samples and one without: the plain figures still pair
    c = _match(tmp_path / "c.json", "c.pt", [0.0, 1.0, 0.5], [0.5, 1.0, 0.0])
    doc = P.paired(Path(a), Path(c))
    assert doc["a_adjusted"] is None and doc["adjusted_missing"] == [a]


# --- 2. seeds are 64-bit ----------------------------------------------------------------


def test_a_seed_beyond_64_bits_is_a_range_error():
    with pytest.raises(ValueError, match=r"seed must be None or an integer in \[0, 2\*\*64\)"):
        make_agent("distill", seed=2**64)
    with pytest.raises(ValueError, match=r"\[0, 2\*\*64\)"):
        make_agent("random", seed=-1)
    assert make_agent("random", seed=2**64 - 1) is not None


def test_sichuan_eval_refuses_a_seed_beyond_64_bits(capsys):
    with pytest.raises(SystemExit) as info:
        evaluate(["--seed", str(2**64), "--lineup", "distill", "random", "random", "random",
                  "--walls", "1", "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert info.value.code == 2 and "[0, 2**64)" in err and "Overflow" not in err


def test_sichuan_play_refuses_a_seed_beyond_64_bits(capsys):
    from sichuan_env.play import main as play_main
    from sichuan_env.play import play

    with pytest.raises(SystemExit) as info:
        play_main(["--seed", str(2**64)])
    assert info.value.code == 2 and "18446744073709551615" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"\[0, 2\*\*64\)"):
        play(0, sichuan_env.RuleConfig(), 2**64, read=lambda _: "q")


# --- 3. checkpoints of another kind, and run folders ------------------------------------


@pytest.mark.parametrize(
    "name, kind",
    [("belief", "belief checkpoint"), ("luck", "luck value model checkpoint")],
)
def test_a_checkpoint_of_another_kind_says_what_it_is(name, kind):
    path = SHIPPED_DIR / f"{name}.pt"
    with pytest.raises(ValueError, match=f"is a {kind} .*not a policy") as info:
        make_agent(str(path))
    assert "misses the key" not in str(info.value)
    from sichuan_env.agents.nn.torch_agent import load_network

    with pytest.raises(ValueError, match=f"is a {kind}"):
        load_network(path)


def test_a_run_folder_names_its_checkpoints(tmp_path):
    from sichuan_env.agents.nn.torch_agent import TorchAgent, load_network

    run = tmp_path / "bc"
    run.mkdir()
    for stem in ("best", "last"):
        for suffix in (".pt", ".json"):
            (run / f"{stem}{suffix}").write_bytes((SHIPPED_DIR / f"bc{suffix}").read_bytes())
    both = f"pass {run / 'best.pt'} or {run / 'last.pt'}"
    for load in (make_agent, load_network, TorchAgent.load):  # --lineup, ppo --init, the API
        with pytest.raises(ValueError, match="is a run folder") as info:
            load(str(run))
        assert both in str(info.value) and "bc.json" not in str(info.value)
    (run / "best.pt").unlink()
    with pytest.raises(ValueError, match=f"pass {run / 'last.pt'}$"):
        make_agent(str(run))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=r"holds no best\.pt or last\.pt"):
        make_agent(str(empty))
    with pytest.raises(ValueError, match=r"holds no best\.pt or last\.pt"):
        load_network(empty)


# --- 4. local module:Class specs --------------------------------------------------------


@pytest.fixture
def bare_cwd(tmp_path, monkeypatch):
    """A current folder that is not on sys.path, as in a console script."""
    monkeypatch.chdir(tmp_path)
    here = {"", ".", str(tmp_path), os.getcwd()}
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in here])
    return tmp_path


def test_a_local_module_spec_is_found_in_the_current_folder(bare_cwd, monkeypatch):
    name = "h4_local_agents"
    (bare_cwd / f"{name}.py").write_text(
        "from sichuan_env.agents.rule_based.random_agent import RandomAgent\n\n"
        "def make(seed: int | None = None) -> RandomAgent:\n"
        "    return RandomAgent(seed)\n"
    )
    monkeypatch.delitem(sys.modules, name, raising=False)
    path_before = list(sys.path)
    agent = make_agent(f"{name}:make", seed=1)
    assert type(agent).__name__ == "RandomAgent"
    assert sys.path == path_before  # the folder was on the path for the import only
    doc = evaluate(["--lineup", f"{name}:make", "random", "random", "random", "--walls", "1",
                    "--quiet", "--no-adjust"])  # fmt: skip
    assert f"{name}:make" in doc["agents"]
    monkeypatch.delitem(sys.modules, name, raising=False)


def test_a_missing_local_module_says_where_it_looked(bare_cwd):
    with pytest.raises(ValueError, match="nor in the current folder"):
        make_agent("h4_no_such_module:make")


# --- 5. did you mean --------------------------------------------------------------------


def test_a_misspelt_agent_name_gets_suggestions():
    with pytest.raises(
        ValueError, match=r"unknown agent 'heurstic' \(did you mean 'heuristic'\?\)"
    ):
        make_agent("heurstic")
    with pytest.raises(ValueError) as info:
        make_agent("zzzzzz")
    assert "did you mean" not in str(info.value)


# --- 6. no Parallel API -----------------------------------------------------------------


def test_aec_to_parallel_is_refused_saying_why():
    from pettingzoo.utils.conversions import aec_to_parallel

    from sichuan_env.envs.pettingzoo import parallel_env, raw_env

    for env in (sichuan_env.env(), raw_env()):
        with pytest.raises(NotImplementedError, match=r"no PettingZoo Parallel API.*turn-based"):
            aec_to_parallel(env)
        assert env.metadata["is_parallelizable"] is False
        assert env.metadata.get("is_parallelizable") is False  # for everyone else: False
    with pytest.raises(NotImplementedError, match="turn-based"):
        parallel_env()
    assert "no Parallel API" in (ROOT / "docs/environments.md").read_text(encoding="utf-8")


# --- 8. the docs extra formats signatures -----------------------------------------------


def test_the_docs_extra_can_format_the_signatures():
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    docs = " ".join(pyproject["project"]["optional-dependencies"]["docs"])
    if "separate_signature: true" in mkdocs:  # mkdocstrings formats them with ruff or black
        assert "ruff" in docs or "black" in docs


# --- 9. docs that agree with the code and the benchmarks --------------------------------


def test_getting_started_names_the_walls_it_plays():
    text = (ROOT / "docs/getting-started.md").read_text(encoding="utf-8")
    command = text.split("sichuan-eval --lineup distill heuristic heuristic heuristic --walls ")[1]
    walls = command.split()[0]
    assert f"on {walls} walls" in text


def test_the_architecture_page_lists_every_example():
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    for example in (ROOT / "examples").glob("*.py"):
        assert f"`{example.name}`" in text, example.name


def test_the_gym_env_figures_stand_on_one_page():
    # the Performance page holds the measured figures; the Environments page links to them
    figures = json.loads((ROOT / "benchmarks/results/gym_env-latest.json").read_text())["figures"]
    fused = figures["fused (numba opponents)"]["median"]
    perf = (ROOT / "docs/performance.md").read_text(encoding="utf-8")
    assert f"{fused:,.0f}" in perf
    env = (ROOT / "docs/environments.md").read_text(encoding="utf-8")
    assert "learner steps/s through `gymnasium.make` (95% CI" not in env
    assert "performance.md#environments" in env


def test_hand_eval_time_is_not_minutes():
    perf = (ROOT / "docs/performance.md").read_text(encoding="utf-8")
    row = next(line for line in perf.splitlines() if "`python -m benchmarks.hand_eval` |" in line)
    assert "min" not in row.rsplit("|", 2)[1]


# --- 10. the Gymnasium env's subpackage -------------------------------------------------


def test_the_gymnasium_env_is_one_subpackage():
    import gymnasium
    from sichuan_env.agents.gym import args, core, env, kernels, vector

    assert not list((ROOT / "agents").glob("gym_*.py"))
    assert {m.__name__.rsplit(".", 1)[1] for m in (args, core, env, kernels, vector)} == {
        "args", "core", "env", "kernels", "vector",
    }  # fmt: skip
    spec = gymnasium.spec("SichuanMahjong-v0")
    assert spec.entry_point == "sichuan_env.agents.gym.env:SingleSeatEnv"
    assert spec.vector_entry_point == "sichuan_env.agents.gym.vector:SingleSeatVectorEnv"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "sichuan_env.agents.gym" in pyproject["tool"]["setuptools"]["packages"]
    e = gymnasium.make("SichuanMahjong-v0")
    obs, _ = e.reset(seed=0)
    assert obs.shape == (83, 27)
