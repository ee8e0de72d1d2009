-- The swap, in one short transaction: the twin, now holding every row, becomes call_attempts. Nothing
-- here reads the table's rows but the calls in flight (by the old table's index of them).
SELECT lock_or_wait('call_attempts, call_attempts_partitioned, appointments, credit_holds, credit_transactions', 'ACCESS EXCLUSIVE');

DROP TRIGGER "call_attempts_mirror" ON "call_attempts";
DROP FUNCTION "call_attempts_mirror"();
DROP PROCEDURE "call_attempts_copy"(integer);
DROP TRIGGER "call_attempts_totals_insert" ON "call_attempts";
DROP TRIGGER "call_attempts_totals_update" ON "call_attempts";
DROP TRIGGER "call_attempts_totals_delete" ON "call_attempts";

-- The keys that reference call attempts follow them to the twin, NOT VALID so that the swap reads none
-- of their rows; the next migration validates them without blocking writers.
DO $$
DECLARE
  fk record;
BEGIN
  FOR fk IN SELECT conrelid::regclass AS owner, conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
            WHERE confrelid = 'call_attempts'::regclass AND contype = 'f'
  LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.owner, fk.conname);
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s NOT VALID', fk.owner, fk.conname,
      regexp_replace(fk.definition, 'REFERENCES \S+\(', 'REFERENCES call_attempts_partitioned('));
  END LOOP;
END
$$;

ALTER TABLE "call_attempts" RENAME TO "call_attempts_unpartitioned";
ALTER TABLE "call_attempts_partitioned" RENAME TO "call_attempts";

CREATE TRIGGER "call_attempts_totals_insert" AFTER INSERT ON "call_attempts"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "call_totals_add"();
CREATE TRIGGER "call_attempts_totals_update" AFTER UPDATE ON "call_attempts"
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "call_totals_add"();
CREATE TRIGGER "call_attempts_totals_delete" AFTER DELETE ON "call_attempts"
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "call_totals_add"();

-- One person, one call: never two calls in flight (queued, ringing, in_progress) to one number of a
-- customer, whatever the group or campaign. A unique index of the partitioned table would have to hold
-- its id, so the rule is this table's key, kept by triggers in the transaction of every change of an
-- attempt. The dialer's claim inserts here first with ON CONFLICT DO NOTHING and inserts the attempts
-- whose numbers it got; any other writer of an attempt in flight to a number already held is refused.
CREATE TABLE "live_calls" (
    "user_id" UUID NOT NULL,
    "to_number" VARCHAR(32) NOT NULL,
    "attempt_id" UUID NOT NULL,

    CONSTRAINT "live_calls_pkey" PRIMARY KEY ("user_id","to_number")
);

CREATE UNIQUE INDEX "live_calls_attempt_id_key" ON "live_calls"("attempt_id");

INSERT INTO "live_calls" ("user_id", "to_number", "attempt_id")
SELECT "user_id", "to_number", "id" FROM "call_attempts_unpartitioned"
WHERE "status" IN ('queued', 'ringing', 'in_progress') AND "to_number" IS NOT NULL;

-- Each statement's rows in flight hold their numbers (those held already by the same attempt count as
-- held); rows no longer in flight, or gone, let theirs go. Checked against the rows this transaction
-- sees whatever its isolation: its own, and those the insert met as conflicts.
CREATE FUNCTION "live_calls_keep"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  refused integer;
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM live_calls l USING old_rows o WHERE l.attempt_id = o.id;
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM live_calls l USING old_rows o WHERE l.attempt_id = o.id
      AND NOT EXISTS (SELECT FROM new_rows n WHERE n.id = o.id AND n.status IN ('queued', 'ringing', 'in_progress')
                        AND n.user_id = l.user_id AND n.to_number = l.to_number);
  END IF;
  WITH wanted AS (
    SELECT id, user_id, to_number FROM new_rows WHERE status IN ('queued', 'ringing', 'in_progress') AND to_number IS NOT NULL
  ), held AS (
    INSERT INTO live_calls (user_id, to_number, attempt_id) SELECT user_id, to_number, id FROM wanted
    ON CONFLICT DO NOTHING RETURNING attempt_id
  )
  SELECT count(*) INTO refused FROM wanted w
  WHERE NOT EXISTS (SELECT FROM held h WHERE h.attempt_id = w.id) AND NOT EXISTS (SELECT FROM live_calls l WHERE l.attempt_id = w.id);
  IF refused > 0 THEN
    RAISE EXCEPTION 'another call to this number is in flight' USING ERRCODE = 'unique_violation', CONSTRAINT = 'live_calls_pkey';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "live_calls_insert" AFTER INSERT ON "call_attempts"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "live_calls_keep"();
CREATE TRIGGER "live_calls_update" AFTER UPDATE ON "call_attempts"
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "live_calls_keep"();
CREATE TRIGGER "live_calls_delete" AFTER DELETE ON "call_attempts"
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "live_calls_keep"();
