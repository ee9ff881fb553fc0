"""Negotiation of the Skills over MCP extension, pinned to one draft revision.

A request that declares another revision is refused (-32021) rather than served
something it may misread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pm_core.contracts import MISSING_REQUIRED_CLIENT_CAPABILITY, ProtocolError, RequestContext

#: The extension identifier under ``capabilities.extensions``.
SKILLS_EXTENSION_ID: Final = "io.modelcontextprotocol/skills"

#: The draft this server implements, byte for byte what clients must declare.
SKILLS_REVISION: Final = "SEP-2640@a3e147ca2710f68214247aecc729731ee1ae8d03"

#: What ``initialize`` and ``server/discover`` advertise for the extension.
#: A plain dict so adapters can serialize or deep-copy it; hand out copies.
SKILLS_SERVER_CAPABILITY: Final[dict[str, Any]] = {
    "revision": SKILLS_REVISION,
    "status": "draft",
    "directoryRead": True,
}

#: MCP protocol versions the skills methods are served on (both eras).
MCP_PROTOCOL_VERSIONS: Final[tuple[str, ...]] = ("2025-06-18", "2025-11-25", "2026-07-28")

#: The message of the -32021 error; the data carries the precise requirement.
MISSING_CAPABILITY_MESSAGE: Final = "missing required client capability"


def client_skills_settings(request: RequestContext) -> Mapping[str, Any] | None:
    """The client's declared skills settings for this request, or None."""
    return request.extension(SKILLS_EXTENSION_ID)


def negotiated(request: RequestContext, directory_read: bool = False) -> bool:
    """Whether this request declared the pinned revision (and ``directoryRead``
    when ``directory_read`` is asked for)."""
    settings = client_skills_settings(request)
    if settings is None or settings.get("revision") != SKILLS_REVISION:
        return False
    return not directory_read or settings.get("directoryRead") is True


def missing_capability_error() -> ProtocolError:
    """The -32021 error whose data names the server's full setting."""
    return ProtocolError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        MISSING_CAPABILITY_MESSAGE,
        {
            "requiredCapabilities": {
                "extensions": {SKILLS_EXTENSION_ID: dict(SKILLS_SERVER_CAPABILITY)}
            }
        },
    )


def assert_skills_capability(request: RequestContext, directory_read: bool = False) -> None:
    """Raise -32021 unless ``request`` negotiated the pinned Skills draft.

    ``directory_read=True`` also requires ``directoryRead: true`` (used by
    ``resources/directory/read``). Initialize-era adapters pass the settings
    declared at ``initialize``; 2026-07-28 adapters pass the request's own.
    """
    if not negotiated(request, directory_read=directory_read):
        raise missing_capability_error()
