"""The byte-compile of a new environment (`envs/compile_env.py`), run as the installer runs it:
a script, by path, in an isolated interpreter of its own.

Whether an import uses copied bytecode or compiles its source is told apart by planting, in
the donor, bytecode that is valid by its header yet says something its source does not.
"""

from __future__ import annotations

import ast
import importlib.util
import marshal
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.envs import compile_env

pytestmark = pytest.mark.interpreter  # bytecode is per interpreter

SCRIPT = Path(compile_env.__file__)
VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"


def _site_packages(root: Path) -> Path:
    site_packages = root / "lib" / VERSION / "site-packages"
    site_packages.mkdir(parents=True)
    return site_packages


def _plant(source: Path, says: str) -> None:
    """Bytecode for `source`, valid by its header, whose module sets SAYS to `says`."""
    code = compile(f"SAYS = {says!r}\n", os.fspath(source), "exec")
    stat = source.stat()
    header = struct.pack(
        "<4sLLL", importlib.util.MAGIC_NUMBER, 0, int(stat.st_mtime), stat.st_size & 0xFFFF_FFFF
    )
    compiled = Path(importlib.util.cache_from_source(os.fspath(source)))
    compiled.parent.mkdir(exist_ok=True)
    compiled.write_bytes(header + marshal.dumps(code))


def _write(path: Path, text: str, *, mtime: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


def _compile(target: Path, donor: Path | None) -> subprocess.CompletedProcess[str]:
    reuse = ["--reuse", os.fspath(donor)] if donor is not None else []
    return subprocess.run(
        [sys.executable, "-I", os.fspath(SCRIPT), *reuse, os.fspath(target / "lib")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _import_from(site_packages: Path, module: str) -> str:
    """What `module` says when imported from `site_packages`, its bytecode as it finds it."""
    code = f"import sys; sys.path.insert(0, {os.fspath(site_packages)!r}); import {module}; "
    code += f"print({module}.SAYS)"
    answer = subprocess.run(
        [sys.executable, "-I", "-B", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return answer.stdout.strip()


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A donor environment's site-packages and a new one's, and the roots of both."""
    donor_root, target_root = tmp_path / "donor", tmp_path / "new"
    return donor_root, _site_packages(donor_root), target_root, _site_packages(target_root)


def test_a_module_identical_to_the_donors_takes_its_bytecode_and_the_rest_are_compiled(
    trees: tuple[Path, Path, Path, Path],
) -> None:
    _, donor, target_root, target = trees
    for site_packages, mtime in ((donor, 1_000_000), (target, 2_000_000)):
        _write(site_packages / "same.py", "SAYS = 'source'\n", mtime=mtime)
        _write(site_packages / "package" / "__init__.py", "SAYS = 'source'\n", mtime=mtime)
    _write(donor / "changed.py", "SAYS = 'old'\n", mtime=1_000_000)
    _write(target / "changed.py", "SAYS = 'new'\n", mtime=2_000_000)
    _write(target / "only_here.py", "SAYS = 'source'\n", mtime=2_000_000)
    for module in ("same.py", "package/__init__.py", "changed.py"):
        _plant(donor / module, "donor's bytecode")

    finished = _compile(target_root, donor)

    assert finished.returncode == 0, finished.stderr
    assert finished.stdout == finished.stderr == ""
    # Identical files, whatever their times: the donor's bytecode, valid for the new file.
    assert _import_from(target, "same") == "donor's bytecode"
    assert _import_from(target, "package") == "donor's bytecode"
    # The same size, other bytes: compiled from its own source.
    assert _import_from(target, "changed") == "new"
    assert _import_from(target, "only_here") == "source"
    # Every module was left with bytecode.
    for module in ("same", "package/__init__", "changed", "only_here"):
        source = target / f"{module}.py"
        assert list((source.parent / "__pycache__").glob(f"{source.stem}.*.pyc")), module


def test_bytecode_that_no_longer_matches_its_donor_file_is_not_copied(
    trees: tuple[Path, Path, Path, Path],
) -> None:
    _, donor, target_root, target = trees
    _write(donor / "touched.py", "SAYS = 'source'\n", mtime=1_000_000)
    _write(target / "touched.py", "SAYS = 'source'\n", mtime=2_000_000)
    _plant(donor / "touched.py", "donor's bytecode")
    # Rewritten since it was compiled: an import would no longer use that bytecode either.
    os.utime(donor / "touched.py", (1_000_005, 1_000_005))

    assert _compile(target_root, donor).returncode == 0

    assert _import_from(target, "touched") == "source"


def test_without_a_donor_or_with_itself_as_one_every_module_is_compiled_from_its_source(
    trees: tuple[Path, Path, Path, Path],
) -> None:
    _, _, target_root, target = trees
    _write(target / "module.py", "SAYS = 'source'\n", mtime=2_000_000)

    assert _compile(target_root, None).returncode == 0
    assert _import_from(target, "module") == "source"

    _plant(target / "module.py", "its own bytecode")
    assert _compile(target_root, target).returncode == 0
    # Its own valid bytecode is left as it is, neither copied over nor compiled again.
    assert _import_from(target, "module") == "its own bytecode"


def test_the_script_imports_only_the_standard_library() -> None:
    # It runs by path in a new environment that an older release of this package may
    # start: nothing of the package may be imported by it.
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    assert imported - {"__future__"} <= sys.stdlib_module_names
    assert not any(isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(tree))
