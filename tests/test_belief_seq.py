"""Sequence belief models: event-token inputs, causal sharing, checkpoints, a tiny run, the report."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pyarrow")

import sichuan_env.train.belief.report as belief_report
import sichuan_env.train.belief.train as belief
from sichuan_env.agents.belief.model import (
    BeliefConfig,
    BeliefModel,
    BeliefNet,
    check_tokens,
    save_belief,
)
from sichuan_env.agents.checkpoint import rehash
from sichuan_env.train.belief import batches
from sichuan_env.train.data.dataset import EventTable, iter_batches, read_meta, shards
from sichuan_env.train.data.make_dataset import generate

from sichuan_env import RuleConfig
from sichuan_env.encoding.events import VOCAB_SIZE, event_sequences, token
from sichuan_env.encoding.observation import obs_rows
from sichuan_env.engine.game import Game
from sichuan_env.tiles import InputTypeError

ROWS = obs_rows(2, False)
META = {"rules": RuleConfig().to_dict(), "command": "pytest", "commit": "x", "wall_clock_s": 1.0}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("belief_seq") / "data"
    generate(["heuristic"] * 4, 40, out, obs_version=2, seed=5, num_envs=40, progress=False)
    return out


def _net(seq_hidden=16, seed=0):
    torch.manual_seed(seed)
    cfg = BeliefConfig(hidden=16, layers=1, tile_channels=4, seq_hidden=seq_hidden, seq_embed=8)
    net = BeliefNet(cfg)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.1 * torch.randn_like(p))  # the projection starts at zero: make it matter
    return net.eval()


def _batch(data, n=300):
    return next(iter_batches(data, n))


def test_event_table_matches_the_replayed_hand(data):
    events = EventTable(data)
    b = _batch(data)
    tok = events.row_tokens(b)
    ends = (tok != 0).sum(axis=1)
    assert tok.shape == (len(b["obs"]), ends.max()) and (ends >= 15).all()  # start, dealer, hand
    assert not ((tok[:, 1:] != 0) & (tok[:, :-1] == 0)).any()  # right-padded
    first = json.loads((data / "records.jsonl").open().readline())
    game = Game.from_record(first["record"])
    seqs, offsets = event_sequences(game)
    for i in np.flatnonzero(b["game_id"] == first["game_id"]):
        s, k = int(b["seat"][i]), int(b["decision"][i])
        assert ends[i] == offsets[k, s]
        np.testing.assert_array_equal(tok[i, : ends[i]], seqs[s][: offsets[k, s]])
    assert tok[0, 0] == token("start")


def test_grouped_training_batch_equals_per_row_predict(data):
    net = _net()
    events = EventTable(data)
    heads = net.config.head_specs
    d = batches.load_shard(shards(data)[0], heads, events)
    idx = batches.batch_indices(d, 200, np.random.default_rng(0), sequences=True)[0]
    b = batches.take(d, idx, ROWS, heads, [events])
    assert len(b["tokens"]) < len(idx)  # rows share their (hand, seat) sequence
    with torch.no_grad():
        grouped = batches.forward(net, b)
    rows = {k: d[k][idx] for k in ("game_id",)}
    rows["seat"] = (d["key"][idx] // batches.MAX_FOLDERS % 4).astype(np.int8)
    rows["decision"] = _decisions(data, d, idx)
    per_row = BeliefModel(net).logits(b["obs"].numpy(), events.row_tokens(rows))
    for k, v in grouped.items():
        np.testing.assert_allclose(per_row[k], v.numpy(), atol=1e-5)


def _decisions(data, d, idx):
    import pyarrow.parquet as pq

    dec = pq.read_table(shards(data)[0], columns=["decision"]).column("decision").to_numpy()
    return dec[idx]


def test_padding_and_token_checks():
    model = BeliefModel(_net())
    obs = np.random.default_rng(0).integers(0, 2, (3, ROWS, 27)).astype(np.uint8)
    tok = np.random.default_rng(1).integers(1, VOCAB_SIZE, (3, 20))
    tok[1, 12:] = 0
    tok[2, 1:] = 0
    a = model.predict(obs, tok)
    b = model.predict(obs, np.pad(tok, ((0, 0), (0, 30))))  # more padding: same answer
    for k in a:
        np.testing.assert_allclose(a[k], b[k], atol=1e-6)
        assert a[k].dtype == np.float32 and ((a[k] >= 0) & (a[k] <= 1)).all()
    c = model.predict(obs, tok[:, :12])  # row 1 is cut at its end: same; row 0 is cut: differs
    assert np.allclose(c["tenpai"][1], a["tenpai"][1], atol=1e-6)
    assert not np.allclose(c["hand"][0], a["hand"][0])
    bad_mid = tok.copy()
    bad_mid[0, 5] = 0
    for bad, match in ((None, "reads event tokens"), (tok[:2], "shape"), (tok + VOCAB_SIZE, "ids"),
                       (bad_mid, "right-padded"), (np.zeros((3, 4), np.int64), "at least one")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            model.predict(obs, bad)
    with pytest.raises(InputTypeError):
        check_tokens(tok.astype(np.float32), 3)
    assert model.predict(obs[:0], tok[:0])["deal_in"].shape == (0, 27)
    with pytest.raises(ValueError, match="tokens and ends"):
        model.net(torch.from_numpy(obs))
    assert not BeliefModel(_net(seq_hidden=0)).needs_tokens and model.needs_tokens


def test_seq_checkpoint_round_trip_and_old_configs(tmp_path):
    net = _net()
    obs = np.random.default_rng(0).integers(0, 2, (4, ROWS, 27)).astype(np.uint8)
    tok = np.random.default_rng(1).integers(1, VOCAB_SIZE, (4, 30))
    ref = BeliefModel(net).predict(obs, tok)
    for dtype, tol in (("float32", 0.0), ("float16", 2e-2)):
        model = BeliefModel.load(save_belief(tmp_path / f"{dtype}.pt", net, META, dtype=dtype))
        assert model.meta["arch"]["seq_hidden"] == 16 and model.needs_tokens
        got = model.predict(obs, tok)
        for k in ref:
            np.testing.assert_allclose(got[k], ref[k], atol=tol)
    # A checkpoint written before the sequence fields existed loads as planes-only.
    path = save_belief(tmp_path / "old.pt", _net(seq_hidden=0), META)
    cfg = path.with_suffix(".json")
    doc = json.loads(cfg.read_text())
    del doc["arch"]["seq_hidden"], doc["arch"]["seq_embed"]
    cfg.write_text(json.dumps(doc))
    rehash(path)  # an old checkpoint's config is as it was written, hash included
    assert not BeliefModel.load(path).needs_tokens
    for bad in ({"seq_hidden": 4}, {"seq_hidden": True}, {"seq_embed": 2000}):
        with pytest.raises(ValueError):
            BeliefConfig(**bad)


def test_init_from_a_planes_checkpoint_starts_identical(data, tmp_path):
    src = _net(seq_hidden=0)
    path = save_belief(tmp_path / "src.pt", src, META)
    args = belief.build_parser().parse_args(
        ["--data", str(data), "--arch", "seq", "--init", str(path), "--seq-hidden", "16"]
    )
    net = belief.new_net(args).eval()
    assert net.config.seq_hidden == 16 and net.config.hidden == 16
    b = _batch(data, 50)
    tok = EventTable(data).row_tokens(b)
    a = BeliefModel(src).predict(b["obs"])
    c = BeliefModel(net).predict(b["obs"], tok)
    for k in a:
        np.testing.assert_allclose(a[k], c[k], atol=1e-6)


def test_tiny_seq_run_learns_resumes_and_reports(data, tmp_path):
    run = tmp_path / "run"
    argv = ["--data", str(data), "--run", str(run), "--arch", "seq", "--seq-hidden", "16",
            "--seq-embed", "8", "--batch", "64", "--lr", "3e-3", "--hidden", "32", "--layers",
            "1", "--tile-channels", "8", "--val-every", "4", "--val-rows", "800",
            "--eval-every", "20", "--threads", "1", "--quiet"]  # fmt: skip
    belief.main([*argv, "--epochs", "4", "--minutes", "0.001"])  # stops after a step or two
    state = torch.load(run / "state.pt", weights_only=True)["counters"]
    assert 1 <= state["step"] < 10 and state["epoch"] == 0
    last = belief.main([*argv, "--epochs", "4", "--resume", "--ship", str(tmp_path / "s.pt")])
    assert last["val_auc_tenpai"] > 0.75 and last["epoch"] == 4
    steps = [json.loads(x)["step"] for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert steps == sorted(steps) and steps[-1] > state["step"]
    model = BeliefModel.load(tmp_path / "s.pt")
    assert model.needs_tokens and model.meta["weights_dtype"] == "float16"
    assert read_meta(data)["event_vocab_size"] == VOCAB_SIZE
    out = tmp_path / "r.json"
    belief_report.main([str(run / "best.pt"), "--data", str(data), "--json", str(out),
                        "--threads", "1"])  # fmt: skip
    heads = json.loads(out.read_text())["heads"]
    assert heads["tenpai"]["model"]["auc"] > 0.75 and "count rule" in heads["tenpai"]
    with pytest.raises(SystemExit):
        belief.main(["--data", str(data), "--run", str(tmp_path / "x"), "--init", "belief"])


def test_batches_of_rows_and_of_sequences_across_folders(data):
    events = EventTable(data)
    heads = BeliefConfig().head_specs
    parts = [batches.load_shard(shards(data)[0], heads, events, folder) for folder in (0, 1)]
    d = batches.concat_rows(parts)
    n = len(parts[0]["game_id"])
    rows = batches.batch_indices(d, 64, np.random.default_rng(0), sequences=False)
    assert all(len(i) == 64 for i in rows) and len(rows) == 2 * n // 64
    every = batches.batch_indices(d, 64, None, sequences=False)
    assert np.array_equal(np.concatenate(every), np.arange(2 * n))
    seqs = batches.batch_indices(d, 64, None, sequences=True)
    assert sorted(np.concatenate(seqs).tolist()) == list(range(2 * n))
    for idx in seqs[:3]:  # a (hand, seat) sequence never mixes folders
        b = batches.take(d, idx, ROWS, heads, [events, events])
        tok = b["tokens"].numpy()[b["seq"].numpy()]
        half = {k: d[k][idx] for k in ("game_id",)}
        half["seat"] = (d["key"][idx] // batches.MAX_FOLDERS % 4).astype(np.int8)
        half["decision"] = _decisions(data, d, idx % n)
        want = events.row_tokens(half)
        for i, end in enumerate(b["ends"].numpy()):
            np.testing.assert_array_equal(tok[i, :end], want[i, :end])
        own_turn = d["legal"][idx].any(axis=1)
        assert (b["m:deal_in"].numpy() == own_turn[:, None]).all()  # the loss: every tile
        assert (b["s:deal_in"] == d["legal"][idx]).all()  # scored: the legal discards
    with pytest.raises(ValueError, match="events"):
        batches.batch_indices({"game_id": d["game_id"]}, 8, None, sequences=True)
    with pytest.raises(ValueError, match="folder"):
        batches.load_shard(shards(data)[0], heads, events, batches.MAX_FOLDERS)
