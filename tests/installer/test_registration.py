"""Registration through the clients' own CLIs, against recording stubs on PATH."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.clients.known import CLAUDE, CODEX, client_named
from kinetis_mcp_docs.installer.clients.registration import Registration
from kinetis_mcp_docs.installer.clients.scope import OtherScope, other_scope, other_than_user
from kinetis_mcp_docs.installer.commands.setup import register_replacing
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.layout import InstallLayout
from tests.support.clients import StubClient, install_stub

# A command the stub `claude mcp get` can really start: this checkout's server, offline.
SERVER_ARGV = [sys.executable, "-I", "-m", "kinetis_mcp_docs.server"]


@pytest.fixture
def stubs_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


def stub(kind: str, bin_dir: Path, **fail: str) -> StubClient:
    return install_stub(kind, bin_dir, bin_dir.parent / "state", fail=fail)


def test_no_argument_means_claude_code_and_codex_means_codex() -> None:
    assert client_named(None) is CLAUDE
    assert client_named("codex") is CODEX


def test_a_missing_cli_is_one_sentence_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.devnull)

    with pytest.raises(InstallerError) as error:
        CLAUDE.find_cli()

    assert error.value.message == (
        "The Claude Code CLI `claude` is not on PATH. Install Claude Code, make sure `claude` "
        "runs in this shell, and run setup again."
    )


def test_claude_code_gets_remove_then_add_at_user_scope_then_get(stubs_on_path: Path) -> None:
    claude = stub("claude", stubs_on_path)

    CLAUDE.register(os.fspath(claude.path), SERVER_ARGV, {})

    assert claude.calls() == [
        ["mcp", "remove", "kinetis-docs", "--scope", "user"],
        ["mcp", "add", "--scope", "user", "kinetis-docs", "--", *SERVER_ARGV],
        ["mcp", "get", "kinetis-docs"],
    ]
    assert claude.registrations()["kinetis-docs"]["command"] == sys.executable


def test_registering_with_claude_code_twice_replaces_the_registration(
    stubs_on_path: Path,
) -> None:
    claude = stub("claude", stubs_on_path)
    CLAUDE.register(os.fspath(claude.path), SERVER_ARGV, {})

    CLAUDE.register(os.fspath(claude.path), SERVER_ARGV, {})

    assert list(claude.registrations()) == ["kinetis-docs"]


def test_a_claude_remove_failing_for_another_reason_stops_registration(
    stubs_on_path: Path,
) -> None:
    claude = stub("claude", stubs_on_path, remove="Error: ~/.claude.json is not writable")

    with pytest.raises(InstallerError, match=r"could not remove the existing registration"):
        CLAUDE.register(os.fspath(claude.path), SERVER_ARGV, {})

    assert [call[1] for call in claude.calls()] == ["remove"]


def test_a_server_claude_code_cannot_connect_to_fails_loudly(stubs_on_path: Path) -> None:
    claude = stub("claude", stubs_on_path)

    with pytest.raises(InstallerError, match=r"rather than Connected"):
        CLAUDE.register(os.fspath(claude.path), ["/nonexistent/python", "-I"], {})


def test_a_claude_registration_read_back_with_another_command_fails_loudly(
    stubs_on_path: Path,
) -> None:
    claude = stub("claude", stubs_on_path)
    # A Claude Code that stores the command it was given with one argument dropped.
    claude.path.write_text(
        claude.path.read_text().replace('"args": launch[1:]', '"args": launch[2:]')
    )

    with pytest.raises(InstallerError) as error:
        CLAUDE.register(os.fspath(claude.path), SERVER_ARGV, {})

    assert error.value.message == (
        "Claude Code does not report the registration setup verified: it reports "
        f"`{shlex.join([SERVER_ARGV[0], *SERVER_ARGV[2:]])}`, not `{shlex.join(SERVER_ARGV)}`. "
        "Inspect it with `claude mcp get kinetis-docs` and run setup again."
    )


def test_codex_gets_remove_then_add_with_each_variable_before_the_name_then_get_json(
    stubs_on_path: Path,
) -> None:
    codex = stub("codex", stubs_on_path)
    env = {"HTTPS_PROXY": "http://proxy.internal:3128", "NO_PROXY": "localhost,.corp"}

    CODEX.register(os.fspath(codex.path), SERVER_ARGV, env)

    assert codex.calls() == [
        ["mcp", "remove", "kinetis-docs"],
        [
            "mcp",
            "add",
            "--env=HTTPS_PROXY=http://proxy.internal:3128",
            "--env=NO_PROXY=localhost,.corp",
            "kinetis-docs",
            "--",
            *SERVER_ARGV,
        ],
        ["mcp", "get", "kinetis-docs", "--json"],
    ]
    assert codex.registrations()["kinetis-docs"]["env"] == env


def test_codex_reading_back_another_environment_fails_loudly(stubs_on_path: Path) -> None:
    codex = stub("codex", stubs_on_path)
    codex.path.write_text(codex.path.read_text().replace('"env": entry.get("env")', '"env": None'))

    with pytest.raises(InstallerError) as error:
        CODEX.register(os.fspath(codex.path), SERVER_ARGV, {"SSL_CERT_FILE": "/ca.pem"})

    assert error.value.message == (
        "Codex does not report the registration setup verified: its environment holds [], "
        "not ['SSL_CERT_FILE']. Inspect it with `codex mcp get kinetis-docs` and run setup "
        "again."
    )


def test_codex_printing_no_json_is_a_plain_error(stubs_on_path: Path) -> None:
    codex = stub("codex", stubs_on_path)
    codex.path.write_text(
        codex.path.read_text().replace(
            "print(json.dumps(", "print('a table, not JSON') or (json.dumps("
        )
    )

    with pytest.raises(InstallerError, match=r"did not print JSON"):
        CODEX.register(os.fspath(codex.path), SERVER_ARGV, {})


def test_a_failing_codex_add_names_the_step_and_what_codex_said(stubs_on_path: Path) -> None:
    codex = stub("codex", stubs_on_path, add="Error: failed to write MCP servers")

    with pytest.raises(InstallerError) as error:
        CODEX.register(os.fspath(codex.path), SERVER_ARGV, {})

    assert error.value.message == (
        "Codex could not add the registration (`codex mcp add` exited with status 1: "
        "Error: failed to write MCP servers)."
    )


def test_codex_registers_the_proxy_certificate_and_pip_variables_set_and_nothing_else() -> None:
    environ = {
        "HTTPS_PROXY": "http://p:1",
        "https_proxy": "http://p:2",
        "http_proxy": "http://p:3",
        "ALL_PROXY": "socks5://p:4",
        "no_proxy": "localhost",
        "SSL_CERT_FILE": "/etc/corp-ca.pem",
        "SSL_CERT_DIR": "/etc/corp-certs",
        "PIP_INDEX_URL": "https://mirror.internal/simple",
        "PIP_FIND_LINKS": "/wheels",
        "PIP_NO_INDEX": "1",
        "PIP_TARGET": "/elsewhere",
        "HOME": "/home/u",
        "PATH": "/usr/bin",
        "AWS_SECRET_ACCESS_KEY": "secret",
    }

    registered = CODEX.registered_environment(environ)

    assert registered == {
        name: environ[name]
        for name in (
            "HTTPS_PROXY",
            "https_proxy",
            "http_proxy",
            "ALL_PROXY",
            "no_proxy",
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "PIP_INDEX_URL",
            "PIP_FIND_LINKS",
            "PIP_NO_INDEX",
        )
    }
    assert CLAUDE.registered_environment(environ) == {}


def test_codex_starts_the_server_with_its_short_list_plus_the_registered_variables() -> None:
    environ = {
        "HOME": "/home/u",
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "HTTPS_PROXY": "http://p:1",
        "EDITOR": "vi",
    }

    launched = CODEX.launch_environment(environ, CODEX.registered_environment(environ))

    assert launched == {
        "HOME": "/home/u",
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "HTTPS_PROXY": "http://p:1",
    }


def test_claude_code_starts_the_server_with_the_environment_it_inherited() -> None:
    environ = {"HOME": "/home/u", "EDITOR": "vi", "HTTPS_PROXY": "http://p:1"}

    assert CLAUDE.launch_environment(environ, {}) == environ


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_reading_back_a_registration_reports_its_command_and_that_none_exists_after_removal(
    stubs_on_path: Path, kind: str
) -> None:
    chosen = CLAUDE if kind == "claude" else CODEX
    cli = os.fspath(stub(kind, stubs_on_path).path)
    env = {} if chosen is CLAUDE else {"HTTPS_PROXY": "http://proxy.internal:3128"}
    assert chosen.registration(cli) is None

    chosen.register(cli, SERVER_ARGV, env)
    shown = chosen.registration(cli)

    assert shown is not None
    assert shown.argv == SERVER_ARGV
    assert shown.env == env
    assert chosen.unregister(cli) is True
    assert chosen.registration(cli) is None
    # Removing what is not there is no error, and says so.
    assert chosen.unregister(cli) is False


def test_claude_codes_read_back_carries_its_status_scope_and_environment(
    stubs_on_path: Path,
) -> None:
    claude = stub("claude", stubs_on_path)
    # A registration made by hand, with an environment of its own, as `claude mcp add -e`.
    claude.state.write_text(
        '{"kinetis-docs": {"command": "/opt/python", "args": ["-I", "-m", "x"], '
        '"env": {"HTTPS_PROXY": "http://p:1"}}}'
    )

    shown = CLAUDE.registration(os.fspath(claude.path))

    assert shown == Registration(
        command="/opt/python",
        args=["-I", "-m", "x"],
        env={"HTTPS_PROXY": "http://p:1"},
        status="✘ Failed to connect",
        scope="User config (available in all your projects)",
    )


def test_a_codex_remove_that_fails_stops_unregistering_with_what_codex_said(
    stubs_on_path: Path,
) -> None:
    codex = stub("codex", stubs_on_path, remove="Error: config.toml is read-only")

    with pytest.raises(InstallerError) as error:
        CODEX.unregister(os.fspath(codex.path))

    assert error.value.message == (
        "Codex could not remove the existing registration (`codex mcp remove` exited with "
        "status 1: Error: config.toml is read-only)."
    )


def test_codex_records_each_path_setting_absolute_and_leaves_urls_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", "/home/u")
    environ = {
        "SSL_CERT_FILE": "certs/ca.pem",
        "SSL_CERT_DIR": f"certs{os.pathsep}/etc/ssl/certs",
        "PIP_CERT": "~/mirror-ca.pem",
        "PIP_CLIENT_CERT": "client.pem",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_FIND_LINKS": "build/wheelhouse  https://wheels.internal/links file:///srv/wheels",
        "PIP_INDEX_URL": "https://mirror.internal/simple",
        "HTTPS_PROXY": "http://proxy:3128",
    }

    registered = CODEX.registered_environment(environ)

    assert registered == {
        "SSL_CERT_FILE": f"{tmp_path}/certs/ca.pem",
        "SSL_CERT_DIR": f"{tmp_path}/certs{os.pathsep}/etc/ssl/certs",
        "PIP_CERT": "/home/u/mirror-ca.pem",
        "PIP_CLIENT_CERT": f"{tmp_path}/client.pem",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_FIND_LINKS": (
            f"{tmp_path}/build/wheelhouse https://wheels.internal/links file:///srv/wheels"
        ),
        "PIP_INDEX_URL": "https://mirror.internal/simple",
        "HTTPS_PROXY": "http://proxy:3128",
    }


START = ["-I", "-m", "kinetis_mcp_docs.installer.start"]


@pytest.mark.parametrize(
    ("registration", "directory", "pages"),
    [
        (Registration("/opt/kd/current/bin/python", START), "/opt/kd", None),
        (
            Registration("/opt/kd/current/bin/python", [*START, "--docs-dir", "/src/docs"]),
            "/opt/kd",
            "/src/docs",
        ),
        # As Claude Code shows it: the arguments joined by spaces, split again.
        (
            Registration("/opt/kd/current/bin/python", [*START, "--docs-dir", "/my", "docs"]),
            "/opt/kd",
            "/my docs",
        ),
        (Registration("/opt/kd/envs/x/bin/python", START), None, None),
        (Registration("/opt/kd/current/bin/python", ["-m", "kinetis_mcp_docs.server"]), None, None),
        (Registration("docker", ["run", "-i", "kinetis/mcp-docs"]), None, None),
        (Registration("current/bin/python", START), None, None),
    ],
)
def test_a_registration_tells_which_install_directory_and_pages_it_runs_with(
    registration: Registration, directory: str | None, pages: str | None
) -> None:
    found = registration.install_directory
    assert (None if found is None else os.fspath(found)) == directory
    if directory is not None:
        assert registration.runs_from(Path(directory))
        assert not registration.runs_from(Path("/opt/other"))
        assert registration.pages == pages


def test_a_registration_through_a_linked_path_runs_the_directory_the_link_names(
    tmp_path: Path,
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    registration = Registration(os.fspath(tmp_path / "link" / "current" / "bin" / "python"), START)

    assert registration.runs_from(tmp_path / "real")
    assert not registration.runs_from(tmp_path)


@pytest.mark.parametrize(
    ("root", "pages"),
    [("/opt/one space/kd", "/src/my docs"), ("/opt/two  spaces/kd", "/src/two  spaces")],
)
def test_claude_codes_read_back_gives_the_installers_command_whole_whatever_spaces_it_holds(
    stubs_on_path: Path, root: str, pages: str
) -> None:
    claude = stub("claude", stubs_on_path)
    argv = InstallLayout(Path(root)).start_argv(Path(pages))
    claude.state.write_text(
        json.dumps({"kinetis-docs": {"command": argv[0], "args": argv[1:], "env": {}}})
    )

    shown = CLAUDE.registration(os.fspath(claude.path))

    assert shown is not None
    assert shown.argv == argv
    assert shown.install_directory == Path(root)
    assert shown.pages == pages


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_an_http_registration_reads_back_as_its_url_and_header_names_never_their_values(
    stubs_on_path: Path, kind: str
) -> None:
    cli = stub(kind, stubs_on_path)
    url = "https://docs.example.com/api/mcp"
    if kind == "claude":
        add = ["--transport", "http", "--scope", "user", "kinetis-docs", url]
        add += ["--header", "Authorization: Bearer s3cret"]
    else:
        add = ["kinetis-docs", "--url", url, "--bearer-token-env-var", "KINETIS_TOKEN"]
    subprocess.run([cli.path, "mcp", "add", *add], check=True, capture_output=True, timeout=60)

    shown = client_named(None if kind == "claude" else "codex").registration(os.fspath(cli.path))

    assert shown is not None
    assert shown.transport == ("http" if kind == "claude" else "streamable_http")
    assert shown.url == url
    assert shown.headers == ["Authorization"]
    assert not shown.is_stdio
    assert shown.install_directory is None
    assert "s3cret" not in repr(shown)
    assert shown.describe() == f"an HTTP registration of {url} (headers: Authorization)"


def test_client_clis_run_in_the_home_directory_not_in_a_project_with_a_registration_of_its_own(
    stubs_on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", os.fspath(home))
    monkeypatch.chdir(project)
    claude = stub("claude", stubs_on_path)
    claude.register_locally(project, {"command": "/opt/project/python", "args": [], "env": {}})
    cli = os.fspath(claude.path)

    assert CLAUDE.registration(cli) is None
    CLAUDE.register(cli, SERVER_ARGV, {})
    shown = CLAUDE.registration(cli)

    assert shown is not None
    assert shown.argv == SERVER_ARGV
    assert set(claude.directories()) == {os.path.realpath(home)}


def test_a_local_scope_registration_for_the_home_directory_is_named_with_how_to_remove_it(
    stubs_on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", os.fspath(home))
    claude = stub("claude", stubs_on_path)
    claude.register_locally(home, {"command": "/bin/true", "args": ["local"], "env": {}})
    cli = os.fspath(claude.path)

    shown = CLAUDE.registration(cli)

    assert shown is not None
    assert shown.scope_name == "local"
    found = other_scope(CLAUDE, shown)
    assert found == OtherScope(
        what=(
            f"Claude Code reports a local-scope kinetis-docs for {home}, which hides the "
            f"user-scope one there: sessions started in {home} run `/bin/true local`"
        ),
        remove=f"`claude mcp remove kinetis-docs --scope local`, run in {home}",
    )
    # Registering beside it cannot be read back: the local one is what Claude Code reports.
    with pytest.raises(InstallerError) as error:
        CLAUDE.register(cli, SERVER_ARGV, {})
    assert error.value.message.startswith(f"{found.what}. Remove it with {found.remove}, then")


@pytest.mark.parametrize(
    ("scope", "other"),
    [
        (None, False),
        ("User config (available in all your projects)", False),
        ("Local config (private to you in this project)", True),
        ("Project config (shared via .mcp.json)", True),
        ("Dynamic config", True),
    ],
)
def test_a_scope_is_another_than_user_by_its_first_word_as_claude_code_says_it(
    scope: str | None, other: bool
) -> None:
    assert other_than_user(scope) is other
    assert (other_scope(CLAUDE, Registration("/bin/true", scope=scope)) is not None) is other


def test_a_failing_codex_get_is_named_by_its_error_line_not_its_backtrace(
    stubs_on_path: Path,
) -> None:
    said = "Error: config.toml: invalid type\n\nStack backtrace:\n   0: <unknown>\n   1: <unknown>"
    codex = stub("codex", stubs_on_path, get=said)

    with pytest.raises(InstallerError) as error:
        CODEX.registration(os.fspath(codex.path))

    assert error.value.message == (
        "Codex could not read its kinetis-docs registration (`codex mcp get` exited with "
        "status 1: Error: config.toml: invalid type)."
    )


# Setup's own registration, as `codex mcp add` wrote it, then edited by hand in config.toml.
HAND_EDITED_CODEX_ENTRY = {
    "command": SERVER_ARGV[0],
    "args": SERVER_ARGV[1:],
    "env": {
        "HTTPS_PROXY": "http://proxy.internal:3128",
        "LOG_LEVEL": "debug",
        "GITHUB_TOKEN": "ghp_s3cret",
        "api_key": "k3y",
    },
    "env_vars": ["CORP_CA"],
    "cwd": "/srv/docs",
    "startup_timeout_sec": 30,
    "tool_timeout_sec": 7.5,
    "enabled_tools": ["kinetis_read_doc"],
    "disabled_tools": [],
}
DROPPED_BY_HAND = (
    "startup_timeout_sec = 30; tool_timeout_sec = 7.5; "
    'enabled_tools = ["kinetis_read_doc"]; disabled_tools = []; cwd = "/srv/docs"; '
    'env_vars = ["CORP_CA"]; env.GITHUB_TOKEN (value not shown); env.LOG_LEVEL = "debug"; '
    "env.api_key (value not shown)"
)


def test_codex_reads_back_the_settings_only_config_toml_holds_and_names_those_re_adding_drops(
    stubs_on_path: Path,
) -> None:
    codex = stub("codex", stubs_on_path)
    codex.state.write_text(json.dumps({"kinetis-docs": HAND_EDITED_CODEX_ENTRY}))

    shown = CODEX.registration(os.fspath(codex.path))

    assert shown is not None
    assert shown.settings == {
        "startup_timeout_sec": 30.0,
        "tool_timeout_sec": 7.5,
        "enabled_tools": ["kinetis_read_doc"],
        "disabled_tools": [],
        "cwd": "/srv/docs",
        "env_vars": ["CORP_CA"],
    }
    # HTTPS_PROXY is setup's own: it records it from its shell on every run.
    assert "; ".join(CODEX.dropped_settings(shown)) == DROPPED_BY_HAND
    assert "s3cret" not in DROPPED_BY_HAND
    assert "k3y" not in DROPPED_BY_HAND


def test_codex_setup_says_after_the_registration_line_which_hand_added_settings_it_drops(
    stubs_on_path: Path, tmp_path: Path
) -> None:
    codex = stub("codex", stubs_on_path)
    argv = InstallLayout(tmp_path).start_argv(None)
    entry = HAND_EDITED_CODEX_ENTRY | {"command": argv[0], "args": argv[1:]}
    codex.state.write_text(json.dumps({"kinetis-docs": entry}))
    cli = os.fspath(codex.path)
    env = {"HTTPS_PROXY": "http://proxy.internal:3128"}
    said: list[str] = []

    def setup_registers() -> None:
        existing = CODEX.registration(cli)
        register_replacing(CODEX, cli, argv, env, existing=existing, root=tmp_path, say=said.append)

    setup_registers()

    assert said == [
        "Registering kinetis-docs with Codex",
        (
            "Codex's kinetis-docs has settings added by hand that re-registering drops: "
            f"{DROPPED_BY_HAND}. Add them back to its entry in config.toml in CODEX_HOME "
            "(~/.codex unless set)"
        ),
    ]
    # What Codex holds now is what `codex mcp add` wrote: the hand-added settings are gone.
    assert CODEX.registration(cli) == Registration(command=argv[0], args=argv[1:], env=env)
    # Replacing setup's own registration, which holds nothing by hand, says nothing more.
    said.clear()
    setup_registers()
    assert said == ["Registering kinetis-docs with Codex"]


def test_a_codex_entry_turned_off_by_hand_is_turned_on_again_and_an_http_ones_timeouts_dropped(
    stubs_on_path: Path, tmp_path: Path
) -> None:
    # `enabled = false` was once among the settings to add back: added back, it kept the
    # server setup had just registered from ever starting, which `status` reports.
    codex = stub("codex", stubs_on_path)
    cli = os.fspath(codex.path)
    codex.state.write_text(
        json.dumps({"kinetis-docs": {"command": "docker", "args": [], "enabled": False}})
    )
    shown = CODEX.registration(cli)
    assert shown is not None
    assert CODEX.dropped_settings(shown) == []
    said: list[str] = []
    argv = InstallLayout(tmp_path).start_argv(None)
    register_replacing(CODEX, cli, argv, {}, existing=shown, root=tmp_path, say=said.append)
    assert said[0] == "Registering kinetis-docs with Codex"
    assert said[2:] == [
        (
            "Codex's kinetis-docs was turned off by hand (`enabled = false`); registering it "
            "again turns it on"
        )
    ]
    registered = CODEX.registration(cli)
    assert registered is not None
    assert "enabled" not in registered.settings

    codex.state.write_text(
        json.dumps(
            {"kinetis-docs": {"url": "https://docs.example.com/mcp", "tool_timeout_sec": 120}}
        )
    )
    shown = CODEX.registration(cli)
    assert shown is not None
    assert CODEX.dropped_settings(shown) == ["tool_timeout_sec = 120"]
    assert CLAUDE.dropped_settings(shown) == []


def test_claude_code_setup_says_which_environment_variables_added_by_hand_it_drops(
    stubs_on_path: Path, tmp_path: Path
) -> None:
    # Setup registers no variable with Claude Code (it starts the server with its own
    # environment), so each one the entry holds was added by hand, and re-adding drops it.
    claude = stub("claude", stubs_on_path)
    cli = os.fspath(claude.path)
    argv = SERVER_ARGV  # the stub starts it to report it Connected
    by_hand = ["-e", "LOG_LEVEL=debug", "-e", "GITHUB_TOKEN=ghp_s3cret", "-e", 'QUOTE=a "b"']
    added = subprocess.run(
        [cli, "mcp", "add", "--scope", "user", *by_hand, "kinetis-docs", "--", *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert added.returncode == 0, added.stderr
    said: list[str] = []

    def setup_registers() -> None:
        existing = CLAUDE.registration(cli)
        register_replacing(CLAUDE, cli, argv, {}, existing=existing, root=tmp_path, say=said.append)

    setup_registers()

    # (After a line saying the command it replaces is not this installer's: the stub's.)
    assert said[0] == "Registering kinetis-docs with Claude Code"
    assert said[-1] == (
        "Claude Code's kinetis-docs has settings added by hand that re-registering drops: "
        '"env": {"GITHUB_TOKEN": ...} (value not shown); "env": {"LOG_LEVEL": "debug"}; '
        '"env": {"QUOTE": "a \\"b\\""}. Add them back to its entry in ~/.claude.json'
    )
    assert "s3cret" not in "".join(said)
    assert claude.registrations()["kinetis-docs"]["env"] == {}
    # Replacing setup's own registration, which holds nothing by hand, says nothing more.
    said.clear()
    setup_registers()
    assert not [line for line in said if "added by hand" in line]
