-- docs/performance.md, session 46: one audit group commit of 4 records, the statements of PostgresAuditStore::Append
-- after the session's change (run with pgbench -M prepared; the arrays are built from the values here, bound in binary by the store).
-- Needs audit_svc's audit_records and audit_head tables (postgres_audit_store.cc, migration 1).
\set r random(1, 1000000000000)
\set s0 :r * 4 + 0
\set s1 :r * 4 + 1
\set s2 :r * 4 + 2
\set s3 :r * 4 + 3
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT sequence, hash FROM audit_head WHERE id = 1 FOR UPDATE;
SELECT event_id, sequence, event_json FROM audit_records WHERE event_id = ANY(ARRAY[:s0, :s1, :s2, :s3]::text[]);
WITH inserted AS (INSERT INTO audit_records (sequence, event_id, type, outcome, namespace_id, trace_id, execution_id, reason, source, actor, at_micros, event_json, prev_hash, hash, recorded_at_micros) SELECT r.*, 1::bigint FROM unnest(ARRAY[:s0, :s1, :s2, :s3]::bigint[], ARRAY[:s0, :s1, :s2, :s3]::text[], ARRAY[1, 1, 1, 1]::bigint[], ARRAY[1, 1, 1, 1]::bigint[], ARRAY['world-demo', 'world-demo', 'world-demo', 'world-demo']::text[], ARRAY['trace-replicas', 'trace-replicas', 'trace-replicas', 'trace-replicas']::text[], ARRAY['exec-1', 'exec-1', 'exec-1', 'exec-1']::text[], ARRAY['allowed', 'allowed', 'allowed', 'allowed']::text[], ARRAY[1, 1, 1, 1]::bigint[], ARRAY['agent-demo', 'agent-demo', 'agent-demo', 'agent-demo']::text[], ARRAY[1, 1, 1, 1]::bigint[], ARRAY[repeat('x', 1000), repeat('x', 1000), repeat('x', 1000), repeat('x', 1000)]::text[], ARRAY['prevhash', 'prevhash', 'prevhash', 'prevhash']::text[], ARRAY['hash', 'hash', 'hash', 'hash']::text[]) AS r) UPDATE audit_head SET sequence = :s0, hash = 'h' WHERE id = 1;
COMMIT;
