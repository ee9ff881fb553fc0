"""The read index's SQLite schema (bump :data:`SCHEMA_VERSION` on any change)."""

from __future__ import annotations

import zlib

from pm_core.tracker.index.derived import STATEMENTS as DERIVED_STATEMENTS
from pm_core.tracker.index.rows import GROUPS, ITEM_COLUMNS
from pm_core.tracker.model.order import BASELINE_SQL, HIGH_LEVEL_TYPES

#: 2: group texts hold no NUL (\x01 instead), for the scorer's LIKE test.
#: 3: one FTS column per field group, with positions (counts without text).
#: 6: each entry's token count beside it, and the BM25 totals kept by triggers.
SCHEMA_VERSION = 6
#: Address space a connection maps the index file into: pages are read in
#: place instead of being copied through SQLite's page cache.
MMAP_BYTES = 1 << 30

_GROUP_COLUMNS = ", ".join(f"g_{g} TEXT" for g in GROUPS)
#: The high-level types as an SQL list. A query reaches ``entries_high`` only
#: when its filter spells the index's condition exactly, so both use this.
HIGH_TYPES_SQL = "(" + ",".join(f"'{t}'" for t in sorted(HIGH_LEVEL_TYPES)) + ")"
#: The FTS columns, one per field group, named as the ``docs`` columns.
FTS_COLUMNS: tuple[str, ...] = tuple(f"g_{g}" for g in GROUPS)
_FTS_COLUMNS = ", ".join(FTS_COLUMNS)

DDL = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- Per type folder: a digest of its listing (names and file stat data), and the
-- folder's own mtime and inode when that listing was taken.
CREATE TABLE folders(folder TEXT PRIMARY KEY, digest BLOB NOT NULL, dir_mtime INTEGER NOT NULL,
    dir_ino INTEGER NOT NULL);
CREATE TABLE racy(path TEXT PRIMARY KEY);
CREATE TABLE entries(
    rid INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    folder TEXT NOT NULL,
    name TEXT NOT NULL,
    frank INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    digest BLOB,
    error TEXT,
    hint TEXT,
    live INTEGER NOT NULL DEFAULT 0,
    -- The document's length (docs.ntokens), read beside the row a search joins anyway.
    ntokens INTEGER,
    id TEXT,
    type TEXT,
    status TEXT,
    priority INTEGER,
    tags TEXT,
    assignee TEXT,
    claim_principal TEXT,
    claim_expires_at TEXT,
    author TEXT,
    reviewer TEXT,
    parent_field TEXT,
    deadline TEXT,
    ord INTEGER,
    created_at TEXT,
    updated_at TEXT,
    title TEXT,
    title_lower TEXT,
    updated_epoch REAL,
    deadline_epoch REAL,
    risk_value REAL,
    activity INTEGER,
    knowledge INTEGER,
    agenda TEXT,
    -- Compact JSON bytes of the item's default `pm list` row without its parent
    -- (listing._row): a shrunk listing's receipt totals every row without building it.
    list_bytes INTEGER GENERATED ALWAYS AS (68 + length(CAST(json_quote(id) AS BLOB))
        + length(CAST(json_quote(title) AS BLOB)) + length(CAST(json_quote(type) AS BLOB))
        + length(CAST(json_quote(status) AS BLOB)) + length(CAST(json_quote(priority) AS BLOB))
        + length(CAST(json(tags) AS BLOB)) + length(CAST(json_quote(updated_at) AS BLOB))
        + CASE WHEN assignee IS NOT NULL AND assignee != ''
            THEN 12 + length(CAST(json_quote(assignee) AS BLOB)) ELSE 0 END) STORED
);
CREATE INDEX entries_folder ON entries(folder, name, size, mtime_ns, ino);
CREATE INDEX entries_id ON entries(id, live, status);
CREATE INDEX entries_live ON entries(live, status, type, id);
CREATE INDEX entries_corrupt ON entries(frank, name) WHERE error IS NOT NULL;
-- Items with an agenda by their soonest moment (stored first): the agenda of
-- ``context`` reads a handful of rows instead of every open item.
CREATE INDEX entries_agenda ON entries(json_extract(agenda, '$[0][0]'), id)
    WHERE agenda IS NOT NULL;
-- The next/context candidate pool: live items in the baseline order (order.py),
-- with every column the pool reads, so a pool is one ordered scan of this index:
-- no sort, and no table lookup per candidate.
CREATE INDEX entries_baseline ON entries(live, {BASELINE_SQL}, status, type, deadline,
    activity, knowledge, claim_principal, assignee, claim_expires_at, risk_value, author,
    reviewer, updated_epoch);
