-- The webhook logs become partitioned by month while they are written (issue 37), as call_attempts was
-- (its migrations 20261129100000..20261129100300, whose functions make and bound the months): this one
-- makes a partitioned twin of each of webhook_deliveries, webhook_events and webhook_messages and mirrors
-- every write into it; the next copies the rows in batches, each its own transaction; the third swaps the
-- names in one short transaction; the last drops the old tables. Each twin is partitioned by RANGE on its
-- UUIDv7 id (the service makes them with uuidv7(), the database with webhook_uuid_v7()), so each primary
-- key stays `id` alone and the retention run drops whole months.
-- Only webhook_deliveries has a unique rule without `id`, (source, event_key): the swap moves it to a
-- trigger that serialises a key's inserts. A message's event, in another table partitioned the same way,
-- stays a foreign key (to the partitioned table, added at the swap).

CREATE TABLE "webhook_deliveries_partitioned" (
    LIKE "webhook_deliveries" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION
) PARTITION BY RANGE ("id");
CREATE TABLE "webhook_events_partitioned" (
    LIKE "webhook_events" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION
) PARTITION BY RANGE ("id");
CREATE TABLE "webhook_messages_partitioned" (
    LIKE "webhook_messages" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION
) PARTITION BY RANGE ("id");

-- As for call_attempts: the old tables' indexes step aside, the twins' take their names (the non-unique
-- ones as they are), and the keys to other tables follow, but a message's key to its event, which the
-- swap adds to the partitioned events.
DO $$
DECLARE
  source text;
  index record;
  fk record;
BEGIN
  FOREACH source IN ARRAY ARRAY['webhook_deliveries', 'webhook_events', 'webhook_messages'] LOOP
    FOR index IN SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition, i.indisunique AS is_unique
                 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = source::regclass
    LOOP
      EXECUTE format('ALTER INDEX %I RENAME TO %I', index.name, index.name || '_old');
      IF NOT index.is_unique THEN
        EXECUTE regexp_replace(index.definition, ' ON \S+ USING ', format(' ON %I USING ', source || '_partitioned'));
      END IF;
    END LOOP;
    FOR fk IN SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
              WHERE conrelid = source::regclass AND contype = 'f' AND confrelid <> 'webhook_events'::regclass
    LOOP
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', source || '_partitioned', fk.conname, fk.definition);
    END LOOP;
  END LOOP;
END
$$;

ALTER TABLE "webhook_deliveries_partitioned" ADD CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id");
ALTER TABLE "webhook_events_partitioned" ADD CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id");
ALTER TABLE "webhook_messages_partitioned" ADD CONSTRAINT "webhook_messages_pkey" PRIMARY KEY ("id");
-- A provider's event is looked up by its key before it is recorded (the swap's trigger).
CREATE INDEX "webhook_deliveries_source_event_key_idx" ON "webhook_deliveries_partitioned"("source", "event_key");
-- An event's messages: the key's cascade, and whether a month of events is still referenced (retention).
CREATE INDEX "webhook_messages_event_id_idx" ON "webhook_messages_partitioned"("event_id");
-- The replays of a delivery (the bulk replay skips those replayed already). The same index may have been
-- made on the old table by an earlier migration, and then copied above.
CREATE INDEX IF NOT EXISTS "webhook_messages_replay_of_idx" ON "webhook_messages_partitioned"("replay_of") WHERE (replay_of IS NOT NULL);
-- The deliveries still pending, by id: whether a month of them may go (retention).
CREATE INDEX "webhook_messages_pending_idx" ON "webhook_messages_partitioned"("id") WHERE (state = 'pending');

CREATE TABLE "webhook_deliveries_default" PARTITION OF "webhook_deliveries_partitioned" DEFAULT;
CREATE TABLE "webhook_events_default" PARTITION OF "webhook_events_partitioned" DEFAULT;
CREATE TABLE "webhook_messages_default" PARTITION OF "webhook_messages_partitioned" DEFAULT;

-- A partition for each month from the oldest row of the last five years to the next month, and every
-- write of an old table written to its twin in the same transaction (as call_attempts_mirror did: an
-- update upserts, so that it waits for the copy's batch holding the row and then applies over it).
DO $do$
DECLARE
  source text;
  oldest uuid;
  month date;
  assignments text;
BEGIN
  FOREACH source IN ARRAY ARRAY['webhook_deliveries', 'webhook_events', 'webhook_messages'] LOOP
    EXECUTE format('SELECT id FROM %I WHERE id >= $1 AND id < $2 ORDER BY id LIMIT 1', source)
      INTO oldest USING uuidv7_floor(now() - interval '5 years'), uuidv7_floor(now());
    month := (date_trunc('month', coalesce(uuidv7_time(oldest), now()) AT TIME ZONE 'UTC'))::date;
    WHILE month <= (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month')::date LOOP
      PERFORM month_partition_add((source || '_partitioned')::regclass, source, month);
      month := (month + interval '1 month')::date;
    END LOOP;

    SELECT string_agg(format('%I = EXCLUDED.%I', attname, attname), ', ' ORDER BY attnum) INTO assignments
    FROM pg_attribute WHERE attrelid = source::regclass AND attnum > 0 AND NOT attisdropped AND attname <> 'id';
    EXECUTE format($function$
      CREATE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          DELETE FROM %I WHERE id = OLD.id;
        ELSE
          INSERT INTO %I SELECT NEW.* ON CONFLICT (id) DO UPDATE SET %s;
        END IF;
        RETURN NULL;
      END
      $body$$function$, source || '_mirror', source || '_partitioned', source || '_partitioned', assignments);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION %I()',
      source || '_mirror', source, source || '_mirror');
  END LOOP;
END
$do$;

-- The copy (next migration), table by table as call_attempts_copy did it: the rows in id order, a batch
-- per transaction, each batch holding its rows FOR KEY SHARE while it copies them (a delete waits for the
-- batch, then removes the copied row through the mirror); a deadlock costs the batch a second try.
CREATE PROCEDURE "webhook_logs_copy"(batch integer) LANGUAGE plpgsql AS $$
DECLARE
  source text;
  done uuid;
  upto uuid;
BEGIN
  FOREACH source IN ARRAY ARRAY['webhook_deliveries', 'webhook_events', 'webhook_messages'] LOOP
    done := '00000000-0000-0000-0000-000000000000';
    LOOP
      EXECUTE format('SELECT b.id FROM (SELECT id FROM %I WHERE id > $1 ORDER BY id LIMIT $2) AS b ORDER BY b.id DESC LIMIT 1', source)
        INTO upto USING done, batch;
      EXIT WHEN upto IS NULL;
      BEGIN
        EXECUTE format('WITH rows AS (SELECT * FROM %I WHERE id > $1 AND id <= $2 FOR KEY SHARE)
                        INSERT INTO %I SELECT * FROM rows ON CONFLICT (id) DO NOTHING', source, source || '_partitioned')
          USING done, upto;
        done := upto;
      EXCEPTION WHEN deadlock_detected THEN
        NULL;
      END;
      COMMIT;
    END LOOP;
  END LOOP;
END
$$;
