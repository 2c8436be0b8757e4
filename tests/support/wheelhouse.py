"""A local package index for tests: this checkout's wheel at any version, plus its dependencies.

The installer under test reaches it the way a user reaches a private mirror — through pip's
own environment (`PIP_FIND_LINKS`, `PIP_NO_INDEX`) — so no production code knows about it.
`wheelhouse_pip_env` also cuts off the machine's pip configuration (config files, a
constraint file, extra indexes), so an install under test resolves from the wheelhouse
alone.

Building a wheel costs about half a second per version. The dependency wheels are
downloaded once (with the developer's own pip configuration, the way `pip install -e
.[test]` reached an index) at exactly the versions installed in the running environment,
and kept in pytest's cache directory, so later sessions need no network.
"""

from __future__ import annotations

import email.parser
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from filelock import FileLock

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = "kinetis-mcp-docs"
_VERSION_LINE = re.compile(r'^__version__ = "[^"]*"$', re.MULTILINE)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")
# pip's wheel build is bounded; a hang here is a broken machine, not a slow one.
_PIP_TIMEOUT_SECONDS = 300
_DOWNLOAD_RETRY_PAUSES = (10.0, 30.0)


def make_wheelhouse(
    tmp_path_factory: pytest.TempPathFactory,
    versions: list[str],
    *,
    cache_dir: Path | None = None,
) -> Path:
    """A directory of wheels: this checkout at each of `versions`, and every dependency."""
    wheelhouse = tmp_path_factory.mktemp("wheelhouse")
    work = tmp_path_factory.mktemp("wheel-build")
    wheels = [build_project_wheel(version, wheelhouse, work=work / version) for version in versions]
    requirements = runtime_requirements(wheels[0])
    dependencies = cache_dir or tmp_path_factory.mktemp("dependency-wheels")
    for wheel in download_dependencies(requirements, dependencies):
        shutil.copy2(wheel, wheelhouse / wheel.name)
    return wheelhouse


def build_project_wheel(
    version: str, out: Path, *, work: Path, at_import: str = "", module: str = "__init__.py"
) -> Path:
    """Build this checkout's wheel with `__version__` rewritten to `version`, into `out`.

    `at_import` is code appended to `module`, a file of the package given by its path in
    the package (`installer/names.py`; by default its `__init__.py`): a release that
    misbehaves as soon as that module is imported.
    """
    source = work / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(PROJECT_ROOT / "src", source / "src", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (PROJECT_ROOT / name).exists():
            shutil.copy2(PROJECT_ROOT / name, source / name)
    package = source / "src" / "kinetis_mcp_docs"
    init = package / "__init__.py"
    text, count = _VERSION_LINE.subn(f'__version__ = "{version}"', init.read_text())
    if count != 1:
        raise RuntimeError(f"no single __version__ line in {init}")
    init.write_text(text)
    planted = package / module
    if not planted.is_file():
        raise RuntimeError(f"{module} is not a module of the package")
    planted.write_text(planted.read_text() + at_import)
    built = work / "built"
    _pip(
        ["wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(built), str(source)],
        env=without_pip_configuration(os.environ) | {"PIP_NO_INDEX": "1"},
    )
    (wheel,) = built.glob("*.whl")
    target = out / wheel.name
    shutil.move(wheel, target)
    return target


def runtime_requirements(wheel: Path) -> list[str]:
    """The `Requires-Dist` lines of `wheel` that apply without extras."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata_name,) = (
            name for name in archive.namelist() if name.endswith(".dist-info/METADATA")
        )
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
    return [
        requirement
        for requirement in metadata.get_all("Requires-Dist") or []
        if "extra ==" not in requirement
    ]


def download_dependencies(requirements: list[str], cache: Path) -> list[Path]:
    """Wheels for `requirements` and their dependencies, pinned to the installed versions.

    Reuses `cache` when it already holds a download for the same pins. Each Python keeps
    its own part of the cache (its wheels differ), and the test processes of one run
    (pytest-xdist's workers) take turns at it under a file lock, so none reads a download
    another is still making.
    """
    cache = cache / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(cache / ".lock"):
        return _download_dependencies(requirements, cache)


def _download_dependencies(requirements: list[str], cache: Path) -> list[Path]:
    pins = _installed_pins()
    key = "\n".join([*sorted(requirements), *pins, sys.version.split()[0]]) + "\n"
    stamp = cache / "pins.txt"
    if stamp.exists() and stamp.read_text() == key:
        return sorted(cache.glob("*.whl"))
    for stale in cache.glob("*.whl"):
        stale.unlink()
    constraints = cache / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n")
    # The developer's own pip configuration reaches their index, as `pip install` did.
    download = [
        "download",
        "--quiet",
        "--only-binary=:all:",
        "-d",
        str(cache),
        "-c",
        str(constraints),
        *requirements,
    ]
    # An index answering in part for a moment (seen once: every worker of a session got
    # "ResolutionImpossible" for pins that resolved a minute later) must not error every
    # test that needs an install; a resolution that truly fails fails all three times.
    for pause in _DOWNLOAD_RETRY_PAUSES:
        try:
            _pip(download, env=dict(os.environ))
            break
        except subprocess.CalledProcessError:
            time.sleep(pause)
    else:
        _pip(download, env=dict(os.environ))
    stamp.write_text(key)
    return sorted(cache.glob("*.whl"))


def _installed_pins() -> list[str]:
    pins = set()
    for distribution in importlib.metadata.distributions():
        match = _NAME.match(distribution.metadata["Name"] or "")
        if match and match.group(0).lower().replace("_", "-") != DISTRIBUTION:
            pins.add(f"{match.group(0)}=={distribution.version}")
    return sorted(pins)


def without_pip_configuration(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` with every `PIP_*` variable dropped and pip's config files ignored."""
    cleaned = {key: value for key, value in environ.items() if not key.startswith("PIP_")}
    cleaned["PIP_CONFIG_FILE"] = os.devnull
    return cleaned


def wheelhouse_pip_env(wheelhouse: Path) -> dict[str, str]:
    """The `PIP_*` variables that make pip install from `wheelhouse` and nothing else.

    Apply them over `without_pip_configuration(...)`: a machine's own PIP_* variables,
    config files and constraint file must not reach an install under test.
    """
    return {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def isolated_environ(wheelhouse: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A whole process environment whose pip sees only `wheelhouse`."""
    base = os.environ if environ is None else environ
    return without_pip_configuration(base) | wheelhouse_pip_env(wheelhouse)


def _pip(arguments: list[str], *, env: Mapping[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *arguments],
        env=dict(env),
        check=True,
        timeout=_PIP_TIMEOUT_SECONDS,
        stdin=subprocess.DEVNULL,
    )
