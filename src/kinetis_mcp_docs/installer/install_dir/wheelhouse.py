"""A source install's copy of its checkout's wheelhouse: its updates keep finding its
packages when the checkout moves or goes.

An install whose packages come from a checkout's wheelhouse alone (`nox -s
setup_from_source`, or the setup page's steps by hand: `PIP_NO_INDEX`, and
`CHECKOUT/build/wheelhouse` in `PIP_FIND_LINKS`) copies that wheelhouse into
`INSTALL/wheelhouse` (`copies.mirror`) before pip runs, and pip reads the copy from then
on: the recorded source names the copy, and the checkout's wheelhouse it is copied from.
Each update refreshes the copy first while the checkout's wheelhouse holds a wheel of this
package, so a wheelhouse built again there is taken as before; once it has gone, updates
read the copy, which holds what the install came from, and find nothing newer rather than
failing. Any other source (an index, a mirror, a wheelhouse of one's own) is used where it
is, as before: copying a mirror would hold more than an install needs.
"""

from __future__ import annotations

from pathlib import Path

from ..layout import InstallLayout
from .copies import copied_names, mirror
from .package_source import PackageSource

WHEEL_SUFFIX = ".whl"
# A wheel of this package: a wheelhouse without one is not taken to refresh the copy.
_OWN_WHEEL = "kinetis_mcp_docs-"


def hold_wheelhouse(layout: InstallLayout, source: PackageSource) -> PackageSource:
    """For a source install, the checkout's wheelhouse copied into the install and the
    source reading the copy; any other source as it is. `InstallerError` if the copy
    cannot be made."""
    origin = source.checkout_wheelhouse()
    if origin is None or source.copied_from is not None or not _has_own_wheel(origin):
        return source
    mirror(origin, layout.wheelhouse, WHEEL_SUFFIX)
    return source.reading(layout.wheelhouse, origin)


def refresh_wheelhouse(layout: InstallLayout, source: PackageSource) -> int | None:
    """At an update: the install's copy made again from the checkout's wheelhouse while it
    holds this package; how many wheels changed, or None when it was not refreshed."""
    origin = source.copied_from
    if origin is None or not _has_own_wheel(origin):
        return None
    return mirror(origin, layout.wheelhouse, WHEEL_SUFFIX)


def _has_own_wheel(wheelhouse: Path) -> bool:
    return any(name.startswith(_OWN_WHEEL) for name in copied_names(wheelhouse, WHEEL_SUFFIX))
