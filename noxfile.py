"""Task runner: `nox -s tests`, `lint`, `typecheck`, `bench`, `build`."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import nox

# uv makes a session's environment and installs into it when nox has it (`nox[uv]`, as the
# README installs it): 12 s against about 30 for pip, each of the five sessions of a run.
# Without uv, the standard venv and pip.
nox.options.default_venv_backend = "uv|venv"
# uv installs without byte-compiling unless asked, and pip compiles: without bytecode every
# process the suite starts from a session's environment compiles what it imports (and
# writes none of it where PYTHONDONTWRITEBYTECODE is set).
os.environ.setdefault("UV_COMPILE_BYTECODE", "1")
nox.options.sessions = ["lint", "typecheck", "tests", "tests_lowest"]
nox.options.error_on_missing_interpreters = False

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]


def _found(versions: list[str]) -> list[str]:
    """Every interpreter of `versions` on PATH: a missing one is skipped, not failed."""
    return [version for version in versions if shutil.which(f"python{version}")]


FOUND = _found(PYTHONS)
# Test processes side by side (pytest-xdist): most of a run waits on real subprocesses
# (pip, servers, deadlines), so more processes than cores keep the cores busy. Each
# module's tests stay together in one process, which builds the module's fixtures once.
WORKERS = os.environ.get("KINETIS_TEST_WORKERS", "4")
# The suite writes and removes tens of thousands of files per Python (environments, pip's
# unpacked wheels, installs copied back before each test). On a disk that cost is the
# file system's, not the tests': on the 2-core CI machine (ext4 with online discard) a
# 3.11 run spent 130 of its 430 CPU-s in the kernel and took 238 s; with its temporary
# files in memory, 48 and 152 s. So the tests' TMPDIR is a fresh directory under
# /dev/shm when that is a tmpfs with room and allows executing (the tests run scripts and
# environments they make there), removed when the session ends (or, for a session killed
# outright, when the next one starts) so no run leaves memory held.
# `KINETIS_TEST_TMPDIR=<dir>` puts it where you say and keeps it.
MEMORY_TMP = Path("/dev/shm")
MEMORY_TMP_NEEDED = 4 << 30
MEMORY_TMP_PREFIX = "kinetis-tests-"


@nox.session(python=FOUND or None)
def tests(session: nox.Session) -> None:
    """The test suite, on every supported Python found on this machine.

    Tests marked `once_per_run` (the same on every Python, and long) run on the first
    Python found only. `KINETIS_TEST_WORKERS=1` runs the tests in one process.
    """
    session.install("-e", ".[test]")
    # The suite starts about a thousand processes importing this checkout's modules (the
    # editable install reads them in place): compiled once here, where the environment sets
    # PYTHONDONTWRITEBYTECODE they would be compiled again in each (27 ms a start).
    session.run("python", "-m", "compileall", "-q", "src")
    options = ["-n", WORKERS, "--dist", "loadscope"] if WORKERS != "1" else []
    if FOUND and session.python != FOUND[0]:
        options += ["-m", "not once_per_run"]
    with _test_tmpdir() as temporary:
        environ = {} if temporary is None else {"TMPDIR": os.fspath(temporary)}
        # Exit 5 is pytest finding no test: reported by pytest itself, not a failure here.
        session.run("pytest", *options, *session.posargs, success_codes=[0, 5], env=environ)


# The suite at the lowest version of each of the package's own dependencies its ranges
# admit, on one Python (the oldest found, where the floors are lowest): a floor that no
# run installs is a claim nobody checks. uv's `--resolution lowest-direct` leaves a
# dependency the test extra reaches only through the package itself (limits, through
# `kinetis-mcp-docs[http]`) where the rest of the resolution puts it, so each floor is
# also asked for exactly, as a constraint.
@nox.session(python=FOUND[:1] or None, venv_backend="uv")
def tests_lowest(session: nox.Session) -> None:
    """The suite with every dependency of the package at the lowest version it admits."""
    constraints = Path(session.create_tmp()) / "floors.txt"
    python = str(session.run("python", "-c", _VERSION, silent=True)).strip()
    constraints.write_text("".join(f"{pin}\n" for pin in floors(python)), encoding="utf-8")
    session.install("--resolution", "lowest-direct", "-c", str(constraints), "-e", ".[test]")
    session.run("python", "-m", "compileall", "-q", "src")
    options = ["-n", WORKERS, "--dist", "loadscope"] if WORKERS != "1" else []
    with _test_tmpdir() as temporary:
        environ = {} if temporary is None else {"TMPDIR": os.fspath(temporary)}
        session.run(
            "pytest",
            "-m",
            "not once_per_run",
            *options,
            *session.posargs,
            success_codes=[0, 5],
            env=environ,
        )


_VERSION = "import sys; print('%d.%d' % sys.version_info[:2])"


def floors(python: str, pyproject: Path = Path(__file__).parent / "pyproject.toml") -> list[str]:
    """`name==floor` for each of the package's own requirements (its dependencies and its
    http extra) that applies on `python` (`3.10`): the lowest version each range admits."""
    from packaging.requirements import Requirement  # noqa: PLC0415 - nox's own dependency

    if sys.version_info >= (3, 11):
        import tomllib  # noqa: PLC0415
    else:  # nox brings tomli where the standard library has no tomllib
        import tomli as tomllib  # noqa: PLC0415

    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    pins = []
    for text in [*project["dependencies"], *project["optional-dependencies"]["http"]]:
        requirement = Requirement(text)
        if requirement.marker and not requirement.marker.evaluate({"python_version": python}):
            continue
        lowest = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        if lowest:
            pins.append(f"{requirement.name}=={lowest[0]}")
    return pins


@contextlib.contextmanager
def _test_tmpdir(memory: Path = MEMORY_TMP) -> Iterator[Path | None]:
    """The tests' TMPDIR (see MEMORY_TMP): the one asked for, a fresh one under `memory`
    removed afterwards, or None for the system's."""
    asked = os.environ.get("KINETIS_TEST_TMPDIR")
    if asked:
        chosen = Path(asked)
        chosen.mkdir(parents=True, exist_ok=True)
        yield chosen.resolve()
        return
    # First, so that what a killed session left does not count against the room.
    _remove_left_by_killed_sessions(memory)
    if not _memory_tmp_usable(memory):
        yield None
        return
    made = Path(tempfile.mkdtemp(prefix=f"{MEMORY_TMP_PREFIX}{os.getpid()}-", dir=memory))
    try:
        yield made
    finally:
        _remove_tree(made)


