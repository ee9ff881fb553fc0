"""Negotiation of the Skills over MCP extension: the pinned draft and the Final text.

A request declaring the pinned ``revision`` gets the draft; one declaring the
extension without ``revision`` (or nothing, under ``PM_MCP_SKILLS=open``) gets
the Final text, with ``_meta`` keys under ``io.modelcontextprotocol.skills/``.
Another revision, or settings that are not an object, get -32021.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from pm_core.contracts import MISSING_REQUIRED_CLIENT_CAPABILITY, ProtocolError, RequestContext

#: The extension identifier under ``capabilities.extensions``.
SKILLS_EXTENSION_ID: Final = "io.modelcontextprotocol/skills"

#: The draft this server implements, byte for byte what draft clients must declare.
SKILLS_REVISION: Final = "SEP-2640@a3e147ca2710f68214247aecc729731ee1ae8d03"

#: What ``initialize`` and ``server/discover`` advertise for the extension.
#: Draft clients read ``revision``; Final clients read ``directoryRead`` and
#: ignore the rest (the Final text defines only that setting). A plain dict so
#: adapters can serialize or deep-copy it; hand out copies.
SKILLS_SERVER_CAPABILITY: Final[dict[str, Any]] = {
    "revision": SKILLS_REVISION,
    "status": "draft",
    "directoryRead": True,
}

#: MCP protocol versions the skills methods are served on (both eras).
MCP_PROTOCOL_VERSIONS: Final[tuple[str, ...]] = ("2025-06-18", "2025-11-25", "2026-07-28")

#: The message of the -32021 error; the data carries the precise requirement.
MISSING_CAPABILITY_MESSAGE: Final = "missing required client capability"

#: ``PM_MCP_SKILLS`` values: ``negotiated`` (default) serves only declared
#: clients; ``open`` also serves clients that declare nothing, per the Final text.
SKILLS_MODES: Final[tuple[str, ...]] = ("negotiated", "open")
SKILLS_MODE_OPTION: Final = "skills"

#: The ``_meta`` key prefix the Final text reserves on skill resources.
FINAL_META_PREFIX: Final = "io.modelcontextprotocol.skills/"

SkillsText = Literal["draft", "final"]


def client_skills_settings(request: RequestContext) -> Mapping[str, Any] | None:
    """The client's declared skills settings for this request, or None."""
    return request.extension(SKILLS_EXTENSION_ID)


def skills_text(request: RequestContext, directory_read: bool = False) -> SkillsText | None:
    """Which text this request is served under, or None when it is refused.

    ``directory_read=True`` asks for ``resources/directory/read``: the draft
    also requires the client's ``directoryRead: true``; the Final text puts no
    such requirement on clients (the server's declaration is what counts).
    """
    if SKILLS_EXTENSION_ID not in request.extensions:
        return "final" if request.options.get(SKILLS_MODE_OPTION) == "open" else None
    settings = client_skills_settings(request)
    if settings is None:
        return None  # declared, but not an object: malformed, never served
    if "revision" in settings:
        if settings.get("revision") != SKILLS_REVISION:
            return None
        if directory_read and settings.get("directoryRead") is not True:
            return None
        return "draft"
    return "final"


def negotiated(request: RequestContext, directory_read: bool = False) -> bool:
    """Whether this request is served skills under either text."""
    return skills_text(request, directory_read=directory_read) is not None


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


def assert_skills_capability(request: RequestContext, directory_read: bool = False) -> SkillsText:
    """The text ``request`` is served under; -32021 when it negotiated neither.

    ``directory_read=True`` is used by ``resources/directory/read``.
    Initialize-era adapters pass the settings declared at ``initialize``;
    2026-07-28 adapters pass the request's own.
    """
    text = skills_text(request, directory_read=directory_read)
    if text is None:
        raise missing_capability_error()
    return text


def final_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """``meta`` with every key under the Final text's reserved prefix."""
    return {
        key if key.startswith(FINAL_META_PREFIX) else FINAL_META_PREFIX + key: value
        for key, value in meta.items()
    }
