"""The opponent-modelling dataset: reproducible, replayable rows, labels and event tokens."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from sichuan_env.train.data.dataset import DECISION_COLUMNS, iter_batches, read_meta
from sichuan_env.train.data.make_dataset import generate, main

from sichuan_env import Game
from sichuan_env.encoding.events import VOCAB, VOCAB_SIZE, describe, event_sequences, token
from sichuan_env.encoding.registry import get


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("ds") / "heuristic"
    lineup = ["heuristic", "heuristic", "random", "heuristic"]
    meta = generate(
        lineup, 24, out, obs_version=2, seed=3, num_envs=8, shard_rows=1000, progress=False
    )
    return out, meta


def test_layout_and_metadata(dataset):
    out, meta = dataset
    assert read_meta(out) == meta
    assert meta["hands"] == 24 and meta["shards"] >= 2  # several shards were written
    assert meta["obs_shape"] == [232, 27] and meta["event_vocab_size"] == VOCAB_SIZE
    table = pq.read_table(out / "decisions")  # every shard at once, as pandas or polars would
    assert table.column_names[: len(DECISION_COLUMNS)] == DECISION_COLUMNS
    assert table.num_rows == meta["decisions"]
    assert len((out / "records.jsonl").read_text().splitlines()) == 24


def test_rows_replay_to_their_observations_labels_and_points(dataset):
    out, _ = dataset
    records = {}
    for line in (out / "records.jsonl").read_text().splitlines():
        item = json.loads(line)
        records[item["game_id"]] = item["record"]
    games = pq.read_table(out / "games.parquet").to_pylist()
    spec = get(2)
    checked = 0
    for batch in iter_batches(out, batch_size=500):
        for k in range(0, len(batch["action"]), 37):
            gid, d, seat = (
                int(batch["game_id"][k]),
                int(batch["decision"][k]),
                int(batch["seat"][k]),
            )
            record = records[gid]
            full = Game.from_record(record)
            replay = Game(
                full.rules,
                wall=record["wall"],
                dealer=record["dealer"],
                exchange_offset=record["exchange_offset"],
            )
            for code in full.state["log"][:d]:
                replay.step_id(int(code) % 128)
            assert replay.to_act() == seat
            obs = np.zeros(spec.shape(), np.uint8)
            spec.encode_at(replay._st, 0, seat, False, replay._r, obs)
            assert np.array_equal(obs, batch["obs"][k])
            assert np.array_equal(np.flatnonzero(batch["mask"][k]), replay.legal_ids())
            assert batch["action"][k] == int(full.state["log"][d]) % 128
            labels = replay.opponent_labels(seat)
            for key, value in labels.items():
                assert np.array_equal(batch[key][k], value), key
            assert batch["final_points"][k] == record["result"]["scores"][seat]
            assert games[gid]["lineup"][seat] == batch["agent"][k]
            checked += 1
    assert checked > 30


def test_same_seed_same_data(dataset, tmp_path):
    out, meta = dataset
    again = generate(
        meta["lineup"], 24, tmp_path / "again", seed=3, num_envs=8, shard_rows=1000, progress=False
    )
    assert again["decisions"] == meta["decisions"]
    a = pq.read_table(out / "decisions").to_pydict()
    b = pq.read_table(tmp_path / "again" / "decisions").to_pydict()
    assert a == b


def test_event_tokens_of_a_hand(dataset):
    out, _ = dataset
    games = pq.read_table(out / "games.parquet").to_pylist()
    record = json.loads((out / "records.jsonl").read_text().splitlines()[0])["record"]
    game = Game.from_record(record)
    tokens, offsets = event_sequences(game)
    g0 = games[0]
    for s in range(4):
        assert tokens[s].tolist() == g0[f"tokens_{s}"]
    assert offsets.reshape(-1).tolist() == g0["offsets"]
    assert (np.diff(offsets, axis=0) >= 0).all() and offsets[-1].tolist() == [
        len(t) for t in tokens
    ]
    st = game.state
    names = [[describe(int(t)).split("(")[0] for t in tokens[s]] for s in range(4)]
    for s in range(4):
        assert names[s].count("discard") == int(st["n_river"].sum()) - int(
            (st["river_flag"] == 3).sum()
        )
        assert names[s].count("draw") == int(st["draws"][s]) - (1 if s == record["dealer"] else 0)
        assert names[s].count("hand") == 13 + (1 if s == record["dealer"] else 0)
        assert names[s].count("hu_self") + names[s].count("hu_on") == len(record["result"]["wins"])
        assert names[s][-1] == "end" and names[s][0] == "start"
        assert all(0 < int(t) < VOCAB_SIZE for t in tokens[s])


def test_token_ids():
    assert token("pad") == 0 and VOCAB["pad"] == (0, 1)
    assert describe(token("discard", 2, 1, 26)) == "discard(r=2, 摸切, 9s)"
    assert describe(token("draw_other", 3)) == "draw_other(r=3)"
    assert describe(token("void", 1, 2)) == "void(r=1, s)"
    assert describe(token("exchange_dir", 1)) == "exchange_dir(2)"
    assert describe(token("pong", 3, 0)) == "pong(r=3, 1m)"
    assert describe(token("draw", 13)) == "draw(5p)"
    with pytest.raises(ValueError):
        token("draw_other", 0)
    with pytest.raises(ValueError):
        describe(VOCAB_SIZE)


def test_cli_rejects_bad_usage(tmp_path, capsys):
    with pytest.raises(SystemExit) as err:
        main(["--hands", "0", "--out", str(tmp_path / "x")])
    assert err.value.code == 2
    with pytest.raises(SystemExit) as err:
        main(
            [
                "--lineup",
                "heuristic",
                "heuristic",
                "nobody",
                "heuristic",
                "--hands",
                "2",
                "--out",
                str(tmp_path / "y"),
            ]
        )
    assert err.value.code == 2
    assert "nobody" in capsys.readouterr().err


def test_decoded_columns_are_writable_so_torch_does_not_warn(dataset):
    import warnings

    torch = pytest.importorskip("torch")
    from sichuan_env.train.data.dataset import DecisionDataset

    out, _ = dataset
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "The given NumPy array is not writable" fails the test
        rows = list(DecisionDataset(out, batch_size=64, shuffle_buffer=0))
    assert rows and all(isinstance(v, torch.Tensor) for v in rows[0].values())
