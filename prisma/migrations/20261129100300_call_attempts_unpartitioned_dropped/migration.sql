-- The keys into call_attempts are checked (reading the referencing rows under a lock that lets writers
-- on), the partitions' statistics gathered (autovacuum never analyzes a partitioned parent), and the old
-- table dropped: dropping its keys locks the tables they reference for a moment.
DO $$
DECLARE
  fk record;
BEGIN
  FOR fk IN SELECT conrelid::regclass AS owner, conname FROM pg_constraint
            WHERE confrelid = 'call_attempts'::regclass AND contype = 'f' AND NOT convalidated
  LOOP
    EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', fk.owner, fk.conname);
  END LOOP;
END
$$;

ANALYZE "call_attempts";

SELECT lock_or_wait('call_attempts_unpartitioned, users, campaigns, contacts, regional_rule_exemptions', 'ACCESS EXCLUSIVE');
DROP TABLE "call_attempts_unpartitioned";
