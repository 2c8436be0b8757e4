"""The install directory: where it is, when setup may write there, and how it is undone.

Every refusal is checked to leave the path exactly as it was: the whole tree under it
(and the path itself) is snapshotted — types, modes, contents, symlink targets and
modification times, so even a file written and removed again would show.
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
from pathlib import Path

import pytest
from pyfakefs.fake_filesystem import FakeFilesystem
from pyfakefs.helpers import set_uid

from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.install_dir.claim import claim_directory, roll_back
from kinetis_mcp_docs.installer.install_dir.ownership import Found, owned_install, resolve_directory
from kinetis_mcp_docs.installer.install_dir.safety import inspect_directory
from tests.support.machine import KINETIS_DOCS

MARKER = b"kinetis-mcp-docs install directory\n"
# Paths are made inside the tests, never at import: on Python 3.10 a Path object made
# before pyfakefs patches pathlib would keep reaching the real file system.
HOME = "/home/user"
# Environment names, as setup makes them.
SERVING = "20261201T101500-3f2a9c1e"
OTHER = "20261130T091200-8b7d0e42"

Snapshot = dict[str, tuple[object, ...]]


def snapshot(path: Path) -> Snapshot:
    """Everything observable about `path` and what lies under it, without following links."""
    entries: Snapshot = {}

    def record(entry: Path) -> None:
        try:
            info = entry.lstat()
        except FileNotFoundError:
            entries[os.fspath(entry)] = ("absent",)
            return
        mode = info.st_mode
        if stat.S_ISLNK(mode):
            entries[os.fspath(entry)] = ("link", entry.readlink().as_posix())
        elif stat.S_ISDIR(mode):
            entries[os.fspath(entry)] = ("dir", stat.S_IMODE(mode), info.st_mtime_ns)
            for child in sorted(entry.iterdir()):
                record(child)
        else:
            entries[os.fspath(entry)] = (
                "file",
                stat.S_IMODE(mode),
                info.st_mtime_ns,
                entry.read_bytes(),
            )

    record(path.parent)
    return entries


def assert_refused(path: Path, *expected: str) -> None:
    before = snapshot(path)
    with pytest.raises(InstallerError) as refusal:
        inspect_directory(path)
    assert refusal.value.message.startswith(f"Refusing to install into {path}: ")
    for text in expected:
        assert text in refusal.value.message
    assert "Nothing was changed there" in refusal.value.message
    assert snapshot(path) == before


@pytest.fixture
def home(fs: FakeFilesystem) -> Path:
    fs.create_dir(HOME)
    return Path(HOME)


@pytest.fixture
def root(home: Path) -> Path:
    """The default install directory of a user whose home is `home`; absent at first."""
    return home / ".kinetis-mcp-docs"


def test_an_absent_directory_is_accepted_and_claiming_creates_it_with_the_marker(
    root: Path,
    home: Path,
) -> None:
    assert inspect_directory(root) is Found.ABSENT

    claim = claim_directory(root, Found.ABSENT)

    assert claim.first_install
    assert sorted(path.name for path in root.iterdir()) == [".kinetis-mcp-docs"]
    assert (root / ".kinetis-mcp-docs").read_bytes() == MARKER


def test_an_empty_directory_is_accepted_and_claiming_writes_only_the_marker(
    root: Path,
    home: Path,
) -> None:
    root.mkdir()

    assert inspect_directory(root) is Found.EMPTY
    claim_directory(root, Found.EMPTY)

    assert [path.name for path in root.iterdir()] == [".kinetis-mcp-docs"]
    assert (root / ".kinetis-mcp-docs").read_bytes() == MARKER


def test_a_directory_carrying_the_marker_is_accepted_and_claiming_it_changes_nothing(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=MARKER)
    fs.create_file(root / "requirements.txt", contents="kinetis-mcp-docs>=1.0,<2\n")
    before = snapshot(root)

    assert inspect_directory(root) is Found.OURS
    claim = claim_directory(root, Found.OURS)

    assert not claim.first_install
    assert snapshot(root) == before


def test_a_marker_that_is_a_symlink_is_refused_even_to_a_file_with_the_right_content(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_file(home / "elsewhere", contents=MARKER)
    fs.create_symlink(root / ".kinetis-mcp-docs", home / "elsewhere")

    assert_refused(root, "is a symlink")


def test_a_marker_that_is_a_dangling_symlink_is_refused(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    root.mkdir()
    fs.create_symlink(root / ".kinetis-mcp-docs", home / "nowhere")

    assert_refused(root, "is a symlink")


def test_a_marker_that_is_a_directory_is_refused_pointing_at_the_install_it_may_hold(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_dir(root / ".kinetis-mcp-docs")

    assert_refused(
        root,
        "its .kinetis-mcp-docs is a directory, not the marker file this tool writes",
        f"set KINETIS_MCP_DOCS_DIR to {root / '.kinetis-mcp-docs'} if that is the install",
    )


def test_the_home_directory_is_refused_saying_the_default_install_directory_is_in_it(
    home: Path, root: Path, fs: FakeFilesystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", HOME)
    fs.create_file(root / ".kinetis-mcp-docs", contents=MARKER)
    fs.create_file(home / ".bashrc", contents=b"export PATH\n")

    assert_refused(
        home,
        f"it is your home directory, which holds the default install directory, {root}",
        f"unset KINETIS_MCP_DOCS_DIR to use the default, {root}, or set it to a new directory",
    )


@pytest.mark.parametrize(
    "holding",
    [
        pytest.param((), id="empty"),
        pytest.param((".bashrc", ".claude.json", "Documents"), id="a user's files"),
        pytest.param((".kinetis-mcp-docs-marker",), id="the marker, as an earlier setup left it"),
    ],
)
def test_the_home_directory_is_refused_whatever_it_holds_without_naming_its_files(
    home: Path, fs: FakeFilesystem, monkeypatch: pytest.MonkeyPatch, holding: tuple[str, ...]
) -> None:
    monkeypatch.setenv("HOME", HOME)
    for name in holding:
        if name == ".kinetis-mcp-docs-marker":
            fs.create_file(home / ".kinetis-mcp-docs", contents=MARKER)
        else:
            fs.create_file(home / name)

    assert_refused(home, "it is your home directory; an install directory is a directory of its")
    with pytest.raises(InstallerError) as refusal:
        inspect_directory(home)
    assert ".bashrc" not in refusal.value.message
    assert ".claude" not in refusal.value.message
    # `update` and `uninstall` refuse it as well.
    with pytest.raises(InstallerError, match="it is your home directory"):
        owned_install(home, "remove")


def test_the_home_directory_named_by_the_password_database_is_refused_too(
    fs: FakeFilesystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    account = Path(pwd.getpwuid(os.getuid()).pw_dir)
    fs.create_dir(account)
    fs.create_dir("/elsewhere")
    monkeypatch.setenv("HOME", "/elsewhere")

    assert_refused(account, "it is your home directory")


def test_a_marker_with_other_content_is_refused(root: Path, home: Path, fs: FakeFilesystem) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=b"somebody else's install\n")

    assert_refused(root, "does not hold the marker")


def test_a_marker_with_an_extra_line_is_refused(root: Path, home: Path, fs: FakeFilesystem) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=MARKER + b"second line\n")

    assert_refused(root, "does not hold the marker")


def test_a_marker_without_its_line_ending_is_refused(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=MARKER.rstrip(b"\n"))

    assert_refused(root, "does not hold the marker")


def test_an_empty_marker_is_refused(root: Path, home: Path, fs: FakeFilesystem) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=b"")

    assert_refused(root, "does not hold the marker")


def test_an_install_whose_marker_was_damaged_is_refused_naming_its_deletion(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=b"half-written\n")
    fs.create_dir(root / "envs" / SERVING)
    fs.create_symlink(root / "current", Path("envs", SERVING))

    # What setup writes is there: no setup mends it, so the refusal names the deletion.
    assert_refused(
        root,
        "if it is an install of this tool whose .kinetis-mcp-docs marker was damaged, and "
        f"nothing of yours is in it, delete it (`rm -rf -- {root}`) and install again from a "
        "clone, as the README says; otherwise set KINETIS_MCP_DOCS_DIR to an empty or new "
        "directory, or fix that path.",
    )


def test_a_path_that_is_a_file_is_refused(root: Path, home: Path, fs: FakeFilesystem) -> None:
    fs.create_file(root, contents=b"KINETIS_MCP_DOCS_DIR pointed here by mistake\n")

    assert_refused(root, "exists and is not a directory")


def test_a_path_that_is_a_dangling_symlink_is_refused(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_symlink(root, home / "gone")

    assert_refused(root, "symlink to nothing")


def test_a_path_below_a_file_is_refused(home: Path, fs: FakeFilesystem) -> None:
    fs.create_file(home / "a-file", contents=b"x")

    assert_refused(home / "a-file" / "install", "is a file")


def test_a_non_empty_directory_without_the_marker_is_refused(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_file(root / "notes.txt", contents=b"my notes\n")
    fs.create_dir(root / "project" / ".git")
    fs.create_symlink(root / "link", "/etc")
    os.chmod(root / "notes.txt", 0o600)  # noqa: PTH101 - the mode is part of the snapshot

    assert_refused(
        root,
        "it is not empty (it holds link, notes.txt, project) and has no .kinetis-mcp-docs marker",
    )


def test_a_directory_holding_only_a_hidden_file_is_not_empty_and_is_refused(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_file(root / ".bashrc", contents=b"export PATH\n")

    assert_refused(root, "is not empty")


def test_a_symlink_to_an_acceptable_directory_is_accepted_as_that_directory(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_dir("/data/install")
    fs.create_symlink(root, "/data/install")

    assert inspect_directory(root) is Found.EMPTY
    claim_directory(root, Found.EMPTY)

    assert Path("/data/install/.kinetis-mcp-docs").read_bytes() == MARKER


def test_rolling_back_a_first_install_into_an_absent_path_removes_everything_it_created(
    home: Path,
) -> None:
    before = snapshot(home)
    nested = home / "tools" / "kinetis" / "install"
    claim = claim_directory(nested, inspect_directory(nested))
    (nested / "envs" / "partial").mkdir(parents=True)

    roll_back(claim)

    assert not (home / "tools").exists()
    assert snapshot(home)[os.fspath(home)][:2] == before[os.fspath(home)][:2]


def test_rolling_back_a_first_install_into_an_empty_directory_empties_it_again(
    root: Path,
    home: Path,
) -> None:
    root.mkdir(mode=0o750)
    claim = claim_directory(root, inspect_directory(root))
    (root / "envs" / "partial" / "bin").mkdir(parents=True)
    (root / "current").symlink_to("envs/partial")
    (root / ".update.lock").touch()

    roll_back(claim)

    assert root.is_dir()
    assert list(root.iterdir()) == []
    assert stat.S_IMODE(root.stat().st_mode) == 0o750


def test_rolling_back_an_install_over_a_directory_already_ours_changes_nothing(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=MARKER)
    fs.create_dir(root / "envs" / "serving")
    claim = claim_directory(root, inspect_directory(root))
    before = snapshot(root)

    roll_back(claim)

    assert snapshot(root) == before


def test_a_directory_that_cannot_be_created_is_a_plain_error_and_leaves_nothing(
    home: Path, fs: FakeFilesystem
) -> None:
    fs.create_dir("/readonly", perm_bits=0o555)
    target = Path("/readonly/sub/install")
    found = inspect_directory(target)
    set_uid(1000)  # as an ordinary user: root would write there anyway

    with pytest.raises(InstallerError, match="Could not create the install directory"):
        claim_directory(target, found)
    assert list(Path("/readonly").iterdir()) == []


def test_the_directory_is_the_variable_when_set() -> None:
    assert resolve_directory({"KINETIS_MCP_DOCS_DIR": "/srv/docs"}) == Path("/srv/docs")


def test_the_directory_variable_has_its_tilde_expanded_and_is_made_absolute(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.chdir(tmp_path)

    assert resolve_directory({"KINETIS_MCP_DOCS_DIR": "~/kd"}) == Path("/home/someone/kd")
    assert resolve_directory({"KINETIS_MCP_DOCS_DIR": "rel/dir"}) == tmp_path / "rel" / "dir"


def test_the_directory_defaults_to_a_dot_directory_in_the_home_when_unset_or_empty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOME", "/home/someone")

    assert resolve_directory({}) == Path("/home/someone/.kinetis-mcp-docs")
    assert resolve_directory({"KINETIS_MCP_DOCS_DIR": ""}) == Path(
        "/home/someone/.kinetis-mcp-docs"
    )


@pytest.mark.parametrize("home", ["relhome", ""])
def test_a_home_that_is_not_an_absolute_path_is_refused_rather_than_used_as_the_default(
    monkeypatch: pytest.MonkeyPatch, home: str
) -> None:
    # A relative HOME made a relative install directory (and a registered command that
    # depended on where setup ran); an empty one, which Python reads as `/`, made
    # `/.kinetis-mcp-docs`.
    monkeypatch.setenv("HOME", home)

    with pytest.raises(InstallerError) as refused:
        resolve_directory({})

    assert refused.value.message.startswith(f"HOME is {home!r}, which is not an absolute path")
    assert "KINETIS_MCP_DOCS_DIR" in refused.value.message
    assert resolve_directory({"KINETIS_MCP_DOCS_DIR": "/srv/docs"}) == Path("/srv/docs")


def _one_line_refusal(command: str, cwd: Path, **variables: str) -> str:
    """The one line on stderr of `kinetis-docs COMMAND`, run in `cwd` with `variables` set
    and no other install setting, which exits 1."""
    environ = {key: value for key, value in os.environ.items() if not key.startswith("KINETIS")}
    result = subprocess.run(
        [os.fspath(KINETIS_DOCS), command],
        env={**environ, **variables},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    return line


@pytest.mark.parametrize("command", ["status", "update", "uninstall"])
def test_a_command_run_with_a_relative_home_says_so_in_one_line_and_writes_nothing(
    tmp_path: Path, command: str
) -> None:
    line = _one_line_refusal(command, tmp_path, HOME="relhome")

    assert line.startswith("kinetis-docs: HOME is 'relhome', which is not an absolute path")
    assert list(tmp_path.iterdir()) == []


def test_an_error_naming_a_path_with_a_newline_is_still_one_line(tmp_path: Path) -> None:
    line = _one_line_refusal("update", tmp_path, HOME=f"{tmp_path}/a\nb")

    # Refused for the newline itself now, as the directory no registration can carry.
    assert line.startswith(
        f"kinetis-docs: The default install directory, '{tmp_path}/a\\nb/.kinetis-mcp-docs', "
        "holds a control character from HOME"
    ), line


@pytest.mark.parametrize("command", ["status", "update", "uninstall"])
def test_a_command_run_with_a_newline_in_the_install_directory_setting_names_it_in_one_line(
    tmp_path: Path, command: str
) -> None:
    line = _one_line_refusal(command, tmp_path, KINETIS_MCP_DOCS_DIR=f"{tmp_path}/a\nb")

    assert line == (
        f"kinetis-docs: KINETIS_MCP_DOCS_DIR is '{tmp_path}/a\\nb', which holds a control "
        "character that no registered command can carry; set it to the install directory, or "
        "unset it to use the default, ~/.kinetis-mcp-docs. Nothing was written."
    )
    assert list(tmp_path.iterdir()) == []


def test_a_directory_that_appears_after_inspection_is_neither_written_nor_removed(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    found = inspect_directory(root)
    fs.create_file(root / "someone-elses.txt", contents=b"theirs\n")
    before = snapshot(root)

    with pytest.raises(InstallerError, match="appeared while setup was running"):
        claim_directory(root, found)

    assert snapshot(root) == before


@pytest.mark.parametrize("mode", [0o775, 0o757, 0o777])
def test_a_directory_other_users_can_write_is_refused_with_the_chmod_that_fixes_it(
    root: Path, home: Path, mode: int
) -> None:
    root.mkdir()
    root.chmod(mode)

    assert_refused(root, f"writable by other users (mode {mode:04o})")
    with pytest.raises(InstallerError) as refusal:
        inspect_directory(root)
    assert f"fix it with `chmod -R go-w {root}` and run setup again." in refusal.value.message


def test_an_install_whose_envs_other_users_can_write_is_refused(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=MARKER)
    root.chmod(0o755)
    (root / "envs").mkdir(mode=0o777)
    (root / "envs").chmod(0o777)

    assert_refused(root, f"{root / 'envs'} is writable by other users", f"`chmod -R go-w {root}`")


@pytest.mark.parametrize("link", ["current", "previous"])
def test_an_install_whose_current_or_previous_environment_others_can_write_is_refused(
    root: Path, home: Path, fs: FakeFilesystem, link: str
) -> None:
    # What an install made under umask 000 by a version before modes were enforced holds.
    fs.create_file(root / ".kinetis-mcp-docs", contents=MARKER)
    serving, other = root / "envs" / SERVING, root / "envs" / OTHER
    for directory in (root, root / "envs", serving, other):
        directory.mkdir(exist_ok=True)
        directory.chmod(0o755)
    fs.create_symlink(root / "current", f"envs/{SERVING}")
    fs.create_symlink(root / "previous", f"envs/{OTHER}")
    writable = serving if link == "current" else other
    writable.chmod(0o777)

    assert_refused(
        root,
        f"{writable}, the environment {link} points at, is writable by other users (mode 0777)",
        f"fix it with `chmod -R go-w {root}` and run setup again.",
    )


def test_an_install_whose_environments_only_the_owner_can_write_is_accepted(
    root: Path, home: Path, fs: FakeFilesystem
) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=MARKER)
    for directory, mode in (
        (root, 0o755),
        (root / "envs", 0o755),
        (root / "envs" / SERVING, 0o755),
        (root / "envs" / OTHER, 0o777),
    ):
        directory.mkdir(exist_ok=True)
        directory.chmod(mode)
    fs.create_symlink(root / "current", f"envs/{SERVING}")
    # Only what `current` and `previous` point at counts: OTHER is pruned, never run.

    assert inspect_directory(root) is Found.OURS


@pytest.mark.parametrize(
    ("name", "make", "found"),
    [
        ("envs", "file", "a regular file"),
        ("envs", "symlink", "a symlink"),
        ("current", "directory", "a directory"),
        ("previous", "file", "a regular file"),
        (".update.lock", "directory", "a directory"),
        (".update.lock", "symlink", "a symlink"),
        (".last-update-check", "directory", "a directory"),
        (".last-update-check", "symlink", "a symlink"),
        ("requirements.txt", "symlink", "a symlink"),
        (".scratch", "file", "a regular file"),
        (".scratch", "symlink", "a symlink"),
    ],
)
def test_an_entry_of_an_install_that_is_not_what_setup_writes_is_refused_untouched(
    root: Path, home: Path, fs: FakeFilesystem, *, name: str, make: str, found: str
) -> None:
    fs.create_file(root / ".kinetis-mcp-docs", contents=MARKER)
    root.chmod(0o755)
    fs.create_dir(home / "virtualenvs" / "work")
    entry = root / name
    if make == "file":
        fs.create_file(entry, contents=b"x")
    elif make == "directory":
        fs.create_dir(entry)
    else:
        fs.create_symlink(entry, home / "virtualenvs")

    assert_refused(root, f"{entry} is {found}, where this installer keeps")
    with pytest.raises(InstallerError) as refusal:
        inspect_directory(root)
    assert f"move {entry} out of the way and run setup again." in refusal.value.message


def test_claiming_under_umask_0_makes_every_directory_0755_and_the_marker_0644(
    home: Path,
) -> None:
    nested = home / "tools" / "kinetis"
    before = os.umask(0)
    try:
        claim_directory(nested, inspect_directory(nested))
    finally:
        os.umask(before)

    assert stat.S_IMODE((home / "tools").stat().st_mode) == 0o755
    assert stat.S_IMODE(nested.stat().st_mode) == 0o755
    assert stat.S_IMODE((nested / ".kinetis-mcp-docs").stat().st_mode) == 0o644
