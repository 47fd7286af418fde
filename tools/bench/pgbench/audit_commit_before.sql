-- docs/performance.md, session 46: one audit group commit of 4 records, the statements of PostgresAuditStore::Append
-- as on main e1dfda9 (run with pgbench -M extended: parsed and planned at every execution, as PQexecParams).
-- Needs audit_svc's audit_records and audit_head tables (postgres_audit_store.cc, migration 1).
\set r random(1, 1000000000000)
\set s0 :r * 4 + 0
\set s1 :r * 4 + 1
\set s2 :r * 4 + 2
\set s3 :r * 4 + 3
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT sequence, hash FROM audit_head WHERE id = 1 FOR UPDATE;
SELECT event_id, sequence, event_json FROM audit_records WHERE event_id IN (:s0, :s1, :s2, :s3);
INSERT INTO audit_records (sequence, event_id, type, outcome, namespace_id, trace_id, execution_id, reason, source, actor, at_micros, event_json, prev_hash, hash, recorded_at_micros) VALUES (:s0, :s0, 1, 1, 'world-demo', 'trace-replicas', 'exec-1', 'allowed', 1, 'agent-demo', 1, repeat('x', 1000), 'prevhash', 'hash', 1), (:s1, :s1, 1, 1, 'world-demo', 'trace-replicas', 'exec-1', 'allowed', 1, 'agent-demo', 1, repeat('x', 1000), 'prevhash', 'hash', 1), (:s2, :s2, 1, 1, 'world-demo', 'trace-replicas', 'exec-1', 'allowed', 1, 'agent-demo', 1, repeat('x', 1000), 'prevhash', 'hash', 1), (:s3, :s3, 1, 1, 'world-demo', 'trace-replicas', 'exec-1', 'allowed', 1, 'agent-demo', 1, repeat('x', 1000), 'prevhash', 'hash', 1);
UPDATE audit_head SET sequence = :s0, hash = 'h' WHERE id = 1;
COMMIT;