-- The high-level pool of `context` (a few percent of the items): read through
-- this instead of walking every live item in baseline order, then sorted.
CREATE INDEX entries_high ON entries(type, live, status) WHERE type IN {HIGH_TYPES_SQL};
-- `pm list`: its default order (indexed.ORDERS) read in order, and its row count
-- and JSON size totalled, from indexes alone.
CREATE INDEX entries_list_order ON entries(live, priority, updated_at || char(1114111) DESC, id,
    status);
CREATE INDEX entries_list_bytes ON entries(live, status, list_bytes);
-- The packed item, apart: scans of entries stay small and fast.
CREATE TABLE records(rid INTEGER PRIMARY KEY, record BLOB);
-- The length first: behind the group texts it would sit on overflow pages of a
-- long item (the stats triggers read it on delete).
CREATE TABLE docs(rid INTEGER PRIMARY KEY, ntokens INTEGER NOT NULL,
    title_tokens TEXT NOT NULL, {_GROUP_COLUMNS});
CREATE TABLE edges(
    owner INTEGER NOT NULL,
    phase INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    kind TEXT NOT NULL
);
CREATE INDEX edges_owner ON edges(owner);
CREATE INDEX edges_source ON edges(source, kind);
CREATE INDEX edges_target ON edges(target, kind);
CREATE TABLE parents(source TEXT PRIMARY KEY, target TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX parents_target ON parents(target);
CREATE TABLE hier_cycle(node TEXT PRIMARY KEY) WITHOUT ROWID;
-- One column per field group, with every occurrence (detail='full'): a query
-- token's count in each group of each document comes from the postings of the
-- terms containing it (fts_inst), without reading any text. Contentless: a
-- document's tokens are recomputed from its stored groups when it must be
-- deleted, so the text is stored once (in docs). No column sizes: nothing
-- here ranks with FTS5's own bm25().
CREATE VIRTUAL TABLE fts USING fts5({_FTS_COLUMNS}, content='', detail='full', columnsize=0, tokenize='ascii');
CREATE VIRTUAL TABLE fts_vocab USING fts5vocab(fts, row);
CREATE VIRTUAL TABLE fts_inst USING fts5vocab(fts, instance);
-- Every term the FTS index may hold (a superset: terms are added with documents and
-- trimmed on bulk rebuilds). Scanning fts_vocab decodes postings, this is a plain list.
CREATE TABLE vocab(term TEXT PRIMARY KEY) WITHOUT ROWID;
-- The document count and token total BM25 needs, kept by the triggers below.
CREATE TABLE doc_stats(one INTEGER PRIMARY KEY CHECK (one = 1), documents INTEGER NOT NULL,
    tokens INTEGER NOT NULL);
INSERT INTO doc_stats(one, documents, tokens) VALUES (1, 0, 0);
"""

#: Triggers keeping ``doc_stats`` equal to ``COUNT(*), SUM(ntokens)`` of ``docs``
#: (whose rows are only inserted and deleted): a search reads one row, not every document.
_STATS_TRIGGERS: tuple[str, ...] = (
    "CREATE TRIGGER docs_stats_ins AFTER INSERT ON docs BEGIN UPDATE doc_stats SET "
    "documents = documents + 1, tokens = tokens + new.ntokens; END",
    "CREATE TRIGGER docs_stats_del AFTER DELETE ON docs BEGIN UPDATE doc_stats SET "
    "documents = documents - 1, tokens = tokens - old.ntokens; END",
)

#: Stored in ``meta``: a database written by any other layout is rebuilt, even
#: when someone changed the DDL (or the stored columns) and forgot the number.
VERSION_TAG = f"{SCHEMA_VERSION}:{zlib.crc32((DDL + ','.join(ITEM_COLUMNS) + ';'.join((*_STATS_TRIGGERS, *DERIVED_STATEMENTS))).encode()):08x}"


#: ``(name, CREATE INDEX statement)`` of every secondary index, so a bulk build can
#: drop them and build each once after its rows are in.
def _statements(ddl: str) -> list[str]:
    """The DDL's statements without their comment lines (comments hold no ``;``)."""
    out = []
    for chunk in ddl.split(";"):
        lines = [ln for ln in chunk.splitlines() if not ln.strip().startswith("--")]
        text = "\n".join(lines).strip()
        if text:
            out.append(text)
    return out


#: Derived-fact tables and triggers (:mod:`pm_core.tracker.index.derived`) come last.
STATEMENTS: tuple[str, ...] = (*_statements(DDL), *_STATS_TRIGGERS, *DERIVED_STATEMENTS)
SECONDARY_INDEXES: tuple[tuple[str, str], ...] = tuple(
    (statement.split()[2], statement)
    for statement in STATEMENTS
    if statement.startswith("CREATE INDEX")
)
