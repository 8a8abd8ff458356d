"""``--device`` and ``--amp`` (``sichuan_env.agents.device``): parsing, resolution, every CLI, agents.

This machine has no accelerator: ``auto`` must resolve to the CPU, an absent device
must be one usage error (exit 2) in every training CLI, training and checkpoints work
with ``--device cpu``, and a faked CUDA runtime checks what would be chosen on a GPU.
"""

from __future__ import annotations

import argparse
import importlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sichuan_env.agents import device as D
from sichuan_env.agents.nn.policy import PolicyConfig, PolicyNet
from sichuan_env.agents.nn.torch_agent import TorchAgent, load_network
from sichuan_env.agents.registry import make_agent

NO_GPU = not torch.cuda.is_available()
NO_MPS = not D._mps_available()
CLIS = {
    "sichuan_env.train.policy.bc": [],
    "sichuan_env.train.policy.ppo": [],
    "sichuan_env.train.policy.search_distill": ["--labels", "nowhere", "--run", "nowhere"],
    "sichuan_env.train.policy.exit": ["--run", "nowhere"],
    "sichuan_env.train.belief.train": ["--data", "nowhere"],
}
"""Every training CLI that runs a network, with the arguments it requires."""


@pytest.fixture
def fake_cuda(monkeypatch):
    """Two CUDA GPUs with bfloat16, as torch would report them."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)


def test_cpu_and_auto_resolve_to_the_cpu_here():
    assert D.resolve_device("cpu") == torch.device("cpu")
    assert D.resolve_device(" CPU ") == torch.device("cpu")
    assert D.resolve_device(torch.device("cpu")) == torch.device("cpu")
    if NO_GPU and NO_MPS:
        assert D.resolve_device("auto") == torch.device("cpu")
        assert D.resolve_device(None) == torch.device("cpu")


@pytest.mark.parametrize("spec", ["tpu", "gpu", "cpu:1", "mps:0", "cuda:x", "cuda:-1", ""])
def test_a_misspelt_device_is_a_device_error(spec):
    with pytest.raises(D.DeviceError, match="auto\\|cpu\\|cuda"):
        D.resolve_device(spec)


def test_a_device_that_is_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="a device is a string"):
        D.resolve_device(3)


@pytest.mark.skipif(not NO_GPU, reason="this machine has a CUDA GPU")
@pytest.mark.parametrize("spec", ["cuda", "cuda:0", "cuda:7"])
def test_cuda_without_a_gpu_is_a_device_error(spec):
    with pytest.raises(D.DeviceError, match="no CUDA GPU"):
        D.resolve_device(spec)


@pytest.mark.skipif(not NO_MPS, reason="this machine has MPS")
def test_mps_off_a_mac_is_a_device_error():
    with pytest.raises(D.DeviceError, match="'mps' is not available"):
        D.resolve_device("mps")


def test_with_a_faked_gpu_auto_is_cuda_and_amp_is_bfloat16(fake_cuda):
    assert D.resolve_device("auto") == torch.device("cuda")
    assert D.resolve_device("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(D.DeviceError, match="has 2 CUDA GPU"):
        D.resolve_device("cuda:2")
    cuda = torch.device("cuda")
    assert D.amp_dtype(cuda, "auto") is torch.bfloat16
    assert D.amp_dtype(cuda, "off") is None
    assert D.amp_dtype(torch.device("cpu"), "auto") is None  # off on a CPU
    args = D.from_args(argparse.Namespace(device="cuda:1", amp="auto"))
    assert args == (torch.device("cuda", 1), torch.bfloat16)


def test_amp(monkeypatch):
    cpu = torch.device("cpu")
    assert D.amp_dtype(cpu, "auto") is None
    assert D.amp_dtype(cpu, "bf16") is torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert D.amp_dtype(torch.device("cuda"), "auto") is None  # an older GPU: float32
    with pytest.raises(ValueError, match="amp must be one of"):
        D.amp_dtype(cpu, "fp8")


def test_cpu_state_moves_every_tensor_of_a_nested_state():
    net = PolicyNet(PolicyConfig(hidden=8, layers=1))
    opt = torch.optim.Adam(net.parameters())
    net(torch.zeros((2, 83, 27), dtype=torch.uint8))[0].sum().backward()
    opt.step()
    state = D.cpu_state({"optimizer": opt.state_dict(), "counters": {"n": 1}, "x": [torch.ones(1)]})
    assert state["counters"] == {"n": 1}
    tensors = [v for s in state["optimizer"]["state"].values() for v in s.values()]
    assert tensors and all(t.device.type == "cpu" for t in tensors)


@pytest.mark.parametrize("module", sorted(CLIS))
@pytest.mark.parametrize("spec", ["tpu", *(["cuda", "cuda:7"] if NO_GPU else [])])
def test_every_training_cli_refuses_an_absent_device_in_one_line(module, spec, capsys):
    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as exc:
        main([*CLIS[module], "--device", spec])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert ": error: argument --device: " in last and spec in last, err


@pytest.mark.parametrize("module", sorted(CLIS))
def test_every_training_cli_parses_device_and_amp(module, fake_cuda):
    p = importlib.import_module(module).build_parser()
    args = p.parse_args([*CLIS[module], "--device", "cuda:1", "--amp", "off"])
    assert (args.device, args.amp) == ("cuda:1", "off")
    args = p.parse_args(CLIS[module])
    assert (args.device, args.amp) == ("cuda", "auto")  # auto, with a GPU


def test_the_cleanrl_example_takes_cuda_and_no_cuda():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    try:
        cleanrl = importlib.import_module("cleanrl_ppo")
    finally:
        sys.path.pop(0)
    assert cleanrl.parse_args([]).cuda is True  # CleanRL's default
    args = cleanrl.parse_args(["--no-cuda"])
    assert args.cuda is False and cleanrl.device_of(args) == torch.device("cpu")
    if NO_GPU and NO_MPS:
        assert cleanrl.device_of(cleanrl.parse_args(["--cuda"])) == torch.device("cpu")


def test_make_agent_puts_network_agents_on_the_device():
    agent = make_agent("bc", seed=0, device="cpu")
    assert agent.device == torch.device("cpu")
    assert make_agent("heuristic", device="cpu").name  # no network: the device is ignored
    guard = make_agent("distill-guard", device="cpu")
    assert guard.model.device == torch.device("cpu")
    with pytest.raises(ValueError, match="unknown device"):
        make_agent("bc", device="tpu")
    if NO_GPU:
        with pytest.raises(ValueError, match="no CUDA GPU"):
            make_agent("bc", device="cuda")


def test_a_torch_agent_acts_with_bfloat16_autocast_on_the_cpu():
    torch.manual_seed(0)
    net = PolicyNet(PolicyConfig(hidden=16, layers=1))
    rng = np.random.default_rng(0)
    obs = (rng.random((64, 83, 27)) < 0.1).astype(np.uint8)
    masks = (rng.random((64, 88)) < 0.2).astype(np.int8)
    masks[:, 0] = 1
    plain = TorchAgent(net, device="cpu", amp="off").act_batch(obs, masks)
    cast = TorchAgent(net, device="cpu", amp="bf16")
    assert cast._cast is torch.bfloat16
    got = cast.act_batch(obs, masks)
    assert got.dtype == np.int64 and (masks[np.arange(64), got] == 1).all()
    assert (got == plain).mean() > 0.8  # bfloat16 rounding may flip near-ties only


def test_save_run_writes_the_optimizer_state_from_cpu_tensors(tmp_path, monkeypatch):
    from sichuan_env.train import common

    seen = []

    def spy(value):
        seen.append(value)
        return D.cpu_state(value)

    monkeypatch.setattr(common, "cpu_state", spy)
    net = PolicyNet(PolicyConfig(hidden=8, layers=1))
    opt = torch.optim.Adam(net.parameters())
    meta = {"rules": {}, "method": "bc", "command": "x", "commit": "x", "wall_clock_s": 0.0}
    common.save_run(tmp_path, net, opt, {"epoch": 0}, meta)
    assert seen and "param_groups" in seen[0]  # the optimizer's state went through cpu_state
    state = torch.load(tmp_path / "state.pt", weights_only=True)  # default map_location
    assert state["counters"] == {"epoch": 0}


def test_a_bc_run_on_the_cpu_with_bf16_trains_and_its_checkpoint_loads(tmp_path):
    from sichuan_env.train.policy import bc

    run = tmp_path / "bc"
    args = ["--run", str(run), "--envs", "8", "--chunk-steps", "4", "--chunks", "1"]
    args += ["--val-decisions", "40", "--threads", "1", "--quiet", "--hidden", "16"]
    row = bc.main([*args, "--layers", "1", "--epochs", "1", "--device", "cpu", "--amp", "bf16"])
    assert np.isfinite(row["train_loss"])
    weights = torch.load(run / "last.pt", weights_only=True)  # default map_location
    assert all(t.device.type == "cpu" for t in weights.values())
    net, _ = load_network(run / "last.pt")
    assert next(net.parameters()).device.type == "cpu"
    bc.main([*args, "--layers", "1", "--epochs", "2", "--device", "cpu", "--resume"])
