-- A tick counts its campaign's calls in flight (twice: before the campaign's lock and under it) and the
-- credit check counts them again. Counted in call_attempts, no index led by the campaign: the count
-- went through every month's in-flight index by customer and read the large customer's entries, dead
-- ones included (11,000 buffers for no row at 10^7 contacts). live_calls holds exactly the calls in
-- flight, one row each, so it keeps their campaign and the count reads that campaign's rows alone.

-- AlterTable
ALTER TABLE "live_calls" ADD COLUMN "campaign_id" UUID;

-- CreateIndex
CREATE INDEX "live_calls_campaign_id_idx" ON "live_calls"("campaign_id");

-- One lookup by id per call in flight (a few thousand rows at most), each pruned to its month.
UPDATE "live_calls" l SET "campaign_id" = (SELECT a."campaign_id" FROM "call_attempts" a WHERE a."id" = l."attempt_id");

-- As before, and: a call in flight needs its number (else it would hold no row here and go uncounted),
-- and its row carries its campaign. The claim writes the campaign with the row; a row written without it
-- (by a writer of the release before, during a deploy) gets it here. That is found by the lookup by
-- attempt that the refusal check makes anyway, so the common case runs no other statement: an UPDATE
-- joined to the statement's rows was planned, and its plan cached, while this table was near empty, and
-- then read all of it at every claim (2.3 ms of CPU a call, against 1.2, at 10^6 contacts). The same
-- holds for the lookups that were here before: this table is near empty at rest and fills in a burst
-- when campaigns start, while a session keeps the plans it made at rest, so its statements here look
-- rows up by index whatever the table's size when they were planned (a burst of claims after a vacuum
-- read the whole table each: 5.1 ms of CPU a call).
CREATE OR REPLACE FUNCTION "live_calls_keep"() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  refused integer;
  unmarked integer;
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM live_calls l USING old_rows o WHERE l.attempt_id = o.id;
    RETURN NULL;
  END IF;
  IF EXISTS (SELECT FROM new_rows WHERE status IN ('queued', 'ringing', 'in_progress') AND to_number IS NULL) THEN
    RAISE EXCEPTION 'a call in flight needs the number it calls' USING ERRCODE = 'not_null_violation';
  END IF;
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM live_calls l USING old_rows o WHERE l.attempt_id = o.id
      AND NOT EXISTS (SELECT FROM new_rows n WHERE n.id = o.id AND n.status IN ('queued', 'ringing', 'in_progress')
                        AND n.user_id = l.user_id AND n.to_number = l.to_number);
  END IF;
  WITH wanted AS (
    SELECT id, user_id, to_number, campaign_id FROM new_rows WHERE status IN ('queued', 'ringing', 'in_progress')
  ), held AS (
    INSERT INTO live_calls (user_id, to_number, attempt_id, campaign_id) SELECT user_id, to_number, id, campaign_id FROM wanted
    ON CONFLICT DO NOTHING RETURNING attempt_id
  )
  SELECT count(*) FILTER (WHERE l.attempt_id IS NULL),
         count(*) FILTER (WHERE l.attempt_id IS NOT NULL AND l.campaign_id IS DISTINCT FROM w.campaign_id)
  INTO refused, unmarked
  FROM wanted w LEFT JOIN live_calls l ON l.attempt_id = w.id
  WHERE NOT EXISTS (SELECT FROM held h WHERE h.attempt_id = w.id);
  IF refused > 0 THEN
    RAISE EXCEPTION 'another call to this number is in flight' USING ERRCODE = 'unique_violation', CONSTRAINT = 'live_calls_pkey';
  END IF;
  IF unmarked > 0 THEN
    UPDATE live_calls l SET campaign_id = n.campaign_id FROM new_rows n
    WHERE l.attempt_id = n.id AND l.campaign_id IS DISTINCT FROM n.campaign_id;
  END IF;
  RETURN NULL;
END
$$;
