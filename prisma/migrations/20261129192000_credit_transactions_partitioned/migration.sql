-- The ledger, credit_transactions, becomes partitioned by month while it is written (issue 37), as
-- call_attempts and the webhook logs were (migrations 20261129100000.. and 20261129130000..): this one
-- makes the partitioned twin and mirrors every write into it; the next copies the rows in batches, each
-- its own transaction; the third swaps the names in one short transaction; the last drops the old table.
-- The twin is partitioned by RANGE on its UUIDv7 id (uuidv7() in the service, uuid(7) in Prisma), so the
-- primary key stays `id` alone. Its one unique rule without `id`, a payment's `external_id`, moves at the
-- swap to a trigger that serialises a payment's inserts. Nothing references the ledger; its keys to
-- users, campaigns and calls are the twin's from the start (checked row by row as it fills).
--
-- The steps are functions of the table's name, for the ledger here and the other tables kept by month
-- after it (dial_blocks, campaign_changes): one definition of the live conversion.

-- The twin `<source>_partitioned`: the old table's indexes step aside (renaming one locks only the
-- index) and the twin's take their names, the unique ones but the primary key left to the caller (a
-- partitioned table's unique index must hold `id`); its keys to other tables; the default partition and
-- a partition for each month from the oldest row of the last five years to the next month. `oldest` is
-- the instant the first month starts from (the caller finds it: by id, or by time where ids are not all
-- UUIDv7). Reads the table only through the caller's `oldest`; locks nothing writers need.
CREATE FUNCTION "live_partition_twin"(source text, oldest timestamptz) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  twin text := source || '_partitioned';
  index record;
  fk record;
  month date := (date_trunc('month', coalesce(oldest, now()) AT TIME ZONE 'UTC'))::date;
BEGIN
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION) PARTITION BY RANGE ("id")',
    twin, source);
  FOR index IN SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition, i.indisunique AS is_unique
               FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = source::regclass
  LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', index.name, index.name || '_old');
    IF NOT index.is_unique THEN
      EXECUTE regexp_replace(index.definition, ' ON \S+ USING ', format(' ON %I USING ', twin));
    END IF;
  END LOOP;
  -- (A key to a partitioned table has a row for each of its partitions too, made with the key: conparentid.)
  FOR fk IN SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
            WHERE conrelid = source::regclass AND contype = 'f' AND conparentid = 0 LOOP
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', twin, fk.conname, fk.definition);
  END LOOP;
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY ("id")', twin, source || '_pkey');
  EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', source || '_default', twin);
  WHILE month <= (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month')::date LOOP
    PERFORM month_partition_add(twin::regclass, source, month);
    month := (month + interval '1 month')::date;
  END LOOP;
END
$$;

-- Every write of `source` written to its twin in the same transaction, `id` given by `id_of` (an
-- expression over the row `r`: `r.id` where the ids are kept). An update upserts, so that it waits for
-- the copy's batch holding the row and then applies over it; a row the copy has not reached is written
-- here and the copy passes over it. The trigger's lock is taken without queueing writers behind a long
-- wait (lock_or_wait).
CREATE FUNCTION "live_partition_mirror"(source text, id_of text) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  columns text;
  assignments text;
BEGIN
  SELECT string_agg(CASE WHEN attname = 'id' THEN replace(id_of, 'r.', 'NEW.') ELSE format('NEW.%I', attname) END, ', ' ORDER BY attnum),
         string_agg(format('%I = EXCLUDED.%I', attname, attname), ', ' ORDER BY attnum) FILTER (WHERE attname <> 'id')
  INTO columns, assignments
  FROM pg_attribute WHERE attrelid = source::regclass AND attnum > 0 AND NOT attisdropped;
  EXECUTE format($function$
    CREATE FUNCTION %I() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        DELETE FROM %I WHERE id = %s;
      ELSE
        INSERT INTO %I SELECT %s ON CONFLICT (id) DO UPDATE SET %s;
      END IF;
      RETURN NULL;
    END
    $body$$function$, source || '_mirror', source || '_partitioned', replace(id_of, 'r.', 'OLD.'), source || '_partitioned', columns, assignments);
  PERFORM lock_or_wait(quote_ident(source), 'SHARE ROW EXCLUSIVE');
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION %I()',
    source || '_mirror', source, source || '_mirror');
END
$fn$;