def _remove_left_by_killed_sessions(memory: Path) -> None:
    """Remove the directories under `memory` of sessions that no longer run.

    A session killed outright (SIGKILL, or SIGTERM, which Python does not turn into an
    exception) never reaches its own removal; its directory names its process. Only this
    user's directories are looked at.
    """
    for entry in memory.glob(f"{MEMORY_TMP_PREFIX}*-*"):
        session = entry.name[len(MEMORY_TMP_PREFIX) :].partition("-")[0]
        if session.isdigit() and entry.lstat().st_uid == os.getuid() and not _running(int(session)):
            _remove_tree(entry)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: running
    return True


def _memory_tmp_usable(path: Path) -> bool:
    """Whether `path` is a tmpfs with MEMORY_TMP_NEEDED free that allows executing."""
    try:
        lines = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
        kinds = {fields[1]: fields[2] for fields in (line.split() for line in lines)}
        usage = os.statvfs(path)
    except OSError:
        return False
    return (
        kinds.get(os.fspath(path)) == "tmpfs"
        and not usage.f_flag & os.ST_NOEXEC
        and usage.f_bavail * usage.f_frsize >= MEMORY_TMP_NEEDED
    )


def _remove_tree(root: Path) -> None:
    """Remove `root`, whatever modes a test left on the directories under it.

    Every directory is made writable first (links are left alone: they may point outside),
    since removing a file needs its directory writable for anyone but root.
    """
    for directory, names, _ in os.walk(root):
        for name in names:
            path = Path(directory, name)
            if not path.is_symlink():
                path.chmod(0o700)
    shutil.rmtree(root)


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff lint and format check over the whole tree."""
    session.install("ruff>=0.8")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the package, the tests and this file."""
    session.install("-e", ".[test]", "mypy>=1.13", "nox")
    session.run("mypy")


