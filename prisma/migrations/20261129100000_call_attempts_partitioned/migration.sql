-- call_attempts becomes partitioned by month while the dialer writes (issue 37), in four migrations: this
-- one makes the partitioned twin and mirrors every write of the table into it; the next copies the rows
-- in batches, each its own transaction; the third swaps the names in one short transaction; the last
-- drops the old table. The twin is partitioned by RANGE on the UUIDv7 id, which carries the time it was
-- made: a month's partition is the id range from that month's first UUIDv7 to the next month's, so the
-- primary key stays `id` alone. Ids outside every month made (not UUIDv7, or far off) go to the default
-- partition. A unique index of a partitioned table must hold the partition key, so the table's unique
-- rules without `id` change home: one call in flight per number moves to `live_calls` (the swap), the
-- provider's call id and (campaign, contact, attempt number) become plain indexes (their values are
-- unique by construction: the provider's, and the dial state's count under the contact's lock).

-- The first UUIDv7 of an instant (its millisecond, every other bit 0): a partition's bound.
CREATE FUNCTION "uuidv7_floor"(at timestamptz) RETURNS uuid LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-0000-0000-000000000000')::uuid
  FROM (SELECT lpad(to_hex(floor(extract(epoch FROM at) * 1000)::bigint), 12, '0') AS h) AS t
$$;

-- The instant a UUIDv7 was made: its first 48 bits, milliseconds since 1970.
CREATE FUNCTION "uuidv7_time"(id uuid) RETURNS timestamptz LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT to_timestamp(('x' || lpad(replace(left(id::text, 13), '-', ''), 16, '0'))::bit(64)::bigint / 1000.0)
$$;

-- Takes `tables` in `mode` without queueing writers behind a long wait: each try waits at most 100 ms
-- (statements arriving meanwhile wait behind it that long), then lets them through and tries again.
CREATE FUNCTION "lock_or_wait"(tables text, mode text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  previous text := current_setting('lock_timeout');
BEGIN
  PERFORM set_config('lock_timeout', '100ms', true);
  FOR attempt IN 1..3000 LOOP
    BEGIN
      EXECUTE format('LOCK TABLE %s IN %s MODE', tables, mode);
      PERFORM set_config('lock_timeout', previous, true);
      RETURN;
    EXCEPTION WHEN lock_not_available THEN
      PERFORM pg_sleep(least(attempt, 10) * 0.02);
    END;
  END LOOP;
  RAISE EXCEPTION 'could not lock % in % mode', tables, mode USING ERRCODE = 'lock_not_available';
END
$$;

-- Makes `parent`'s partition of the month starting `month` (UTC), named <prefix>_pYYYY_MM, unless it
-- exists; true when it made it. The new table is empty, so attaching it scans only the default
-- partition (for rows of that month, which make it fail) and locks the parent no more than its readers
-- and writers do.
CREATE FUNCTION "month_partition_add"(parent regclass, prefix text, month date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  name text := format('%s_p%s', prefix, to_char(month, 'YYYY_MM'));
BEGIN
  IF to_regclass(name) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION)', name, parent);
  EXECUTE format('ALTER TABLE %s ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, name,
    uuidv7_floor(month::timestamp AT TIME ZONE 'UTC'), uuidv7_floor((month + interval '1 month')::timestamp AT TIME ZONE 'UTC'));
  RETURN true;
END
$$;

CREATE TABLE "call_attempts_partitioned" (
    LIKE "call_attempts" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION
) PARTITION BY RANGE ("id");

-- The old table's indexes step aside (renaming one locks only the index); the twin's take their names.
DO $$
DECLARE
  index record;
  fk record;
BEGIN
  FOR index IN SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition, i.indisunique AS is_unique
               FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'call_attempts'::regclass
  LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', index.name, index.name || '_old');
    IF NOT index.is_unique THEN
      EXECUTE regexp_replace(index.definition, ' ON \S+ USING ', ' ON call_attempts_partitioned USING ');
    END IF;
  END LOOP;
  FOR fk IN SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
            WHERE conrelid = 'call_attempts'::regclass AND contype = 'f'
  LOOP
    EXECUTE format('ALTER TABLE call_attempts_partitioned ADD CONSTRAINT %I %s', fk.conname, fk.definition);
  END LOOP;
END
$$;

ALTER TABLE "call_attempts_partitioned" ADD CONSTRAINT "call_attempts_pkey" PRIMARY KEY ("id");
CREATE INDEX "call_attempts_provider_call_id_idx" ON "call_attempts_partitioned"("provider_call_id");
CREATE INDEX "call_attempts_campaign_id_contact_id_attempt_number_idx" ON "call_attempts_partitioned"("campaign_id", "contact_id", "attempt_number");
-- The calls in flight, for the dialer's lookups and sweeps (their one-per-number rule is live_calls').
CREATE INDEX "call_attempts_in_flight_idx" ON "call_attempts_partitioned"("user_id", "to_number") WHERE (status = ANY (ARRAY['queued'::"CallStatus", 'ringing'::"CallStatus", 'in_progress'::"CallStatus"]));

