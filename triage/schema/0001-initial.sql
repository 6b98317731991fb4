-- SPDX-License-Identifier: GPL-2.0-only
-- refsweep triage database, schema version 1.
--
-- Decisions are never changed in place: a newer row for the same key
-- supersedes the older ones, and the history is every row of the key in
-- id order.  Machine verdicts are kept per recorded scan of a tree revision.

-- One recorded classification of a tree (or of part of it).
CREATE TABLE scans (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	tree_name   TEXT NOT NULL,          -- linux-6.12
	tree_path   TEXT NOT NULL,          -- where the source was read
	revision    TEXT NOT NULL,          -- git HEAD of the tree, or ''
	version     TEXT NOT NULL,          -- 6.12.118 from the Makefile
	recorded_at TEXT NOT NULL
);

-- The machine verdict of every variable of a scan.
CREATE TABLE machine (
	scan_id     INTEGER NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
	key         TEXT NOT NULL,
	verdict     TEXT NOT NULL,
	rule        TEXT NOT NULL,
	fingerprint TEXT NOT NULL REFERENCES evidence(fingerprint),
	decl        TEXT NOT NULL,          -- PATH:LINE
	area        TEXT NOT NULL,          -- the export file it belongs to
	record      TEXT NOT NULL,          -- the verdict record, JSON
	PRIMARY KEY (scan_id, key)
);

-- What a fingerprint covers: type, declaration texts, [op, function, use].
CREATE TABLE evidence (
	fingerprint TEXT PRIMARY KEY,
	summary     TEXT NOT NULL           -- JSON
);

CREATE TABLE decisions (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	key         TEXT NOT NULL,
	verdict     TEXT NOT NULL CHECK (verdict IN
	            ('refcount', 'usage', 'statistic', 'id', 'state', 'wraps')),
	fingerprint TEXT NOT NULL,          -- of the evidence decided on
	reviewer    TEXT NOT NULL,
	decided_at  TEXT NOT NULL,          -- ISO 8601, UTC
	reason      TEXT NOT NULL CHECK (reason <> ''),
	area        TEXT NOT NULL,
	origin      TEXT NOT NULL           -- set, next, import (not exported)
);
CREATE INDEX decisions_by_key ON decisions(key, id);

-- Imported decisions that disagree with the database's history of the
-- key; reported, never applied, until a new decision resolves them.
CREATE TABLE conflicts (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	key         TEXT NOT NULL,
	verdict     TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	reviewer    TEXT NOT NULL,
	decided_at  TEXT NOT NULL,
	reason      TEXT NOT NULL,
	area        TEXT NOT NULL,
	source      TEXT NOT NULL,          -- FILE:LINE it came from
	resolved_by INTEGER REFERENCES decisions(id)
);
CREATE INDEX conflicts_by_key ON conflicts(key);