-- The copy, as call_attempts_copy did it: the rows in id order, a batch per transaction, each batch
-- holding its rows FOR KEY SHARE while it copies them (a delete waits for the batch, then removes the
-- copied row through the mirror; a row deleted before the batch read it is not copied); a deadlock with a
-- writer holding rows of the batch in another order costs the batch a second try, not the migration.
-- Run again, it copies what is missing.
CREATE PROCEDURE "live_partition_copy"(source text, id_of text, batch integer) LANGUAGE plpgsql AS $$
DECLARE
  columns text;
  done uuid := '00000000-0000-0000-0000-000000000000';
  upto uuid;
BEGIN
  SELECT string_agg(CASE WHEN attname = 'id' THEN id_of ELSE format('r.%I', attname) END, ', ' ORDER BY attnum) INTO columns
  FROM pg_attribute WHERE attrelid = source::regclass AND attnum > 0 AND NOT attisdropped;
  LOOP
    EXECUTE format('SELECT b.id FROM (SELECT id FROM %I WHERE id > $1 ORDER BY id LIMIT $2) AS b ORDER BY b.id DESC LIMIT 1', source)
      INTO upto USING done, batch;
    EXIT WHEN upto IS NULL;
    BEGIN
      EXECUTE format('WITH r AS (SELECT * FROM %I WHERE id > $1 AND id <= $2 FOR KEY SHARE)
                      INSERT INTO %I SELECT %s FROM r ON CONFLICT (id) DO NOTHING', source, source || '_partitioned', columns)
        USING done, upto;
      done := upto;
    EXCEPTION WHEN deadlock_detected THEN
      NULL;
    END;
    COMMIT;
  END LOOP;
END
$$;

-- The swap (the caller holds both tables' locks): the mirror goes, the names are swapped, and a sequence
-- the old table's column owns (a serial) is owned by the twin's, so that dropping the old table keeps it.
-- Refuses a table that other tables' keys reference (none of those converted with it is).
CREATE FUNCTION "live_partition_swap"(source text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  owned record;
BEGIN
  IF EXISTS (SELECT FROM pg_constraint WHERE confrelid = source::regclass AND contype = 'f') THEN
    RAISE EXCEPTION '% is referenced by keys this swap does not move', source;
  END IF;
  EXECUTE format('DROP TRIGGER %I ON %I', source || '_mirror', source);
  EXECUTE format('DROP FUNCTION %I()', source || '_mirror');
  EXECUTE format('ALTER TABLE %I RENAME TO %I', source, source || '_unpartitioned');
  EXECUTE format('ALTER TABLE %I RENAME TO %I', source || '_partitioned', source);
  FOR owned IN SELECT s.objid::regclass AS sequence, a.attname AS column_name FROM pg_depend s
               JOIN pg_attribute a ON a.attrelid = s.refobjid AND a.attnum = s.refobjsubid
               WHERE s.refobjid = (source || '_unpartitioned')::regclass AND s.classid = 'pg_class'::regclass AND s.deptype = 'a'
                 AND (SELECT relkind FROM pg_class WHERE oid = s.objid) = 'S'
  LOOP
    EXECUTE format('ALTER SEQUENCE %s OWNED BY %I.%I', owned.sequence, source, owned.column_name);
  END LOOP;
END
$$;

-- The old table dropped: dropping its keys locks the tables they reference for a moment, taken without
-- queueing their writers behind a long wait.
CREATE FUNCTION "live_partition_drop"(source text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  old text := source || '_unpartitioned';
  tables text;
BEGIN
  SELECT string_agg(DISTINCT confrelid::regclass::text, ', ') INTO tables FROM pg_constraint WHERE conrelid = old::regclass AND contype = 'f' AND conparentid = 0;
  PERFORM lock_or_wait(concat_ws(', ', quote_ident(old), tables), 'ACCESS EXCLUSIVE');
  EXECUTE format('DROP TABLE %I', old);
END
$$;

SELECT live_partition_twin('credit_transactions', uuidv7_time((
  SELECT id FROM credit_transactions WHERE id >= uuidv7_floor(now() - interval '5 years') AND id < uuidv7_floor(now()) ORDER BY id LIMIT 1)));
-- A payment's ledger row, looked up by its provider's id before it is written (the swap's trigger).
CREATE INDEX "credit_transactions_external_id_idx" ON "credit_transactions_partitioned"("external_id");
SELECT live_partition_mirror('credit_transactions', 'r.id');
