"""Writes that never destroy a good file, and one rule for the tools' output folders.

``write_atomic(path, data)`` writes text, bytes, an iterable of either, or whatever a
``writer(file)`` callback puts in a binary file (``torch.save``, ``savefig``,
``np.savez``) to a temporary file from ``mkstemp`` in ``path``'s folder, flushes and
fsyncs it, then renames it over ``path``: a failure at any point (a full disk, a
file-size limit, Ctrl-C) leaves ``path`` byte for byte as it was and no temporary
file behind. ``write_if_changed`` skips the write when the file already holds the
bytes. Every writer of state, results, metadata and plots in the project goes
through them (docs/guarantees.md, "Output folders and writes").

A write that fails for any reason is an ``OSError`` naming the file: ``WriteError``
(an ``OSError``) stands for failures reported otherwise, such as ``torch.save``'s
``RuntimeError`` for a short write (``as_write_error``), so every CLI maps a failed
write to one line (``sichuan_env._cli.run``).

``claim_output(path, owned, resume=..., overwrite=...)`` is the output-folder rule
every CLI applies before any work starts: a folder that holds the tool's own
outputs (``owned``: names or glob patterns) is continued with ``--resume``,
replaced with ``--overwrite`` (only the tool's own entries are removed; other
files are left alone), and otherwise refused with a one-line hint.

Imports nothing from the package, so any layer may use it.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO

Data = str | bytes | Iterable[str | bytes] | Callable[[IO[bytes]], object]
"""What ``write_atomic`` writes: text (UTF-8), bytes, an iterable of text or bytes
chunks, or a callback that writes to the open binary file."""


class WriteError(OSError):
    """A file could not be written, whatever reported it (``torch.save``'s ``RuntimeError``).

    An ``OSError`` with ``filename`` the file and ``strerror`` the reason, so the CLIs'
    one-line report of an ``OSError`` (``sichuan_env._cli.run``) covers it.
    """


def as_write_error(path: Path | str, exc: BaseException) -> OSError:
    """``exc``, raised while writing ``path``, as an ``OSError`` naming ``path``.

    An ``OSError`` that names a file is returned as it is; one that does not gets
    ``path`` (a ``WriteError`` of the same ``errno``); anything else (``torch.save``
    reports a short write as ``RuntimeError: [enforce fail at inline_container.cc]``)
    becomes a ``WriteError`` (``EIO``) whose reason is the original message, on one line.
    """
    if isinstance(exc, OSError) and exc.filename is not None:
        return exc
    if isinstance(exc, OSError):
        reason = exc.strerror or " ".join(str(exc).split()) or type(exc).__name__
        return WriteError(exc.errno or errno.EIO, f"cannot write the file: {reason}", str(path))
    text = " ".join(str(exc).split())[:300] or type(exc).__name__
    return WriteError(errno.EIO, f"cannot write the file ({type(exc).__name__}: {text})", str(path))


def _mode_for(path: Path) -> int:
    """The permissions of the existing ``path``, or the umask's for a new file."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _emit(f: IO[bytes], data: Data) -> None:
    if isinstance(data, str):
        f.write(data.encode("utf-8"))
    elif isinstance(data, (bytes, bytearray, memoryview)):
        f.write(data)
    elif callable(data):
        data(f)
    else:
        for chunk in data:
            f.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)


def write_atomic(path: Path | str, data: Data) -> None:
    """Write ``data`` to ``path`` whole or not at all.

    The bytes go to a temporary file (``mkstemp``, a unique name) in ``path``'s folder,
    are flushed and fsynced, and the file is renamed over ``path``; ``path`` keeps its
    permissions (a new file gets the umask's). Any failure, including an exception from
    a ``writer`` callback or Ctrl-C, removes the temporary file and leaves ``path`` as
    it was.

    Args:
        path: the file to write (its folder must exist).
        data: text, bytes, an iterable of text or bytes chunks, or ``writer(file)``.

    Raises:
        OSError: the file could not be written (``path`` unchanged); a failure reported
            as another exception by a ``writer`` (``torch.save``'s ``RuntimeError``) is a
            ``WriteError`` naming ``path`` (``as_write_error``).
    """
    path = Path(path)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            _emit(f, data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        error = as_write_error(path, exc) if isinstance(exc, (OSError, RuntimeError)) else exc
        if error is exc:
            raise
        raise error from exc


def write_if_changed(path: Path | str, data: str | bytes) -> bool:
    """``write_atomic(path, data)`` unless ``path`` holds exactly these bytes; whether it wrote.

    Raises:
        OSError: the file could not be written (``path`` unchanged).
    """
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        if path.is_file() and path.stat().st_size == len(raw) and path.read_bytes() == raw:
            return False
    except OSError:
        pass  # unreadable: write it anew
    write_atomic(path, raw)
    return True


def owned_entries(path: Path, owned: Sequence[str]) -> list[Path]:
    """The entries of folder ``path`` that match ``owned`` (names or glob patterns), sorted."""
    if not path.is_dir():
        return []
    found = {e for pattern in owned for e in path.glob(pattern)}
    return sorted(found)


def claim_output(
    path: Path,
    owned: Sequence[str],
    *,
    resume: bool | None,
    overwrite: bool,
    what: str = "output",
    remove: bool = True,
) -> bool:
    """Apply the output-folder rule to ``path``; whether it holds an output to resume.

    Args:
        path: the tool's output folder.
        owned: the names (or glob patterns) of what the tool writes there.
        resume: the tool was asked to continue (``--resume``); None for a tool that
            cannot resume (its hint then offers ``--overwrite`` only).
        overwrite: the tool was asked to replace an existing output (``--overwrite``).
        what: the kind of output, for the message ("run", "ladder", "records").
        remove: with ``overwrite``, remove the old entries now; False for a tool that
            replaces them itself, each whole at the end (``write_atomic``), so a run that
            fails keeps the old output.

    Returns:
        True when ``path`` holds the tool's output and ``resume`` was given; False when
        there is none (none yet, or just removed by ``overwrite``).

    Raises:
        ValueError: both ``resume`` and ``overwrite``; or the folder holds the tool's
            output and neither was given (the message names it and the flags).
        OSError: ``overwrite`` could not remove an entry.
    """
    if resume and overwrite:
        raise ValueError("--resume continues and --overwrite replaces: give one of them")
    found = owned_entries(path, owned)
    if not found:
        return False
    if resume:
        return True
    if overwrite:
        for entry in found if remove else ():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink(missing_ok=True)
        return False
    names = ", ".join(e.name for e in found[:3]) + (", ..." if len(found) > 3 else "")
    hint = "--resume to continue it, " if resume is not None else ""
    raise ValueError(
        f"{path} holds a {what} already ({names}): pass {hint}--overwrite to replace it, "
        "or choose another folder"
    )


def save_figure(fig: object, path: Path | str, **kwargs: object) -> None:
    """``fig.savefig`` (a matplotlib figure) through ``write_atomic``; the format from the suffix.

    Raises:
        OSError: the file could not be written (``path`` unchanged).
    """
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or "png"
    write_atomic(path, lambda f: fig.savefig(f, format=fmt, **kwargs))  # type: ignore[attr-defined]
