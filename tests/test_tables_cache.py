"""Lookup tables: content spot checks, and the disk cache rebuilds what it cannot trust."""

import subprocess
import sys

import numpy as np

from sichuan_env.kernels import tables


def _key(ranks: str) -> int:
    c = [0] * 9
    for ch in ranks:
        c[int(ch) - 1] += 1
    return int(sum(x * 5**i for i, x in enumerate(c)))


def test_spot_checks():
    t = tables.get_tables()
    bit = lambda k: t["FLAGS"][k] & 1
    assert bit(_key("")) == 1
    assert bit(_key("123")) == 1
    assert bit(_key("11")) == 1
    assert bit(_key("1")) == 0
    assert bit(_key("11123456789999")) == 1
    w = int(t["WAITS"][_key("1112345678999")])
    assert (w >> 9) & 0x1FF == 0x1FF  # nine-gates shape waits on every rank
    d = int(t["DIST"][_key("1")])
    assert d & 15 == 0  # m=0, p=0: nothing to add
    assert (d >> 4) & 15 == 1  # a pair: one tile
    assert (d >> 8) & 15 == 2  # a meld: two tiles


def test_cache_round_trip_and_corruption(tmp_path):
    code = (
        "from sichuan_env.kernels import tables as t; x = t.get_tables(); "
        "print(int(x['WAITS'].sum() % 1000003))"
    )
    env = {"SICHUAN_ENV_CACHE_DIR": str(tmp_path), "PATH": ""}
    import os

    env = {**os.environ, **env}
    first = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    files = list(tmp_path.glob("tables-v*.npz"))
    assert len(files) == 1
    files[0].write_bytes(b"not a numpy file")
    second = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert first.stdout == second.stdout
    assert np.load(files[0])["WAITS"].shape == (tables.NUM_KEYS,)


def test_unwritable_cache_dir_still_works(tmp_path):
    import os

    target = tmp_path / "file-not-dir"
    target.write_text("x")
    env = {**os.environ, "SICHUAN_ENV_CACHE_DIR": str(target / "sub")}
    code = "from sichuan_env import is_win; print(is_win('11m'))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True"


def test_build_matches_cache():
    built = tables.build_tables()
    cached = tables.get_tables()
    for name in built:
        assert np.array_equal(built[name], cached[name]), name