# pip always: the install is pointed at the wheelhouse through pip's own PIP_* variables, as
# a user's setup is, and builds the wheels with `pip wheel`.
@nox.session(venv_backend="venv")
def setup_from_source(session: nox.Session) -> None:
    """Install this checkout with `kinetis-docs setup` (add `-- codex` for Codex), serving
    this checkout's own docs/; `-- --live` reads the pages from the Kinetis repository.

    Builds the checkout and its dependencies into `build/wheelhouse`, then runs setup with
    pip pointed at it alone (`PIP_FIND_LINKS`, `PIP_NO_INDEX`), so the install is exactly
    this checkout. The wheelhouse stays between runs, each refreshing it: a Codex
    registration records its path for the daily update. By default the registered server
    reads its pages from this checkout's docs/ (`KINETIS_MCP_DOCS_PAGES`), so setup needs
    no network once the wheels are built and a docs change shows in the next page read.
    It registers with your real client, under your real HOME.
    """
    arguments = [argument for argument in session.posargs if argument != "--live"]
    checkout = Path(__file__).resolve().parent
    wheelhouse = checkout / "build" / "wheelhouse"
    fresh = Path(session.create_tmp()).resolve() / "wheelhouse"
    shutil.rmtree(fresh, ignore_errors=True)
    session.run("python", "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(fresh), str(checkout))
    _replace_wheels(wheelhouse, fresh)
    # A file:// URI, not a path: pip splits PIP_FIND_LINKS at whitespace, so a checkout
    # whose path holds a space would name two places that do not exist.
    local = {"PIP_FIND_LINKS": wheelhouse.as_uri(), "PIP_NO_INDEX": "1"}
    session.install("kinetis-mcp-docs", env=local)
    if "--live" not in session.posargs:
        local["KINETIS_MCP_DOCS_PAGES"] = str(checkout / "docs")
    session.run("kinetis-docs", "setup", *arguments, env=local)


def _replace_wheels(wheelhouse: Path, fresh: Path) -> None:
    """Make `wheelhouse` hold exactly the wheels in `fresh`, each replaced in one rename.

    An update reading the wheelhouse meanwhile sees each wheel whole, old or new.
    """
    wheelhouse.mkdir(parents=True, exist_ok=True)
    built = sorted(fresh.glob("*.whl"))
    for wheel in built:
        partial = wheelhouse / f".{wheel.name}.partial"
        shutil.copy2(wheel, partial)
        partial.replace(wheelhouse / wheel.name)
    names = {wheel.name for wheel in built}
    for stale in wheelhouse.glob("*.whl"):
        if stale.name not in names:
            stale.unlink()


@nox.session
def clients(session: nox.Session) -> None:
    """Setup against the real Claude Code and Codex CLIs, installed from npm (optional), and
    Claude Code against the HTTP route over `--transport http` with a bearer header.

    The CLIs go into a temporary directory; each test gives them a throwaway HOME and
    CODEX_HOME, a local wheelhouse and a local documentation origin.
    """
    session.install("-e", ".[test]")
    # Absolute: the tests run the CLIs from other working directories.
    prefix = Path(session.create_tmp()).resolve() / "clients"
    session.run(
        "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--prefix",
        str(prefix),
        "@anthropic-ai/claude-code",
        "@openai/codex",
        external=True,
    )
    session.run(
        "pytest",
        "tests/installer/test_real_clients.py",
        "tests/server/http/test_real_claude.py",
        *session.posargs,
        env={
            "KINETIS_TEST_CLIENTS_BIN": str(prefix / "node_modules" / ".bin"),
            # The tests' homes and projects outside this checkout: Claude Code keys a
            # local-scope registration by the git work tree a directory lies in.
            "TMPDIR": tempfile.gettempdir(),
        },
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks beside a peer built on the official MCP Python SDK: one table, and JSON.

    Every figure is measured for this project and for the peer in the same run, so each is
    a ratio that holds on a loaded machine. The table is printed and written, with the raw
    samples, to `.bench/results.json`. `mcp` (the peer's SDK) is installed in this session
    only, and so is `bm25s`, the plain BM25 baseline of `search_quality`. `-- --quick` is a
    smoke run; `-- --only spawn,memory` runs some figures.
    """
    session.install("-e", ".[test]", "mcp>=2.3,<3", "bm25s>=0.2")
    session.run("python", "-m", "benchmarks.run", *session.posargs)


@nox.session
def build(session: nox.Session) -> None:
    """Build the sdist and the wheel into a fresh `dist/` and check them before publishing.

    `python -m build` makes the sdist from the checkout and the wheel from the unpacked sdist,
    as an installer building from source would; `twine check --strict` checks the metadata
    an index shows; then the release tests check what each archive holds (the licence, the
    package and its type marker; in the sdist also the docs and the tests).
    """
    dist = Path("dist")
    shutil.rmtree(dist, ignore_errors=True)
    session.install("build>=1.2", "twine>=6.1", "pytest>=8")
    session.run("python", "-m", "build", "--outdir", str(dist), ".")
    session.run("twine", "check", "--strict", *sorted(str(path) for path in dist.iterdir()))
    # --noconftest: these tests read archives only; the suite's fixtures (a local HTTPS
    # origin) and their dependencies are not needed to check what a release holds.
    session.run(
        "pytest",
        "--noconftest",
        "tests/release",
        *session.posargs,
        env={"KINETIS_TEST_DIST_DIR": str(dist.resolve())},
    )
