"""The only place that decides how kernels are compiled, and how their disk cache is trusted.

Every kernel is compiled with ``cache=True`` (so tests and tools reuse the
on-disk machine code instead of recompiling) and ``nogil=True``. Setting
``NUMBA_DISABLE_JIT=1`` turns every kernel into plain Python for debugging and
coverage runs.

The cache is numba's (``__pycache__`` next to the source, or
``$NUMBA_CACHE_DIR``), with two safeguards of our own, since nothing read from
disk is trusted:

- **Integrity.** Index (``.nbi``) and data (``.nbc``) files carry a SHA-256
  of their content and are named ``<numba's name>.sha.nbi`` /
  ``.sha.<n>.nbc``. A truncated or altered file is never unpickled (garbled
  machine code would abort the process inside LLVM); it and its siblings are
  removed, the kernel is recompiled and re-cached, and one ``WARNING`` line
  of the ``sichuan_env`` logger says so.
- **Freshness.** numba stamps a cache with its own source file only, so a
  kernel that calls, or inlines constants from, another module kept stale
  machine code after that module changed. The stamp here is a hash of the
  source of the kernel's module and of every module of the same project it
  imports, transitively.

And it says what it is doing: the first kernel of a process that finds no
cached machine code logs one ``INFO`` line on the ``sichuan_env.jit`` logger
(compiling on a cold cache, roughly how long, where the cache is); the
command-line tools print it as one line on stderr (``announce_to_stderr``:
``sichuan_env._cli.run`` calls it, and so does the first miss of a process that
runs a project tool with logging left unconfigured, since tools compile while
they import), progress
bars show it while it lasts (``sichuan_env._progress``), and ``jit_time()``
(``sichuan_env._jit_time``) gives the seconds spent compiling and loading kernels, which the match and
training tools leave out of the times they report.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import logging
import os
import pickle
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import MethodType
from typing import Any

import numba
from numba.core import errors, typeinfer, types, typing
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher
from numba.core.typing.templates import Signature

from ._jit_time import _cache_miss, _timed_compile

JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True}  # integer logic only: no fastmath
CACHE_TAG = b"sichuan_env numba cache v1\n"
"""Leading bytes of every cache file written here (then a SHA-256 of the payload)."""

_log = logging.getLogger("sichuan_env")


def njit(fn: Callable[..., Any] | Any = None, **overrides: Any) -> Any:
    """``numba.njit`` with the project defaults and the checked cache.

    Use bare (``@njit``), with options (``@njit(parallel=True)``) or with an
    explicit signature (``@njit(types.int64(...))``: compiled for that signature only, at
    the first call rather than at import).
    """
    options = {**JIT_OPTIONS, **overrides}
    if callable(fn) and not isinstance(fn, Signature):
        return _jit(fn, None, options)
    sigs = None if fn is None else (list(fn) if isinstance(fn, list) else [fn])
    return lambda func: _jit(func, sigs, options)


def _jit(func: Callable[..., Any], sigs: list | None, options: dict[str, Any]) -> Any:
    """Numba's ``_jit`` wrapper, with ``_CheckedCache`` in place of ``FunctionCache``."""
    options = dict(options)
    cache = options.pop("cache", False)
    disp = numba.njit(**options)(func)  # lazy: nothing is compiled or loaded yet
    if not isinstance(disp, Dispatcher):  # NUMBA_DISABLE_JIT=1: the plain function
        return disp
    if cache:
        # what Dispatcher.enable_caching() sets; numba's dispatcher.pyi omits the private _cache
        disp._cache = _CheckedCache(disp.py_func)  # type: ignore[attr-defined]
    disp.get_call_template = MethodType(_canonical_call_template, disp)  # type: ignore[method-assign]
    disp.compile = MethodType(_timed_compile, disp)  # type: ignore[method-assign]
    if sigs is not None:  # compiled (or loaded) at the first call, not at import
        disp._declared_sigs = sigs  # type: ignore[attr-defined]
        disp._compile_for_args = MethodType(_first_call, disp)  # type: ignore[attr-defined]
    return disp


def _compile_declared(disp: Dispatcher) -> None:
    """Compile a kernel's explicit signatures, then no others (numba's eager ``njit(sig)``)."""
    with global_compiler_lock:  # a second thread waits here, then finds them compiled
        sigs = disp.__dict__.pop("_declared_sigs", None)
        if sigs is None:
            return
        with typeinfer.register_dispatcher(disp):
            for sig in sigs:
                disp.compile(sig)
        disp.disable_compile()


def _first_call(self: Dispatcher, *args: Any, **kws: Any) -> Any:
    """Compile a kernel's explicit signatures on its first call, then dispatch it again.

    numba runs ``_compile_for_args`` on a call that no compiled signature
    matches and calls what it returns; afterwards such a call raises
    ``TypeError``, as for eager signatures.
    """
    _compile_declared(self)
    return self  # what numba then calls with the arguments: TypeError if no signature fits