CREATE TABLE "call_attempts_default" PARTITION OF "call_attempts_partitioned" DEFAULT;

-- A partition for each month from the oldest call of the last five years to the next month; the
-- retention job keeps making them ahead.
DO $$
DECLARE
  month date := (date_trunc('month', coalesce(
    uuidv7_time((SELECT id FROM call_attempts WHERE id >= uuidv7_floor(now() - interval '5 years') AND id < uuidv7_floor(now()) ORDER BY id LIMIT 1)),
    now()) AT TIME ZONE 'UTC'))::date;
BEGIN
  WHILE month <= (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month')::date LOOP
    PERFORM month_partition_add('call_attempts_partitioned', 'call_attempts', month);
    month := (month + interval '1 month')::date;
  END LOOP;
END
$$;

-- Every write of the old table, written to the twin in the same transaction. An update upserts, so that
-- it waits for the copy's batch holding the row and then applies over it; a row the copy has not reached
-- is written here and the copy passes over it.
DO $do$
DECLARE
  assignments text;
BEGIN
  SELECT string_agg(format('%I = EXCLUDED.%I', attname, attname), ', ' ORDER BY attnum) INTO assignments
  FROM pg_attribute WHERE attrelid = 'call_attempts'::regclass AND attnum > 0 AND NOT attisdropped AND attname <> 'id';
  EXECUTE format($function$
    CREATE FUNCTION call_attempts_mirror() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        DELETE FROM call_attempts_partitioned WHERE id = OLD.id;
      ELSE
        INSERT INTO call_attempts_partitioned SELECT NEW.* ON CONFLICT (id) DO UPDATE SET %s;
      END IF;
      RETURN NULL;
    END
    $body$$function$, assignments);
END
$do$;

CREATE TRIGGER "call_attempts_mirror" AFTER INSERT OR UPDATE OR DELETE ON "call_attempts"
    FOR EACH ROW EXECUTE FUNCTION "call_attempts_mirror"();

-- The copy (next migration): the rows in id order, a batch per transaction. Each batch holds its rows
-- FOR KEY SHARE while it copies them: a delete waits for the batch (then removes the copied row through
-- the mirror), and a row deleted before the batch read it is not copied. A deadlock with a writer that
-- holds several of the batch's rows costs the batch a second try, not the migration.
CREATE PROCEDURE "call_attempts_copy"(batch integer) LANGUAGE plpgsql AS $$
DECLARE
  done uuid := '00000000-0000-0000-0000-000000000000';
  upto uuid;
BEGIN
  LOOP
    SELECT b.id INTO upto FROM (SELECT id FROM call_attempts WHERE id > done ORDER BY id LIMIT batch) AS b ORDER BY b.id DESC LIMIT 1;
    EXIT WHEN upto IS NULL;
    BEGIN
      WITH rows AS (SELECT * FROM call_attempts WHERE id > done AND id <= upto FOR KEY SHARE)
      INSERT INTO call_attempts_partitioned SELECT * FROM rows ON CONFLICT (id) DO NOTHING;
      done := upto;
    EXCEPTION WHEN deadlock_detected THEN
      -- A writer's transaction held rows of the batch in another order (it was let through): again.
      NULL;
    END;
    COMMIT;
  END LOOP;
END
$$;
