-- A message's key to its event is checked partition by partition (reading the messages under a lock that
-- lets writers on), then given to the table, which adopts the partitions' checked keys without reading a
-- row; the old tables are dropped (dropping their keys locks webhook_endpoints for a moment). As for
-- call_attempts, the partitions' statistics are autovacuum's to gather.
DO $$
DECLARE
  partition regclass;
BEGIN
  FOR partition IN SELECT conrelid::regclass FROM pg_constraint
                   WHERE conname = 'webhook_messages_event_id_fkey' AND contype = 'f' AND NOT convalidated
  LOOP
    EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT "webhook_messages_event_id_fkey"', partition);
  END LOOP;
END
$$;

SELECT lock_or_wait('webhook_messages, webhook_events, webhook_deliveries_unpartitioned, webhook_events_unpartitioned, webhook_messages_unpartitioned, webhook_endpoints', 'ACCESS EXCLUSIVE');
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_event_id_fkey" FOREIGN KEY ("event_id")
    REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;
DROP TABLE "webhook_messages_unpartitioned";
DROP TABLE "webhook_events_unpartitioned";
DROP TABLE "webhook_deliveries_unpartitioned";
