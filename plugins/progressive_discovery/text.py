"""Deterministic text handling for discovery: tokens, stems and a small thesaurus.

Pure and offline: the same query ranks the same way on every machine.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

_WORD = re.compile(r"[a-z0-9]+")

#: Words that carry no intent. ``pm`` is in every tool name and every tracker
#: tool acts on an ``item``, so neither tells tools apart.
_STOPWORD_TEXT = """
    a an and any are as at be been but by can could did do does for from had has have
    how i if in into is it its just let me my of on or our please so some than that the
    their them then there these this those to us was we were what when where whether
    which will with would you your pm item items
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

# Suffixes stripped by :func:`stem`, longest first within each family so that
# "dependencies" and "dependency" meet, and "closing", "closed", "closes" and
# "close" all become "clos".
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ations", "ate"),
    ("ation", "ate"),
    ("ments", ""),
    ("ment", ""),
    ("ness", ""),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ers", ""),
    ("er", ""),
    ("ed", ""),
    ("es", ""),
    ("s", ""),
)
_NO_UNDOUBLE = frozenset("lsz")


def tokens(text: str) -> list[str]:
    """Lowercase alphanumeric tokens of ``text`` (``pm_close`` -> pm, close)."""
    return _WORD.findall(text.lower())


def content_tokens(text: str) -> list[str]:
    """Tokens of ``text`` without stopwords, in order, duplicates dropped."""
    seen: dict[str, None] = {}
    for tok in tokens(text):
        if tok not in STOPWORDS:
            seen.setdefault(tok, None)
    return list(seen)


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light, deterministic stem: common English suffixes and a final "e".

    Not a linguistic stemmer; it only has to map the inflections an agent is
    likely to type onto the words tool descriptions use.
    """
    base = word
    if len(word) > 3 and not word.endswith("ss"):
        for suffix, replacement in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                base = word[: -len(suffix)] + replacement
                break
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in _NO_UNDOUBLE:
        base = base[:-1]  # planning -> plann -> plan
    if len(base) > 3 and base.endswith("e"):
        base = base[:-1]
    return base


# Concept groups of the tracker's vocabulary. A query word and a tool word that
# share a group count as a synonym match. Kept small and domain-specific on
# purpose: broad groups would make every tool look relevant.
_THESAURUS: Mapping[str, str] = {
    "close": (
        "close finish finished complete completed done resolve resolution ship "
        "wrap end cancel canceled cancelled wontfix"
    ),
    "reopen": "reopen revive undo restore again",
    "claim": (
        "claim take grab assign assignee own owner ownership start pick lease hold "
        "held who working busy mine"
    ),
    "release": "release unclaim unassign abandon handoff hand relinquish drop",
    "create": "create add new file make capture report open raise track",
    "update": "update edit change modify set rename amend adjust revise",
    "search": "search find look lookup query locate mention mentions grep match keyword",
    "list": "list browse enumerate all overview filter backlog",
    "get": "get show read view fetch inspect detail details display",
    "next": (
        "next recommend recommendation suggest priority prioritize ready should todo pick work"
    ),
    "context": (
        "context orient orientation overview situation summary focus progress matter "
        "working status now current"
    ),
    "evidence": (
        "evidence proof prove record attach note comment test learning document doc link artifact"
    ),
    "test": "test tests verify verification check run pass fail result ci",
    "comment": "comment comments discuss discussion reply remark feedback conversation",
    "note": "note notes learning learnings lesson insight remember memo observation",
    "dependency": (
        "dependency dependencies depend block blocks blocker blocked blocking prerequisite "
        "relation relate related parent child link"
    ),
    "graph": (
        "graph tree ancestor descendant path cycle impact hierarchy structure critical "
        "centrality analysis"
    ),
    "plan": "plan step steps roadmap milestone schedule breakdown decompose approach",
    "history": (
        "history log audit past version timeline event events activity recent happened "
        "changed changes"
    ),
    "config": "config configure configuration option options preference",
    "schema": "schema type types status statuses field fields custom workflow",
    "health": "health doctor diagnose problem broken integrity drift repair corrupt",
    "validate": "validate validation check lint verify consistent consistency integrity",
    "surface": "profile tool tools surface capability capabilities available expose",
    "discover": "discover tool tools capability which how available intent",
    "copy": "copy clone duplicate template",
    "extension": "extension plugin run action package command custom",
    "transaction": "mutate mutation batch bulk transaction many atomic several multiple",
    "contract": "contract contracts machine spec interface api",
    "body": "append body text write description prose",
    "files": "file files path code source",
    "docs": "doc docs document documents documentation design",
}


#: The thesaurus concepts that speak of each capability family; a query whose
#: words fall in them is "about" the family (a weak graph signal).
FAMILY_CONCEPTS: Mapping[str, tuple[str, ...]] = {
    "orientation": ("context", "next", "search", "list", "get", "discover"),
    "lifecycle": ("close", "claim", "release", "reopen"),
    "authoring": ("create", "update", "copy", "transaction", "body"),
    "evidence": ("evidence", "test", "comment", "note", "files", "docs"),
    "graph": ("dependency", "graph"),
    "planning": ("plan",),
    "assurance": ("validate", "health"),
    "configuration": ("config", "schema", "surface", "contract"),
    "history": ("history",),
    "extensions": ("extension",),
}


def lexical_variants(word: str) -> tuple[str, ...]:
    """The word and its plain plural/singular forms, for literal matching."""
    variants = [word, word + "s"]
    if word.endswith("es") and len(word) > 4:
        variants.append(word[:-2])
    if word.endswith("s") and len(word) > 3:
        variants.append(word[:-1])
    else:
        variants.append(word + "es")
    return tuple(variants)


@functools.cache
def _stem_groups() -> Mapping[str, frozenset[str]]:
    groups: dict[str, set[str]] = {}
    for concept, words in _THESAURUS.items():
        for word in words.split():
            groups.setdefault(stem(word), set()).add(concept)
    return {s: frozenset(g) for s, g in groups.items()}


def concepts(stemmed: str) -> frozenset[str]:
    """The thesaurus groups a stemmed word belongs to (possibly none)."""
    return _stem_groups().get(stemmed, frozenset())
