"""A name server that never answers, for one command run behind it.

`unshare --map-root-user --net --mount` gives the command a network of its own (loopback
only) and a mount namespace in which `/etc/resolv.conf` is a file naming 127.0.0.1, where a
UDP socket is bound that is never read: every name lookup waits out the resolver's own
timeouts (5 s, twice, by default), as on a network whose name server has gone silent.
Nothing outside the command is touched. Linux only; where namespaces are not permitted,
`BlackHoleUnavailable` says why.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

# Run as root of the new namespaces: bind the resolver file over /etc/resolv.conf, bring
# loopback up, bind the silent socket (kept open across the exec), then become the command.
_ENTER = r"""
import ctypes, fcntl, os, socket, struct, sys

resolv, argv = sys.argv[1], sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
if libc.mount(resolv.encode(), b"/etc/resolv.conf", None, 4096, None) != 0:  # MS_BIND
    sys.exit(f"cannot bind-mount {resolv} over /etc/resolv.conf: "
             f"{os.strerror(ctypes.get_errno())}")
ifreq = "16sH22x"  # struct ifreq: the name, then ifr_flags
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as control:
    flags = struct.unpack(ifreq, fcntl.ioctl(control, 0x8913, struct.pack(ifreq, b"lo", 0)))[1]
    fcntl.ioctl(control, 0x8914, struct.pack(ifreq, b"lo", flags | 1))  # IFF_UP
silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
silent.bind(("127.0.0.1", 53))
silent.set_inheritable(True)
os.execvp(argv[0], argv)
"""
# A lookup behind the black hole, with the resolver told to give up after one second:
# it must time out (EAI_AGAIN), which shows the lookup went to the silent socket.
_PROBE = (
    "import socket\n"
    "try:\n"
    "    socket.getaddrinfo('index.kinetis.test', 443)\n"
    "except socket.gaierror as error:\n"
    "    print(error.errno)\n"
)
_PROBE_TIMEOUT = 60.0
# Names nothing resolves but a name server: no /etc/hosts entry, no special-use suffix.
UNRESOLVED_INDEX = "https://index.kinetis.test/simple/"


class BlackHoleUnavailable(Exception):
    """This machine cannot run a command behind a private, silent name server."""


def black_hole_prefix(directory: Path) -> list[str]:
    """The argv prefix that runs a command behind a name server that never answers.

    Its files go to `directory`. Raises `BlackHoleUnavailable` with the reason where the
    namespaces cannot be made, or lookups there do not reach the name server.
    """
    directory.mkdir(parents=True, exist_ok=True)
    enter = directory / "enter.py"
    enter.write_text(_ENTER)
    resolv = directory / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\n")
    quick = directory / "resolv-quick.conf"
    quick.write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")

    def prefix(resolver: Path) -> list[str]:
        namespaces = ["unshare", "--map-root-user", "--net", "--mount"]
        return [*namespaces, sys.executable, "-I", os.fspath(enter), os.fspath(resolver)]

    probe = [*prefix(quick), sys.executable, "-I", "-c", _PROBE]
    try:
        found = subprocess.run(
            probe, capture_output=True, text=True, timeout=_PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BlackHoleUnavailable(f"cannot run unshare here: {error}") from error
    said = (found.stderr.strip().splitlines() or [""])[-1]
    if found.returncode != 0:
        raise BlackHoleUnavailable(f"no private network and mount namespaces here: {said}")
    if found.stdout.strip() != str(socket.EAI_AGAIN):
        raise BlackHoleUnavailable(
            "name lookups here do not go to /etc/resolv.conf's name server "
            f"(the probe printed {found.stdout.strip()!r})"
        )
    return prefix(resolv)
