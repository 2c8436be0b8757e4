"""Environments of an install directory: build, check, switch, prune.

These run without the wheelhouse: what pip does with a real index is covered end to end.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import time
from pathlib import Path

import pytest

from kinetis_mcp_docs import __version__
from kinetis_mcp_docs.installer.envs import build as environment
from kinetis_mcp_docs.installer.envs.build import (
    Interpreter,
    base_interpreter,
    build_environment,
    probe_interpreter,
    running_pip_supports_python_option,
)
from kinetis_mcp_docs.installer.envs.built import hold
from kinetis_mcp_docs.installer.envs.candidate import Candidate
from kinetis_mcp_docs.installer.envs.links import (
    current_environment,
    previous_environment,
    prune,
    switch_to,
)
from kinetis_mcp_docs.installer.envs.metadata import installed_version
from kinetis_mcp_docs.installer.envs.pip import pip_runner
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.layout import InstallLayout


@pytest.fixture
def layout(tmp_path: Path) -> InstallLayout:
    root = tmp_path / "install"
    (root / "envs").mkdir(parents=True)
    return InstallLayout(root)


# Names as `environment.new_name` makes them: the only ones prune may remove.
A, B, STALE = (f"20250101T00000{digit}-0000000{digit}" for digit in "123")


def fake_env(layout: InstallLayout, name: str, *, version: str = "1.0.0") -> Path:
    env = layout.envs / name
    site = env / "lib" / "python3.11" / "site-packages"
    info = site / f"kinetis_mcp_docs-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: kinetis-mcp-docs\nVersion: {version}\n"
    )
    return env


def test_the_first_switch_points_current_at_the_environment_by_a_relative_link(
    layout: InstallLayout,
) -> None:
    env = fake_env(layout, A)

    switch_to(layout, env)

    assert layout.current.readlink() == Path("envs", A)
    assert current_environment(layout) == env
    assert previous_environment(layout) is None
    assert not layout.previous.exists()


def test_a_switch_keeps_the_one_before_as_previous_and_removes_every_other_environment(
    layout: InstallLayout,
) -> None:
    a = fake_env(layout, A)
    switch_to(layout, a)
    # What a killed build and a killed switch leave behind.
    b, stale = fake_env(layout, B), fake_env(layout, STALE)
    (layout.root / "current.tmp-dead").symlink_to(f"envs/{STALE}")

    switch_to(layout, b)

    assert layout.current.readlink() == Path("envs", B)
    assert layout.previous.readlink() == Path("envs", A)
    assert sorted(path.name for path in layout.envs.iterdir()) == [A, B]
    assert not stale.exists()
    assert not (layout.root / "current.tmp-dead").is_symlink()
    assert installed_version(layout) == "1.0.0"


def test_switching_to_the_current_environment_again_keeps_previous(
    layout: InstallLayout,
) -> None:
    switch_to(layout, fake_env(layout, A))
    b = fake_env(layout, B)
    switch_to(layout, b)

    switch_to(layout, b)

    assert layout.previous.readlink() == Path("envs", A)
    assert sorted(path.name for path in layout.envs.iterdir()) == [A, B]


def test_an_environment_outside_envs_cannot_be_switched_to(
    layout: InstallLayout, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="is not an environment of"):
        switch_to(layout, tmp_path)


def test_a_current_link_pointing_outside_envs_counts_as_no_environment(
    layout: InstallLayout, tmp_path: Path
) -> None:
    layout.current.symlink_to(tmp_path)

    assert current_environment(layout) is None
    assert installed_version(layout) is None


def test_a_current_link_remade_absolute_counts_as_the_environment_it_names(
    layout: InstallLayout,
) -> None:
    env = fake_env(layout, A, version="1.0.1")
    layout.current.symlink_to(env)  # what `ln -sfn "$PWD/envs/..." current` makes

    assert current_environment(layout) == env
    assert installed_version(layout) == "1.0.1"


def test_an_absolute_link_through_the_install_directorys_resolved_path_counts_too(
    tmp_path: Path,
) -> None:
    real = InstallLayout(tmp_path / "real")
    env = fake_env(real, A)
    (tmp_path / "linked").symlink_to(real.root)
    layout = InstallLayout(tmp_path / "linked")
    layout.previous.symlink_to(env)  # named by the path the link resolves to

    assert previous_environment(layout) == layout.envs / A


def test_a_switch_from_a_current_link_remade_absolute_keeps_its_environment_as_previous(
    layout: InstallLayout,
) -> None:
    a = fake_env(layout, A)
    layout.current.symlink_to(a)
    b = fake_env(layout, B)

    switch_to(layout, b)

    # The environment that served is the rollback, never pruned as a stray.
    assert a.is_dir()
    assert layout.previous.readlink() == Path("envs", A)
    assert layout.current.readlink() == Path("envs", B)


def test_an_absolute_link_to_another_installs_environment_counts_as_no_environment(
    layout: InstallLayout, tmp_path: Path
) -> None:
    fake_env(layout, A)
    other = fake_env(InstallLayout(tmp_path / "other"), A)
    layout.current.symlink_to(other)
    layout.previous.symlink_to(layout.envs / "sub" / ".." / A)

    assert current_environment(layout) is None
    assert previous_environment(layout) is None


def test_a_current_link_to_an_environment_that_is_itself_a_link_counts_as_no_environment(
    layout: InstallLayout, tmp_path: Path
) -> None:
    (layout.envs / A).symlink_to(fake_env(InstallLayout(tmp_path / "other"), A))
    layout.current.symlink_to(Path("envs", A))

    assert current_environment(layout) is None


def test_prune_removes_only_environments_it_built_and_leaves_everything_else_in_envs(
    layout: InstallLayout, tmp_path: Path
) -> None:
    switch_to(layout, fake_env(layout, A))
    stale = fake_env(layout, STALE)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "keep.txt").parent.mkdir()
    (elsewhere / "keep.txt").write_text("mine\n")
    (layout.envs / "notes").mkdir()
    (layout.envs / "README").write_text("mine\n")
    # A link under an environment's name: removing it is not proof of anything.
    (layout.envs / B).symlink_to(elsewhere)

    prune(layout)

    assert not stale.exists()
    assert sorted(path.name for path in layout.envs.iterdir()) == sorted([A, B, "README", "notes"])
    assert (elsewhere / "keep.txt").read_text() == "mine\n"


def test_prune_leaves_an_environment_that_a_byte_compile_still_holds(
    layout: InstallLayout,
) -> None:
    switch_to(layout, fake_env(layout, A))
    compiling = fake_env(layout, STALE)
    held = hold(compiling, wait=False)
    assert held is not None
    try:
        prune(layout)
        assert compiling.is_dir()
    finally:
        os.close(held)

    prune(layout)
    assert not compiling.exists()


def test_prune_follows_no_envs_that_is_a_symlink(layout: InstallLayout, tmp_path: Path) -> None:
    virtualenvs = tmp_path / "virtualenvs"
    (virtualenvs / STALE).mkdir(parents=True)
    layout.envs.rmdir()
    layout.envs.symlink_to(virtualenvs)

    prune(layout)

    assert (virtualenvs / STALE).is_dir()


def test_the_installed_version_is_read_from_the_current_environments_metadata(
    layout: InstallLayout,
) -> None:
    switch_to(layout, fake_env(layout, A, version="1.4.2"))

    assert installed_version(layout) == "1.4.2"


def test_a_build_pip_cannot_satisfy_raises_and_leaves_no_partial_environment(
    layout: InstallLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [name for name in os.environ if name.startswith("PIP_")]:
        monkeypatch.delenv(name)
    (tmp_path / "no-wheels").mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", os.fspath(tmp_path / "no-wheels"))

    with pytest.raises(InstallerError) as error:
        build_environment(layout, ["kinetis-mcp-docs>=1.0,<2"], deadline=None)

    assert error.value.message.startswith("Could not install kinetis-mcp-docs: pip exited")
    assert list(layout.envs.iterdir()) == []


@pytest.mark.interpreter
@pytest.mark.parametrize("way", ["pip-runner", "pip --python", "ensurepip"])
def test_a_build_installs_the_newest_release_whichever_way_this_pythons_pip_allows(
    layout: InstallLayout,
    wheelhouse_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    way: str,
) -> None:
    # The running pip fills the new environment through its runner script when it has one,
    # through `pip --python` when that script is missing, and an older pip leaves it to the
    # pip `ensurepip` puts into the environment.
    for name in [name for name in os.environ if name.startswith("PIP_")]:
        monkeypatch.delenv(name)
    for name, value in wheelhouse_env.items():
        monkeypatch.setenv(name, value)
    if way == "pip-runner":
        assert pip_runner() is not None
    elif way == "pip --python":
        monkeypatch.setattr(environment, "pip_runner", lambda: None)
    else:
        monkeypatch.setattr(environment, "running_pip_supports_python_option", lambda: False)

    env = build_environment(layout, ["--quiet", "kinetis-mcp-docs>=1.0,<2"], deadline=None)

    assert env.parent == layout.envs
    assert Candidate(layout, env, None).check(deadline=time.monotonic() + 60) == "1.0.1"
    # The environment has a pip of its own, to build its successor with.
    assert list((env / "lib").glob("python3.*/site-packages/pip/__init__.py"))


@pytest.mark.interpreter
def test_a_build_under_umask_0_makes_an_environment_no_other_user_can_write(
    layout: InstallLayout, wheelhouse_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [name for name in os.environ if name.startswith("PIP_")]:
        monkeypatch.delenv(name)
    for name, value in wheelhouse_env.items():
        monkeypatch.setenv(name, value)
    layout.envs.rmdir()
    before = os.umask(0)
    try:
        env = build_environment(layout, ["--quiet", "kinetis-mcp-docs==1.0.0"], deadline=None)
    finally:
        os.umask(before)

    assert stat.S_IMODE(layout.envs.stat().st_mode) == 0o755
    assert stat.S_IMODE(env.stat().st_mode) == 0o755
    writable = [
        path
        for path in env.rglob("*")
        if not path.is_symlink() and path.lstat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    ]
    assert writable == []


def test_a_build_past_its_deadline_raises_and_leaves_nothing(layout: InstallLayout) -> None:
    with pytest.raises(InstallerError, match="deadline"):
        build_environment(layout, ["kinetis-mcp-docs"], deadline=time.monotonic() - 1)

    assert list(layout.envs.iterdir()) == []


def test_a_build_given_the_interpreter_setup_found_probes_it_no_more(
    layout: InstallLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    def probed() -> Interpreter:
        raise AssertionError("the interpreter was probed again")

    monkeypatch.setattr(environment, "probe_interpreter", probed)
    found = Interpreter(base_interpreter(), own_pip=True)

    with pytest.raises(InstallerError, match="deadline"):
        build_environment(
            layout, ["kinetis-mcp-docs"], deadline=time.monotonic() - 1, interpreter=found
        )


def test_the_probed_interpreter_is_the_base_one_with_what_the_running_pip_can_do() -> None:
    assert probe_interpreter() == Interpreter(
        base_interpreter(), running_pip_supports_python_option()
    )


def test_a_check_of_an_environment_whose_server_fails_names_the_file_holding_its_stderr(
    layout: InstallLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", os.fspath(tmp_path))
    env = layout.envs / "broken"
    (env / "bin").mkdir(parents=True)
    python = env / "bin" / "python"
    python.write_text(
        f"#!{sys.executable}\nimport sys\nsys.exit('ModuleNotFoundError: no module named httpx')\n"
    )
    python.chmod(0o755)

    with pytest.raises(InstallerError) as error:
        Candidate(layout, env, None).check(deadline=None)

    (kept,) = tmp_path.glob("kinetis-docs-server-*.log")
    assert error.value.message == (
        "The new environment's server failed its check: initialize got no response before "
        f"the server exited with status 1. The server's stderr is in {kept}."
    )
    assert kept.read_text() == "ModuleNotFoundError: no module named httpx\n"


def test_a_check_of_a_working_environment_returns_its_servers_version(
    layout: InstallLayout,
) -> None:
    # The environment running the tests has the server installed: stand in for it.
    env = layout.envs / "running"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (env / "bin" / "python").chmod(0o755)

    assert Candidate(layout, env, None).check(deadline=time.monotonic() + 30) == __version__


def test_new_environments_are_made_from_a_base_interpreter_not_a_virtual_environments() -> None:
    base = base_interpreter()

    assert base.is_file()
    assert not base.is_relative_to(sys.prefix) or sys.prefix == sys.base_prefix
