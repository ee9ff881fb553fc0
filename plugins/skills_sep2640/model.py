"""The immutable records a skill registry is made of.

A :class:`SkillFile` keeps the exact bytes it was hashed from; every read is
served from those bytes, so the digest a listing promises is the digest of
what ``resources/read`` returns, whatever happens on disk afterwards.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import json
from typing import Any, NamedTuple
from urllib.parse import quote

import attrs

from pm_core.contracts import ResourceContent, SkillOrigin

SCHEME = "skill://"
DIRECTORY_MIME = "inode/directory"
TRUST = "untrusted"

_MIME_BY_SUFFIX: dict[str, str] = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".html": "text/html",
    ".css": "text/css",
    ".js": "text/javascript",
    ".csv": "text/csv",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
}
#: Types served as ``blob`` even when their bytes happen to decode as UTF-8.
_BINARY_MIME = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"})
# RFC 3986 pchar minus "%" (so every "%" in a file name is encoded) plus "/".
_PATH_SAFE = "/-._~!$&'()*+,;=:@"


class RejectedSkill(NamedTuple):
    """A skill (or an origin's surplus) that was refused at load, and why."""

    name: str
    origin: str
    reason: str


class OverriddenSkill(NamedTuple):
    """A valid skill hidden by a same-named skill of a higher-precedence origin."""

    name: str
    origin: str
    by_origin: str


def file_uri(skill_name: str, rel: str) -> str:
    """``skill://<name>/<rel>`` with ``rel`` percent-encoded as a URI path."""
    return f"{SCHEME}{skill_name}/{quote(rel, safe=_PATH_SAFE)}"


def directory_uri(skill_name: str, rel: str) -> str:
    """The URI of a skill's root (``rel == ""``) or of one of its directories."""
    return f"{SCHEME}{skill_name}" + (f"/{quote(rel, safe=_PATH_SAFE)}" if rel else "")


def sha256_digest(data: bytes) -> str:
    """``sha256:`` and 64 lowercase hex digits of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8, decoded 1 MiB at a time.

    Checking in slices keeps the transient string small: the registry retains
    bytes only and decodes a file again when it is read.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    step = 1 << 20
    try:
        for start in range(0, len(view), step):
            decoder.decode(view[start : start + step])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _mime_type(rel: str) -> str | None:
    dot = rel.rfind(".")
    slash = rel.rfind("/")
    if dot <= slash + 1:
        return None
    return _MIME_BY_SUFFIX.get(rel[dot:].lower())


@attrs.frozen(slots=True)
class SkillFile:
    """One file of a skill, with the bytes its digest was computed from."""

    uri: str
    rel: str
    size: int
    digest: str
    mime_type: str
    #: Served as ``text`` (valid UTF-8, not a binary type) or as a ``blob``.
    is_text: bool
    data: bytes = attrs.field(repr=False)

    @classmethod
    def from_bytes(cls, skill_name: str, rel: str, data: bytes) -> SkillFile:
        """Hash ``data`` and decide once whether it is served as text or blob."""
        mime = _mime_type(rel)
        text = mime not in _BINARY_MIME and is_utf8(data)
        if mime is None:
            mime = "text/plain" if text else "application/octet-stream"
        return cls(
            uri=file_uri(skill_name, rel),
            rel=rel,
            size=len(data),
            digest=sha256_digest(data),
            mime_type=mime,
            is_text=text,
            data=data,
        )

    @property
    def name(self) -> str:
        """The file's own name (last path segment)."""
        return self.rel.rsplit("/", 1)[-1]

    def manifest_entry(self) -> dict[str, Any]:
        """The ``{uri, digest, size}`` entry of a skill's ``resources``."""
        return {"uri": self.uri, "digest": self.digest, "size": self.size}

    def content(self, origin: SkillOrigin) -> ResourceContent:
        """The ``resources/read`` content: ``text`` when UTF-8, else base64 ``blob``."""
        meta = {"digest": self.digest, "origin": origin.kind, "trust": TRUST}
        if self.is_text:
            text = self.data.decode("utf-8")
            return ResourceContent(self.uri, self.mime_type, text=text, meta=meta)
        blob = base64.b64encode(self.data).decode("ascii")
        return ResourceContent(self.uri, self.mime_type, blob=blob, meta=meta)


@attrs.frozen(slots=True)
class Skill:
    """One served skill: its frontmatter, files and origin."""

    name: str
    uri: str
    root_uri: str
    #: The frontmatter as canonical JSON text; parsed afresh for every result
    #: so no caller can mutate the registry's copy.
    frontmatter_json: str
    files: tuple[SkillFile, ...]
    directories: tuple[str, ...]
    origin: SkillOrigin

    @property
    def frontmatter(self) -> dict[str, Any]:
        """A fresh copy of the parsed frontmatter, in the author's key order."""
        value: dict[str, Any] = json.loads(self.frontmatter_json)
        return value

    @property
    def total_bytes(self) -> int:
        """Bytes summed over every file of the skill."""
        return sum(f.size for f in self.files)

    @property
    def skill_md(self) -> SkillFile:
        """The skill's ``SKILL.md`` file."""
        return next(f for f in self.files if f.uri == self.uri)
