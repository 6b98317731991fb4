-- SPDX-License-Identifier: GPL-2.0-only
-- refsweep triage database, schema version 2: runtime evidence.
--
-- What an overflow forecast (refsweep forecast --triage DB) saw: one row
-- per workload log read, and per counter and call site how fast the
-- workload drove the counter and when it would overflow.  A counter with
-- runtime evidence is a triage item until a human decides on it after
-- the evidence was first recorded (Documentation/forecast.rst).

CREATE TABLE runtime_runs (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	log         TEXT NOT NULL,          -- the workload log read
	vmlinux     TEXT NOT NULL,
	tree_name   TEXT NOT NULL,          -- the verdicts' tree
	seconds     REAL,                   -- between the two dumps, or NULL
	uptime_s    REAL NOT NULL,          -- at the end dump
	recorded_at TEXT NOT NULL
);

CREATE TABLE runtime (
	run_id      INTEGER NOT NULL REFERENCES runtime_runs(id)
	            ON DELETE CASCADE,
	key         TEXT NOT NULL,
	site        TEXT NOT NULL,          -- %pS of the call site
	location    TEXT NOT NULL,          -- PATH:LINE, '' if unknown
	match       TEXT NOT NULL,          -- exact or near
	bits        INTEGER NOT NULL,
	magnitude   INTEGER NOT NULL,       -- largest |value| at the end
	changes     INTEGER NOT NULL,
	decreases   INTEGER NOT NULL,
	rate        REAL NOT NULL,          -- magnitude per second
	overflow_s  REAL,                   -- projected uptime, NULL: never
	PRIMARY KEY (run_id, key, site)
);
CREATE INDEX runtime_by_key ON runtime(key);
