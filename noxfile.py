"""Task runner: `nox -s tests`, `lint`, `typecheck`, `bench`, `build`."""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
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


# The whole suite runs on one Python, and on the others only the tests whose outcome an
# interpreter can change (marked `interpreter`): about 400 of the suite's tests (installer
# scenarios, route starts, repository checks) test the same thing on every interpreter,
# and they are the costly half. 3.11 where it is found, the oldest otherwise.
FULL = "3.11" if "3.11" in FOUND else (FOUND[0] if FOUND else None)
# The oldest Python found is where `tests_lowest` runs, the interpreter's tests among what
# it runs: `tests` leaves that Python to it, unless it is the one that runs everything.
LOWEST = FOUND[0] if FOUND else None
TESTED = [version for version in FOUND if version != LOWEST or version == FULL]


@nox.session(python=TESTED or None)
def tests(session: nox.Session) -> None:
    """The test suite: all of it on one Python (3.11 where found), and on every other
    supported Python found here the tests an interpreter can change (`-m interpreter`),
    but the oldest, where `tests_lowest` runs them at the dependencies' lowest versions.

    `nox -s tests_all` runs all of it on each. `KINETIS_TEST_WORKERS=1` runs the tests in
    one process.
    """
    selection = [] if session.python == FULL else ["-m", "interpreter"]
    _pytest(session, selection)


@nox.session(python=FOUND or None)
def tests_all(session: nox.Session) -> None:
    """The whole suite on every supported Python found here: before a release.

    Tests marked `once_per_run` (the same on every Python, and long) run on one only."""
    _pytest(session, [] if session.python == FULL else ["-m", "not once_per_run"])


def _pytest(session: nox.Session, selection: list[str]) -> None:
    session.install("-e", ".[test]")
    # The suite starts about a thousand processes importing this checkout's modules (the
    # editable install reads them in place): compiled once here, where the environment sets
    # PYTHONDONTWRITEBYTECODE they would be compiled again in each (27 ms a start).
    session.run("python", "-m", "compileall", "-q", "src")
    _run_pytest(session, selection)


def _run_pytest(session: nox.Session, selection: list[str]) -> None:
    options = ["-n", WORKERS, "--dist", "loadscope"] if WORKERS != "1" else []
    with _test_tmpdir() as temporary:
        environ = {} if temporary is None else {"TMPDIR": os.fspath(temporary)}
        # Exit 5 is pytest finding no test: reported by pytest itself, not a failure here.
        session.run(
            "pytest", *options, *selection, *session.posargs, success_codes=[0, 5], env=environ
        )


# At the lowest version of each of the package's own dependencies its ranges admit, on
# one Python (the oldest found, where the floors are lowest), the tests of the parts the
# dependencies serve and the interpreter's, which hold the installer's smoke (see
# tests/conftest.py): a floor that no run installs is a claim nobody checks. uv's
# `--resolution lowest-direct` leaves a dependency the test extra reaches only through the
# package itself (limits, through `kinetis-mcp-docs[http]`) where the rest of the
# resolution puts it, so each floor is also asked for exactly, as a constraint.
@nox.session(python=LOWEST, venv_backend="uv")
def tests_lowest(session: nox.Session) -> None:
    """The tests of what the package's dependencies serve, each dependency at the lowest
    version its range admits."""
    constraints = Path(session.create_tmp()) / "floors.txt"
    python = str(session.run("python", "-c", _VERSION, silent=True)).strip()
    constraints.write_text("".join(f"{pin}\n" for pin in floors(python)), encoding="utf-8")
    session.install("--resolution", "lowest-direct", "-c", str(constraints), "-e", ".[test]")
    session.run("python", "-m", "compileall", "-q", "src")
    _run_pytest(session, ["-m", "(dependencies or interpreter) and not once_per_run"])


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


