"""Lookup tables: content spot checks, and the disk cache rebuilds what it cannot trust."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

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


_CODE = (
    "from sichuan_env.kernels import tables as t; x = t.get_tables(); "
    "print(t.digest(x)); from sichuan_env import is_win; print(is_win('11m'))"
)


def _run(cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SICHUAN_ENV_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", _CODE], env=env, capture_output=True, text=True, check=False
    )


def _reports(err: str) -> list[str]:
    return [line for line in err.splitlines() if "sichuan_env:" in line]


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])  # the zip's local header and part of FLAGS


def _zeroed(path: Path) -> None:
    with np.load(path) as d:
        arrays = {k: np.zeros_like(d[k]) for k in d.files}
    np.savez(path, **arrays)


def _one_entry_altered(path: Path) -> None:
    with np.load(path) as d:
        arrays = {k: d[k].copy() for k in d.files}
    arrays["WAITS"][tables.NUM_KEYS // 2] ^= 1
    np.savez(path, **arrays)


def _wrong_dtype(path: Path) -> None:
    with np.load(path) as d:
        arrays = {k: d[k].copy() for k in d.files}
    arrays["DIST"] = arrays["DIST"].astype(np.int64)
    np.savez(path, **arrays)


def _huge_shape_header(path: Path) -> None:
    with np.load(path) as d:
        arrays = {k: d[k].copy() for k in d.files}
    arrays["FLAGS"] = np.zeros(1, np.uint8)
    np.savez(path, **arrays)
    data = bytearray(path.read_bytes())
    at = data.find(b"'shape': (1,)")
    data[at : at + 13] = b"'shape': (9,)"  # claims more bytes than the member holds
    path.write_bytes(bytes(data))


def _not_a_zip(path: Path) -> None:
    path.write_bytes(b"not a numpy file")


def _good_cache(cache: Path) -> Path:
    path = cache / f"tables-v{tables.VERSION}.npz"
    tables._save(path, tables.get_tables())
    return path


def test_a_missing_cache_is_built_silently(tmp_path):
    out = _run(tmp_path)
    assert out.returncode == 0, out.stderr
    assert _reports(out.stderr) == []
    assert out.stdout.split() == [tables.TABLES_SHA256, "True"]
    (path,) = tmp_path.glob("tables-v*.npz")
    assert tables._load(path) is not None


@pytest.mark.parametrize(
    "damage",
    [_truncated, _zeroed, _one_entry_altered, _wrong_dtype, _huge_shape_header, _not_a_zip],
)
def test_a_bad_cache_is_reported_once_and_rebuilt(tmp_path, damage):
    path = _good_cache(tmp_path)
    damage(path)
    with pytest.raises(tables.CorruptCacheError):
        tables._load(path)
    out = _run(tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [tables.TABLES_SHA256, "True"]
    (line,) = _reports(out.stderr)
    assert "table cache" in line and "corrupt" in line and "rebuilding" in line
    assert tables.digest(tables._load(path)) == tables.TABLES_SHA256  # rebuilt on disk
    if damage is _truncated:  # and trusted again by the next process
        again = _run(tmp_path)
        assert again.returncode == 0 and _reports(again.stderr) == []


def test_unwritable_cache_dir_still_works(tmp_path):
    target = tmp_path / "file-not-dir"
    target.write_text("x")
    env = {**os.environ, "SICHUAN_ENV_CACHE_DIR": str(target / "sub")}
    code = "from sichuan_env import is_win; print(is_win('11m'))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True"


def test_build_matches_cache_and_digest():
    built = tables.build_tables()
    cached = tables.get_tables()
    for name in built:
        assert np.array_equal(built[name], cached[name]), name
    # a changed builder must come with a new TABLES_SHA256 (and VERSION)
    assert tables.digest(built) == tables.TABLES_SHA256
