-- The keys into call_attempts are checked (reading the referencing rows under a lock that lets writers
-- on), and the old table dropped: dropping its keys locks the tables they reference for a moment. The
-- partitions' statistics are autovacuum's to gather, as the copy's rows arrive: an ANALYZE here would
-- also record the months made ahead as empty, and plans would then read them whole once they are not.
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

SELECT lock_or_wait('call_attempts_unpartitioned, users, campaigns, contacts, regional_rule_exemptions', 'ACCESS EXCLUSIVE');
DROP TABLE "call_attempts_unpartitioned";