# What `setup_from_source` accepts after `--`: the client (nothing for Claude Code), and
# where the registered server reads its pages when not from the install's own copy of this
# checkout's docs/.
SETUP_CLIENTS = {"codex": ("Codex", "codex")}
DEFAULT_CLIENT = ("Claude Code", "claude")
SETUP_OPTIONS = {
    "--live": "the pages of the Kinetis repository, read live",
    "--docs-in-place": "this checkout's docs/ read in place",
}
PAGES_VARIABLE = "KINETIS_MCP_DOCS_PAGES"
PAGES_COPY_VARIABLE = "KINETIS_MCP_DOCS_PAGES_COPY"
# How a README user runs the session (in the clone, nox in its .venv).
SESSION_COMMAND = ".venv/bin/python -m nox -s setup_from_source"


class SetupRefused(Exception):
    """A `setup_from_source` refused before anything is built: the one line saying why."""


@dataclass(frozen=True)
class SetupRequest:
    """What `setup_from_source` was asked for: the client's argument, and its options."""

    client: str | None = None
    options: frozenset[str] = frozenset()

    @property
    def arguments(self) -> list[str]:
        """What `kinetis-docs setup` is given: the client's argument, if any."""
        return [] if self.client is None else [self.client]


def _session_command(*arguments: str) -> str:
    return " ".join([SESSION_COMMAND, *(["--", *arguments] if arguments else [])])


def _takes() -> str:
    options = ", ".join(f"`{option}` ({what})" for option, what in SETUP_OPTIONS.items())
    return (
        f"It takes `codex` for Codex (nothing for Claude Code), and {options}: "
        f"`{_session_command('codex', '--docs-in-place')}`, say"
    )


def setup_request(posargs: list[str], environ: Mapping[str, str]) -> SetupRequest:
    """`setup_from_source`'s arguments checked, with the user's pages settings they must
    agree with; `SetupRefused` naming what a user can run instead."""
    client: str | None = None
    options: set[str] = set()
    for argument in posargs:
        if argument in SETUP_OPTIONS:
            options.add(argument)
            continue
        if argument in SETUP_CLIENTS and client in (None, argument):
            client = argument
            continue
        raise SetupRefused(_refusal(argument, posargs))
    if len(options) > 1:
        raise SetupRefused(
            "`--live` and `--docs-in-place` ask for two places to read the pages from: give "
            f"one, e.g. `{_session_command('--docs-in-place')}`. Nothing was built"
        )
    given = [name for name in (PAGES_VARIABLE, PAGES_COPY_VARIABLE) if environ.get(name)]
    if given and options:
        (option,) = options
        raise SetupRefused(
            f"`{option}` asks for {SETUP_OPTIONS[option]}, but {given[0]} is set in this shell, "
            f"asking for {environ[given[0]]}: unset it, or run "
            f"`{_session_command(*([client] if client else []))}` to serve what it names. "
            "Nothing was built"
        )
    for name in given:
        pages = Path(environ[name]).expanduser()
        if not (pages / "index.md").is_file():
            raise SetupRefused(
                f"{name}={environ[name]} names no directory of pages (it has no index.md): "
                "point it at one, or unset it to serve a copy of this checkout's docs/. "
                "Nothing was built"
            )
    return SetupRequest(client, frozenset(options))


def _refusal(argument: str, posargs: list[str]) -> str:
    """The line refusing `argument` of `posargs`, with the command it may have meant."""
    if argument.lower().startswith("claude"):
        rest = [given for given in posargs if given != argument]
        return (
            f"`-- {argument}`: Claude Code is the default, so it takes no argument: "
            f"`{_session_command(*rest)}`. Nothing was built"
        )
    refused = f"`-- {argument}` is not an argument of setup_from_source"
    near = difflib.get_close_matches(argument, [*SETUP_OPTIONS, *SETUP_CLIENTS], n=1, cutoff=0.6)
    if near:
        corrected = [near[0] if given == argument else given for given in posargs]
        return f"{refused}; did you mean `{_session_command(*corrected)}`? Nothing was built"
    return f"{refused}. {_takes()}. Nothing was built"