def _canonical(ty: Any) -> Any:
    """The argument type a kernel is compiled for when another kernel calls it.

    numba compiles a callee once per distinct argument type list, and types a
    constant argument as its own literal type (``Literal[int](-1)``) and a
    record's field as its declared width (``int8``), so a helper called from
    ten sites was compiled up to seven times. A signed integer narrower than
    64 bits is typed as ``int64`` (numba does integer arithmetic in at least 64
    bits anyway, so no result changes). Literals keep their literal type: a
    constant argument lets numba specialise the callee (typing them as plain
    ints made ``shanten_batch`` 3.5x slower). Unsigned integers and everything
    else are left as they are.
    """
    # literals stay: a constant argument lets numba fold the callee (shanten_batch, whose meld
    # count is a literal, is 3.5x slower compiled for a plain int64)
    return types.int64 if ty in (types.int8, types.int16, types.int32) else ty


def _canonical_call_template(self: Any, args: tuple, kws: dict) -> tuple:
    """``Dispatcher.get_call_template``, compiling the callee for ``_canonical`` argument types.

    numba types a call from one kernel to another here; the caller converts its
    arguments to the callee's signature.
    """
    _compile_declared(self)
    pysig, args = self._compiler.fold_argument_types(args, kws)
    canon = tuple(_canonical(a) for a in args)
    if self._can_compile:
        try:
            self.compile(canon)
        except errors.TypingError:  # it needs what _canonical dropped: type it as numba does
            canon = tuple(args)
            self.compile(canon)
    cres = self.overloads.get(canon)
    name = self.py_func.__name__
    template = typing.make_concrete_template(
        f"CallTemplate({name})",
        key=name,
        signatures=[cres.signature] if cres is not None else self.nopython_signatures,
    )
    return template, pysig, args, {}


class CorruptCacheError(Exception):
    """A cache file that exists but cannot be trusted."""


def _verified(blob: bytes, path: str) -> bytes:
    """The payload of a cache file written by ``_CheckedCacheFile``, or CorruptCacheError."""
    head = len(CACHE_TAG)
    if not blob.startswith(CACHE_TAG) or len(blob) < head + 32:
        raise CorruptCacheError(f"{os.path.basename(path)}: not a checked cache file")
    payload = blob[head + 32 :]
    if hashlib.sha256(payload).digest() != blob[head : head + 32]:
        raise CorruptCacheError(f"{os.path.basename(path)}: checksum mismatch")
    return payload


class _CheckedCacheFile(IndexDataCacheFile):
    """numba's index + data files, each behind a tag and a SHA-256 of its payload."""

    def __init__(self, cache_path: str, filename_base: str, source_stamp: Any) -> None:
        super().__init__(cache_path, f"{filename_base}.sha", source_stamp)
        self.prefix = f"{filename_base}.sha."

    def _dump(self, obj: Any) -> bytes:
        payload = super()._dump(obj)
        return CACHE_TAG + hashlib.sha256(payload).digest() + payload

    def _save_index(self, overloads: dict) -> None:
        data = self._dump((self._version, self._source_stamp, overloads))
        with self._open_for_write(self._index_path) as f:
            f.write(data)

    def _load_index(self) -> dict:
        try:
            with open(self._index_path, "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            return {}
        version, stamp, overloads = pickle.loads(_verified(blob, self._index_path))
        if version != self._version or stamp != self._source_stamp:
            return {}  # another numba or changed sources: stale files get overwritten
        if not isinstance(overloads, dict):
            raise CorruptCacheError(f"{self._index_name}: malformed index")
        return overloads

    def _load_data(self, name: str) -> Any:
        path = self._data_path(name)
        with open(path, "rb") as f:
            blob = f.read()
        return pickle.loads(_verified(blob, path))

    def remove_all(self) -> None:
        """Delete the index and every data file of this function (best effort)."""
        try:
            names = os.listdir(self._cache_path)
        except OSError:
            return
        for name in names:
            if name.startswith(self.prefix) and name.endswith((".nbi", ".nbc")):
                try:
                    os.unlink(os.path.join(self._cache_path, name))
                except OSError:
                    pass


class _CheckedCache(FunctionCache):
    """A ``FunctionCache`` over ``_CheckedCacheFile`` that recompiles instead of failing."""

    _cache_file: _CheckedCacheFile

    def __init__(self, py_func: Callable[..., Any]) -> None:
        super().__init__(py_func)
        stamp = _source_stamp(py_func) or self._cache_file._source_stamp
        self._cache_file = _CheckedCacheFile(self._cache_path, self._impl.filename_base, stamp)

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            found = super().load_overload(sig, target_context)
        except Exception as exc:  # noqa: BLE001 - any failure to load means: recompile
            self._cache_file.remove_all()
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:160]
            _log.warning(
                "sichuan_env: unreadable numba cache for %s removed (%s); recompiling it",
                getattr(self._py_func, "__qualname__", self._name),
                reason,
            )
            found = None
        if found is None:
            _cache_miss(self._cache_path)
        return found

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            super().save_overload(sig, data)
        except Exception as exc:  # noqa: BLE001 - an unwritable cache only costs a recompile
            self._cache_file.remove_all()
            _log.debug("sichuan_env: could not cache %s: %s", self._name, exc)


