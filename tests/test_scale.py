"""Scale-out on a local Ray (2 CPUs): evaluation, datasets and PPO rollouts (``-m ray``).

The tests without a cluster (imports, usage errors, buffer transport) run in the fast tier.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch
from sichuan_env.agents.eval import cli as evaluate
from sichuan_env.agents.eval.distributed import RayMissingError, import_ray
from sichuan_env.agents.nn.torch_agent import TorchAgent
from sichuan_env.train.data import make_dataset
from sichuan_env.train.policy import ppo
from sichuan_env.train.policy.ppo_ray import export_buffer, extend_buffer

from sichuan_env.envs.vector import VectorEnv

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def local_ray():
    import ray  # the scale extra; CI installs it, so a missing Ray fails the ray tier

    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    yield ray
    ray.shutdown()


def test_import_agents_does_not_import_ray():
    code = "import sys, sichuan_env.agents, sichuan_env.agents.eval.cli, sichuan_env.agents.eval.distributed; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_missing_ray_is_a_clear_usage_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(RayMissingError, match=r"pip install -e '\.\[scale\]'"):
        import_ray()
    with pytest.raises(SystemExit) as exc:
        evaluate.main(["--walls", "1", "--quiet", "--ray", "local"])
    assert exc.value.code == 2 and ".[scale]" in capsys.readouterr().err


@pytest.mark.ray
def test_distributed_evaluation_equals_the_single_process_run(local_ray, tmp_path):
    # a sampling agent (random) in the lineup: equal figures need the per-block reseeding
    common = ["--walls", "12", "--block-walls", "4", "--seed", "5", "--quiet"]
    common += ["--lineup", "heuristic", "random", "random", "value"]
    local = evaluate.main([*common, "--json", str(tmp_path / "local.json")])
    dist = evaluate.main([*common, "--json", str(tmp_path / "ray.json"), "--ray", "local"])
    assert dist["workers"] == 2 and local["workers"] == 1
    assert dist["agents"] == local["agents"]
    saved = [json.loads((tmp_path / f).read_text())["agents"] for f in ("local.json", "ray.json")]
    assert saved[0] == saved[1] == local["agents"]
    assert local["agents"]["random"]["seat_hands"] == 12 * 4 * 2


@pytest.mark.ray
def test_make_dataset_on_ray_writes_the_rows_of_the_local_run(local_ray, tmp_path):
    kw = {"obs_version": 2, "seed": 3, "num_envs": 4, "shard_rows": 1000, "progress": False}
    lineup = ["heuristic", "random", "heuristic", "value"]
    local = make_dataset.generate(lineup, 9, tmp_path / "local", parts=3, **kw)
    dist = make_dataset.generate(lineup, 9, tmp_path / "ray", parts=3, ray="local", **kw)
    assert local["decisions"] == dist["decisions"] > 0 and dist["parts"] == 3
    for name in ("decisions", "games.parquet"):
        assert pq.read_table(tmp_path / "local" / name).equals(
            pq.read_table(tmp_path / "ray" / name)
        )
    assert (tmp_path / "local/records.jsonl").read_bytes() == (tmp_path / "ray/records.jsonl").read_bytes()  # fmt: skip
    games = pq.read_table(tmp_path / "ray/games.parquet").column("game_id").to_pylist()
    assert games == list(range(9)) and not (tmp_path / "ray/.parts").exists()


def _ppo(run, *extra):
    args = ["--run", str(run), "--envs", "16", "--steps", "8", "--hidden", "32", "--layers", "1"]
    args += ["--threads", "1", "--quiet", "--iterations", "2", "--eval-every", "0"]
    args += ["--pool-frac", "0.5", "--oracle-critic", "--aux", "--snapshot-every", "1", *extra]
    return ppo.main(args)


@pytest.mark.ray
def test_distributed_ppo_writes_a_checkpoint_that_loads(local_ray, tmp_path):
    row = _ppo(tmp_path / "ray2", "--ray", "local", "--workers", "2")
    assert row["iteration"] == 2 and row["stored"] > 0 and np.isfinite(row["pg_loss"])
    agent = TorchAgent.load(tmp_path / "ray2" / "last.pt")
    venv = VectorEnv(4, seed=0)
    obs, mask, _ = venv.reset()
    actions = agent.act_batch(obs, mask)
    assert mask[np.arange(4), actions].all()
    # one worker runs the single-process Collector with the single-process seeds: same run
    _ppo(tmp_path / "ray1", "--ray", "local", "--workers", "1")
    _ppo(tmp_path / "local")
    a = torch.load(tmp_path / "ray1" / "last.pt", weights_only=True)
    b = torch.load(tmp_path / "local" / "last.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_buffers_travel_and_extend_with_shifted_trajectory_links():
    src = ppo.Buffer(4, 83, 150)
    src.n = 3
    src.oracle[:3] = np.random.default_rng(0).integers(0, 2, (3, 150, 27))
    src.obs[:3] = src.oracle[:3, :83]
    src.next_idx[:3] = [2, -1, -1]
    src.actions[:3] = [5, 6, 7]
    part = export_buffer(src)
    assert "obs" not in part  # the oracle view holds it
    buf = ppo.Buffer(8, 83, 150)
    extend_buffer(buf, part)
    extend_buffer(buf, part)
    assert buf.n == 6 and buf.next_idx[:6].tolist() == [2, -1, -1, 5, -1, -1]
    assert buf.actions[:6].tolist() == [5, 6, 7, 5, 6, 7]
    np.testing.assert_array_equal(buf.obs[3:6], src.obs[:3])
    with pytest.raises(ValueError, match="too small"):
        extend_buffer(buf, part)
    with pytest.raises(ValueError, match="one side"):
        extend_buffer(ppo.Buffer(8, 83, 0), part)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


@pytest.mark.ray
def test_bad_and_unreachable_ray_addresses_are_one_line(monkeypatch, tmp_path, capsys):
    import time

    import ray
    from sichuan_env.agents.eval.distributed import RayUnavailableError, init_ray, probe

    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as in a fresh process
    monkeypatch.setattr(ray, "init", lambda **kw: pytest.fail(f"ray.init({kw}) was called"))
    for bad in ("", " ", "x", "host:", "host:0", "host:70000", "ray://"):
        with pytest.raises(RayUnavailableError, match="'local', 'auto' or host:port"):
            init_ray(bad, 2)
    port = _free_port()
    t0 = time.perf_counter()
    with pytest.raises(RayUnavailableError, match=f"no Ray cluster at 127.0.0.1:{port}"):
        init_ray(f"127.0.0.1:{port}", 2)
    import socket

    def silent(address, timeout):  # a host that drops the packets: the connect times out
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", silent)
    with pytest.raises(
        RayUnavailableError, match=r"no Ray cluster at h:6379 \(timed out within 0.5 s\)"
    ):
        probe("h", 6379, timeout=0.5)
    monkeypatch.undo()
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: pytest.fail(f"ray.init({kw}) was called"))
    assert time.perf_counter() - t0 < 5  # not minutes of ray.init retries
    # the CLIs: one usage line each, no traceback
    ppo_args = ["--run", str(tmp_path / "p"), "--envs", "4", "--steps", "4", "--hidden", "8",
                "--layers", "1", "--threads", "1", "--quiet", "--iterations", "1"]  # fmt: skip
    for main, argv in (
        (evaluate.main, ["--walls", "1", "--quiet", "--ray", ""]),
        (evaluate.main, ["--walls", "1", "--quiet", "--ray", f"127.0.0.1:{port}"]),
        (ppo.main, [*ppo_args, "--ray", ""]),
        (ppo.main, [*ppo_args, "--ray", f"127.0.0.1:{port}"]),
        (make_dataset.main, ["--out", str(tmp_path / "d"), "--hands", "2", "--ray", "x:"]),
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and "Traceback" not in err, err
        assert "error: " in err.strip().splitlines()[-1]
    assert not (tmp_path / "p").exists() and not (tmp_path / "d").exists()


def _kill_first_playing_worker(found: dict, stop) -> None:
    """SIGKILL the first ``EvalWorker`` process seen running ``play`` (Ray sets the title)."""
    import os
    import signal

    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    title = f.read()
            except OSError:
                continue
            if b"EvalWorker.play" in title:
                os.kill(int(pid), signal.SIGKILL)
                found["pid"] = int(pid)
                return
        stop.wait(0.005)


@pytest.mark.ray
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="Linux /proc")
def test_a_killed_evaluation_worker_is_restarted_and_its_block_replayed(local_ray):
    import threading

    from sichuan_env.agents.eval.distributed import play_duplicate_ray
    from sichuan_env.agents.eval.evaluate import make_lineup_agents, play_duplicate

    from sichuan_env import RuleConfig

    lineup = ["heuristic", "random", "random", "value"]  # a sampling agent: reseeding matters
    walls, seed, block = 24, 5, 4
    local = play_duplicate(lineup, walls, RuleConfig(), seed, False,
                           make_lineup_agents(lineup, seed), block)  # fmt: skip
    found: dict = {}
    stop = threading.Event()
    killer = threading.Thread(target=_kill_first_playing_worker, args=(found, stop))
    killer.start()
    try:
        dist = play_duplicate_ray(lineup, walls, RuleConfig(), seed, address="local", workers=2,
                                  block_walls=block, progress=False)  # fmt: skip
    finally:
        stop.set()
        killer.join()
    assert found, "no worker was caught playing: the match ended first"
    assert dist == local  # the killed worker's block was played again, identically
