"""Re-record the ``sha256`` of checkpoints written before their JSON config was hashed.

    python tests/data/rehash_checkpoints.py                 # the shipped agents/checkpoints/*.pt
    python tests/data/rehash_checkpoints.py runs/bc/best.pt # any others

A checkpoint's ``sha256`` used to be the hash of its weights file alone; it is now
``sichuan_env.agents.checkpoint.digest``, the hash of the weights file *and* the JSON
(every key but ``sha256``). For each checkpoint this script checks the weights against
the old hash first, and only then records the new one: the weights file is never
written, and a checkpoint whose weights do not match its old hash is left alone
(exit status 1). One already hashed the new way is reported and left as it is.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sichuan_env.agents import checkpoint


def rehash_one(pt: Path) -> str:
    """What happened to checkpoint ``pt``: ``"current"``, ``"rehashed"`` or an error message."""
    try:
        doc = checkpoint.read_json(checkpoint.config_path(pt))
    except ValueError as exc:
        return f"error: {exc}"
    if not pt.is_file():
        return f"error: {pt} is missing"
    if doc.get("sha256") == checkpoint.digest(pt, doc):
        return "current"
    if doc.get("sha256") != checkpoint.file_sha256(pt):
        return "error: the weights match neither the old nor the new hash (altered?)"
    checkpoint.rehash(pt)
    return "rehashed"


def main(argv: list[str]) -> int:
    """Rehash the given checkpoints (default: the shipped ones); 1 if any failed."""
    paths = [Path(a) for a in argv] or sorted(checkpoint.SHIPPED_DIR.glob("*.pt"))
    status = 0
    for pt in paths:
        outcome = rehash_one(pt)
        print(f"{pt}: {outcome}")
        status |= outcome.startswith("error")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
