"""The byte-compile of a new environment: a script its own interpreter runs, stdlib only.

    <new env>/bin/python -I compile_env.py --reuse <site-packages> <new env>/lib

`--reuse` names the site-packages of the environment the installer runs in: the installed
environment on an update, the one `kinetis-docs` was installed in on a first setup. An
update installs mostly the same distributions at the same versions, so most of the new
environment's modules are byte for byte the ones beside the running interpreter, whose
bytecode is already there. For each module identical in both, with valid bytecode in the
other, that bytecode is copied with the new file's time and size in its header (what an
import checks); `compileall` then compiles whatever is left, and leaves valid bytecode as it
is. Copying costs a fifth to under half of compiling, most of it reading files (`nox -s
bench -- --only update_compile`), so an update's compile no longer takes a core for a
second beside the client and the server starting.

Run as a script, by path, never imported from the new environment: an installed release
starts the compile of the next one with its own copy of this file, so nothing of the new
environment's package is a module path the old one depends on. Which is why it imports
nothing but the standard library. The bytecode is only an optimisation: whatever fails here
leaves a module uncompiled, compiled on its first import as before.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import struct
import sys
from pathlib import Path

# A timestamp pyc's header: magic, flags (0), the source's mtime and size, both mod 2**32.
_HEADER = struct.Struct("<4sLLL")


def _pyc(source: Path) -> Path:
    """Where the bytecode of `source` is written and looked for (what `compileall` uses)."""
    return Path(importlib.util.cache_from_source(os.fspath(source)))


def _header(stat: os.stat_result) -> bytes:
    mask = 0xFFFF_FFFF
    magic = importlib.util.MAGIC_NUMBER
    return _HEADER.pack(magic, 0, int(stat.st_mtime) & mask, stat.st_size & mask)


def _reusable(source: Path, twin: Path) -> tuple[bytes, int] | None:
    """Bytecode for `source` and the mode to write it with, from `twin`'s, if `twin` holds
    what `source` holds and its bytecode is valid."""
    try:
        mine, theirs = source.stat(), twin.stat()
        if mine.st_size != theirs.st_size:
            return None
        compiled = _pyc(twin).read_bytes()
        # Only bytecode an import would use: this interpreter's, checked by timestamp, and
        # written for the twin as it is now.
        if compiled[: _HEADER.size] != _header(theirs):
            return None
        if source.read_bytes() != twin.read_bytes():
            return None
    except OSError:
        return None
    # The mode py_compile gives bytecode: the source's, writable by its owner.
    return _header(mine) + compiled[_HEADER.size :], (mine.st_mode & 0o666) | 0o200


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write `path` whole or not at all: an import never meets half a file."""
    path.parent.mkdir(exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        partial.replace(path)
    except BaseException:
        partial.unlink()
        raise


def reuse(donor: Path, target: Path) -> int:
    """Give every module under `target` the bytecode of its identical twin under `donor`
    (the same path relative to each); return how many were given some."""
    if donor.resolve() == target.resolve():
        return 0
    reused = 0
    for source in target.rglob("*.py"):
        found = _reusable(source, donor / source.relative_to(target))
        if found is None:
            continue
        try:
            _write(_pyc(source), *found)
        except OSError:
            continue
        reused += 1
    return reused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Byte-compile a new environment.")
    parser.add_argument("--reuse", help="site-packages whose bytecode identical modules take")
    parser.add_argument("lib", help="the new environment's lib directory")
    options = parser.parse_args(argv)
    if options.reuse:
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        reuse(Path(options.reuse), Path(options.lib) / version / "site-packages")
    # One worker, as the parent's docstring says why; quiet=1 prints only errors.
    return 0 if compileall.compile_dir(options.lib, quiet=1, workers=1) else 1


if __name__ == "__main__":
    sys.exit(main())