# ---------------------------------------------------------------- source stamps

_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)|import[ \t]+([\w., \t]+))",
    re.MULTILINE,
)
_file_info: dict[Path, tuple[bytes, list[str]]] = {}  # path -> (sha256, imported module names)


_paths: dict[str, Path | None] = {}  # module name -> source file
_stamps: dict[str, tuple[str, str]] = {}  # module name -> source stamp


def _module_path(name: str) -> Path | None:
    """The source file of module ``name`` of an already imported top-level package."""
    if name not in _paths:
        top = sys.modules.get(name.partition(".")[0])
        if top is None:
            return None  # not cached: the package may be imported later
        _paths[name] = _find_path(name, top)
    return _paths[name]


def _find_path(name: str, top: Any) -> Path | None:
    """The source file of ``name``: the imported module's, else found on its parent package's path.

    The parent's ``__path__`` is where the import system looks too, so a subpackage
    installed from another folder (``sichuan_env.agents`` lives in ``agents/`` of a
    checkout) is found where it is; nothing is imported here.
    """
    loaded = getattr(sys.modules.get(name), "__file__", None)
    if loaded and Path(loaded).suffix == ".py":
        return Path(loaded)
    parent, _, last = name.rpartition(".")
    search = getattr(sys.modules.get(parent), "__path__", None) if parent else None
    if search is not None:
        spec = importlib.machinery.PathFinder.find_spec(last, list(search))
        origin = getattr(spec, "origin", None)
        if origin and origin.endswith(".py") and Path(origin).is_file():
            return Path(origin)
        if spec is not None or sys.modules.get(parent) is not top:
            return None
    top_file = getattr(top, "__file__", None)
    if not top_file:
        return None
    base = Path(top_file).parent
    if Path(top_file).name != "__init__.py":  # a top-level module, not a package
        return Path(top_file) if "." not in name else None
    rel = name.split(".")[1:]
    for candidate in (base.joinpath(*rel).with_suffix(".py"), base.joinpath(*rel, "__init__.py")):
        if rel and candidate.is_file():
            return candidate
    return base / "__init__.py" if not rel else None


def _imports(path: Path, module: str) -> tuple[bytes, list[str]]:
    """(sha256 of the file, absolute names of the modules it imports), memoised."""
    info = _file_info.get(path)
    if info is None:
        text = path.read_bytes()
        package = getattr(sys.modules.get(module), "__package__", None)  # right for __main__ too
        if package is None:
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        names = []
        for frm, what, plain in _IMPORT.findall(text.decode("utf-8", "replace")):
            if plain:
                names += [p.split()[0] for p in plain.split(",") if p.strip()]
                continue
            dots = len(frm) - len(frm.lstrip("."))
            if dots:
                parts = package.split(".")
                parts = parts[: len(parts) - (dots - 1)] if dots > 1 else parts
                frm = ".".join(parts + ([frm[dots:]] if frm[dots:] else []))
            names.append(frm)
            for item in what.strip("()").replace("\n", " ").split(","):
                if item.strip():
                    names.append(f"{frm}.{item.split()[0]}")  # maybe a submodule
        info = (hashlib.sha256(text).digest(), names)
        _file_info[path] = info
    return info


def _source_stamp(py_func: Callable[..., Any]) -> tuple[str, str] | None:
    """A hash of the kernel's module and every same-project module it imports, transitively.

    Returns None when the module has no source file (numba's stamp applies then).
    """
    module = getattr(py_func, "__module__", None) or ""
    package = getattr(sys.modules.get(module), "__package__", None) or ""
    project = {module.partition(".")[0], package.partition(".")[0], __name__.partition(".")[0]}
    start = _module_path(module)
    if start is None:
        return None
    if module in _stamps:
        return _stamps[module]
    seen: dict[Path, str] = {}
    todo = [(module, start)]
    while todo:
        name, path = todo.pop()
        if path in seen:
            continue
        seen[path] = name
        try:
            names = _imports(path, name)[1]
        except OSError:
            continue
        for dep in names:
            if dep.partition(".")[0] in project:
                dep_path = _module_path(dep)
                # a package's __init__ only re-exports: depending on it would tie
                # every kernel to every module of the package
                if dep_path is not None and dep_path.name != "__init__.py" and dep_path not in seen:
                    todo.append((dep, dep_path))
    h = hashlib.sha256()  # keyed by folder/file, not module name: `python -m` gives __main__
    for key, path in sorted(("/".join(p.parts[-2:]), p) for p in seen):
        if path in _file_info:
            h.update(key.encode() + b"\0" + _file_info[path][0])
    _stamps[module] = ("sha256-imports", h.hexdigest())
    return _stamps[module]