def refused_client(request: SetupRequest, environ: Mapping[str, str]) -> str | None:
    """Why setup could not register with the client asked for (its CLI is not on PATH), or
    None: said before anything is built."""
    label, executable = SETUP_CLIENTS.get(request.client or "", DEFAULT_CLIENT)
    if shutil.which(executable, path=environ.get("PATH", os.defpath)) is not None:
        return None
    again = _session_command(*request.arguments, *sorted(request.options))
    return (
        f"the {label} CLI `{executable}` is not on PATH, and setup registers the server "
        f"through it: install {label}, or add the directory holding `{executable}` to PATH, "
        f"then run `{again}` again. Nothing was built"
    )


def pages_environment(
    request: SetupRequest, checkout: Path, environ: Mapping[str, str]
) -> dict[str, str]:
    """What tells setup where the registered server reads its pages: the user's own
    setting when there is one (setup reads it as it is), else a copy of this checkout's
    docs/ held by the install, the docs/ read in place (`--docs-in-place`), or the Kinetis
    repository (`--live`)."""
    if any(environ.get(name) for name in (PAGES_VARIABLE, PAGES_COPY_VARIABLE)):
        return {}
    docs = os.fspath(checkout / "docs")
    if "--live" in request.options:
        return {}
    if "--docs-in-place" in request.options:
        return {PAGES_VARIABLE: docs}
    return {PAGES_COPY_VARIABLE: docs}


# pip always: the install is pointed at the wheelhouse through pip's own PIP_* variables, as
# a user's setup is, and builds the wheels with `pip wheel`. No environment of nox's own:
# the session checks what it was given first, then makes its environment, so that a typo
# or a missing client CLI is refused before anything is built.
@nox.session(venv_backend="none")
def setup_from_source(session: nox.Session) -> None:
    """Install this checkout with `kinetis-docs setup` (add `-- codex` for Codex), serving
    a copy of this checkout's docs/ that the install holds; `-- --live` reads the pages from
    the Kinetis repository, `-- --docs-in-place` this checkout's docs/ as they are.

    Checks its arguments and the client's CLI first, then builds the checkout and its
    dependencies into `build/wheelhouse` and runs setup with pip pointed at it alone
    (`PIP_FIND_LINKS`, `PIP_NO_INDEX`), so the install is exactly this checkout. Setup
    copies that wheelhouse and the docs into the install, which then serves and updates
    from its copies: moving or deleting the checkout stops nothing. A `KINETIS_MCP_DOCS_PAGES`
    (read in place) or `KINETIS_MCP_DOCS_PAGES_COPY` set in the shell is handed to setup as
    it is. It registers with your real client, under your real HOME.
    """
    try:
        request = setup_request(session.posargs, os.environ)
    except SetupRefused as refusal:
        session.error(str(refusal))
    refused = refused_client(request, os.environ)
    if refused is not None:
        session.error(refused)
    checkout = Path(__file__).resolve().parent
    wheelhouse = checkout / "build" / "wheelhouse"
    work = Path(session.create_tmp()).resolve()
    environment = work / "kinetis-docs"
    fresh = work / "wheelhouse"
    for made in (environment, fresh):
        shutil.rmtree(made, ignore_errors=True)
    # nox's own interpreter: the one the README's `.venv` runs it with.
    session.run(sys.executable, "-m", "venv", str(environment), external=True)
    python = os.fspath(environment / "bin" / "python")
    pip = [python, "-m", "pip", "--disable-pip-version-check"]
    session.run(*pip, "wheel", "--quiet", "--wheel-dir", str(fresh), str(checkout), external=True)
    _replace_wheels(wheelhouse, fresh)
    # A file:// URI, not a path: pip splits PIP_FIND_LINKS at whitespace, so a checkout
    # whose path holds a space would name two places that do not exist.
    local = {"PIP_FIND_LINKS": wheelhouse.as_uri(), "PIP_NO_INDEX": "1"}
    session.run(*pip, "install", "--quiet", "kinetis-mcp-docs", env=local, external=True)
    local |= pages_environment(request, checkout, os.environ)
    command = os.fspath(environment / "bin" / "kinetis-docs")
    session.run(command, "setup", *request.arguments, env=local, external=True)


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
