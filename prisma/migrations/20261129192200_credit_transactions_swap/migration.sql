-- The swap, in one short transaction: the twin, now holding every row, becomes the ledger. Nothing here
-- reads the table's rows.
SELECT lock_or_wait('credit_transactions, credit_transactions_partitioned', 'ACCESS EXCLUSIVE');
SELECT live_partition_swap('credit_transactions');

-- A payment is credited once: a unique index of the partitioned ledger would have to hold its id, so
-- the insert of a payment's row (or a change of its provider id) takes a lock on that id for its
-- transaction and is refused, as the unique index refused it (a unique violation), when another row has
-- it. A concurrent insert of the same payment waits for that lock and then sees the committed row: each
-- statement here reads with a new snapshot in READ COMMITTED, the isolation every writer of the ledger
-- uses. Refused rather than skipped: the row is written in one statement with its account's change.
CREATE FUNCTION "credit_transactions_once"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('credit_transactions/' || NEW.external_id, 0));
  IF EXISTS (SELECT FROM credit_transactions WHERE external_id = NEW.external_id AND id <> NEW.id) THEN
    RAISE EXCEPTION 'payment % is in the ledger already', NEW.external_id
      USING ERRCODE = 'unique_violation', CONSTRAINT = 'credit_transactions_external_id_key';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "credit_transactions_once" BEFORE INSERT OR UPDATE OF "external_id" ON "credit_transactions"
    FOR EACH ROW WHEN (NEW.external_id IS NOT NULL) EXECUTE FUNCTION "credit_transactions_once"();
