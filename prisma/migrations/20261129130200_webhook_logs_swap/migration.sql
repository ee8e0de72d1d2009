-- The swap, in one short transaction: the twins, now holding every row, become the webhook logs. Nothing
-- here reads the tables' rows.
SELECT lock_or_wait('webhook_deliveries, webhook_deliveries_partitioned, webhook_events, webhook_events_partitioned, webhook_messages, webhook_messages_partitioned', 'ACCESS EXCLUSIVE');

DROP TRIGGER "webhook_deliveries_mirror" ON "webhook_deliveries";
DROP TRIGGER "webhook_events_mirror" ON "webhook_events";
DROP TRIGGER "webhook_messages_mirror" ON "webhook_messages";
DROP FUNCTION "webhook_deliveries_mirror"();
DROP FUNCTION "webhook_events_mirror"();
DROP FUNCTION "webhook_messages_mirror"();
DROP PROCEDURE "webhook_logs_copy"(integer);

ALTER TABLE "webhook_deliveries" RENAME TO "webhook_deliveries_unpartitioned";
ALTER TABLE "webhook_events" RENAME TO "webhook_events_unpartitioned";
ALTER TABLE "webhook_messages" RENAME TO "webhook_messages_unpartitioned";
ALTER TABLE "webhook_deliveries_partitioned" RENAME TO "webhook_deliveries";
ALTER TABLE "webhook_events_partitioned" RENAME TO "webhook_events";
ALTER TABLE "webhook_messages_partitioned" RENAME TO "webhook_messages";

-- A message's event. A partitioned table cannot take a key NOT VALID (PostgreSQL 15), so each of the
-- messages' partitions takes it NOT VALID here, reading no row; the next migration validates them without
-- blocking writers and then adds it to the table, which adopts theirs. Both tables are partitioned the
-- same way: a month of events goes only once no message names one of them.
DO $$
DECLARE
  partition regclass;
BEGIN
  FOR partition IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'webhook_messages'::regclass LOOP
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT "webhook_messages_event_id_fkey" FOREIGN KEY ("event_id")
                    REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE CASCADE NOT VALID', partition);
  END LOOP;
END
$$;

-- A provider's event is recorded once: a unique index of the partitioned table would have to hold its
-- id, so a delivery's insert takes a lock on its key for its transaction and is skipped (no row, as ON
-- CONFLICT DO NOTHING) when the key is recorded already. A concurrent insert of the same key waits for
-- that lock and then sees the committed row: each statement here reads with a new snapshot in READ
-- COMMITTED, the isolation every writer of deliveries uses.
CREATE FUNCTION "webhook_deliveries_once"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('webhook_deliveries/' || NEW.source || '/' || NEW.event_key, 0));
  IF EXISTS (SELECT FROM webhook_deliveries WHERE source = NEW.source AND event_key = NEW.event_key) THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "webhook_deliveries_once" BEFORE INSERT ON "webhook_deliveries"
    FOR EACH ROW EXECUTE FUNCTION "webhook_deliveries_once"();
