-- The rest of a campaign's report reads running totals too: counting a large campaign's appointments,
-- dial blocks, callbacks and variant figures read hundreds of thousands of rows per report. The same
-- triggers as campaign_call_totals (report_totals migration) keep them: one row of differences per
-- statement, folded by the dialer's sweep. The rows there already are counted by the next migration, in
-- batches that commit, while the triggers below record every change from now on.

-- CreateTable
CREATE TABLE "campaign_report_counts" (
    "id" BIGSERIAL NOT NULL,
    "campaign_id" UUID NOT NULL,
    "variant_id" UUID,
    "reason" "DialBlockReason",
    "appointments" INTEGER NOT NULL DEFAULT 0,
    "blocks" INTEGER NOT NULL DEFAULT 0,
    "callbacks_requested" INTEGER NOT NULL DEFAULT 0,
    "callbacks_pending" INTEGER NOT NULL DEFAULT 0,
    "contacts" INTEGER NOT NULL DEFAULT 0,
    "attempted" INTEGER NOT NULL DEFAULT 0,
    "reached" INTEGER NOT NULL DEFAULT 0,
    "calls" INTEGER NOT NULL DEFAULT 0,
    "connected" INTEGER NOT NULL DEFAULT 0,
    "duration_seconds" BIGINT NOT NULL DEFAULT 0,
    "cost_cents" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "campaign_report_counts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "campaign_report_counts_campaign_id_idx" ON "campaign_report_counts"("campaign_id");

-- AddForeignKey
ALTER TABLE "campaign_report_counts" ADD CONSTRAINT "campaign_report_counts_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The statements that add the counts of `changed` (rows with a sign, see totals_changed_rows), one per
-- table, leaving out rows whose differences are all 0. A variant is the one its contact was given in the
-- campaign (looked up by the (campaign, contact) key), as the report joined them before.
CREATE FUNCTION "report_appointment_counts_statement"(changed text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format($s$
    INSERT INTO campaign_report_counts (campaign_id, variant_id, appointments)
    SELECT ch.campaign_id, cc.variant_id, sum(ch.sign)::int
    FROM (%s) AS ch LEFT JOIN campaign_contacts cc ON cc.campaign_id = ch.campaign_id AND cc.contact_id = ch.contact_id
    WHERE ch.campaign_id IS NOT NULL GROUP BY ch.campaign_id, cc.variant_id HAVING sum(ch.sign) <> 0$s$, changed)
$$;

CREATE FUNCTION "report_block_counts_statement"(changed text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format($s$
    INSERT INTO campaign_report_counts (campaign_id, reason, blocks)
    SELECT campaign_id, reason, sum(sign)::int FROM (%s) AS ch GROUP BY campaign_id, reason HAVING sum(sign) <> 0$s$, changed)
$$;

-- Calls count for a variant only when their contact has one: a campaign without variants adds rows here
-- only for callbacks.
CREATE FUNCTION "report_call_counts_statement"(changed text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format($s$
    INSERT INTO campaign_report_counts (campaign_id, variant_id, callbacks_requested, calls, connected, duration_seconds, cost_cents)
    SELECT * FROM (
      SELECT ch.campaign_id, cc.variant_id,
             coalesce(sum(ch.sign) FILTER (WHERE ch.callback_at IS NOT NULL), 0)::int AS callbacks_requested,
             coalesce(sum(ch.sign) FILTER (WHERE cc.variant_id IS NOT NULL), 0)::int AS calls,
             coalesce(sum(ch.sign) FILTER (WHERE cc.variant_id IS NOT NULL AND ch.duration_seconds > 0), 0)::int AS connected,
             coalesce(sum(ch.sign * ch.duration_seconds) FILTER (WHERE cc.variant_id IS NOT NULL AND ch.duration_seconds > 0), 0)::bigint AS duration_seconds,
             coalesce(sum(ch.sign * ch.cost_cents) FILTER (WHERE cc.variant_id IS NOT NULL), 0)::bigint AS cost_cents
      FROM (%s) AS ch LEFT JOIN campaign_contacts cc ON cc.campaign_id = ch.campaign_id AND cc.contact_id = ch.contact_id
      GROUP BY ch.campaign_id, cc.variant_id) AS d
    WHERE (callbacks_requested, calls, connected, duration_seconds, cost_cents) <> (0, 0, 0, 0, 0)$s$, changed)
$$;

CREATE FUNCTION "report_contact_counts_statement"(changed text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format($s$
    INSERT INTO campaign_report_counts (campaign_id, variant_id, callbacks_pending, contacts, attempted, reached)
    SELECT * FROM (
      SELECT campaign_id, variant_id,
             coalesce(sum(sign) FILTER (WHERE callback_at IS NOT NULL), 0)::int AS callbacks_pending,
             coalesce(sum(sign) FILTER (WHERE variant_id IS NOT NULL), 0)::int AS contacts,
             coalesce(sum(sign) FILTER (WHERE variant_id IS NOT NULL AND attempts > 0), 0)::int AS attempted,
             coalesce(sum(sign) FILTER (WHERE variant_id IS NOT NULL AND outcome = 'reached'), 0)::int AS reached
      FROM (%s) AS ch GROUP BY campaign_id, variant_id) AS d
    WHERE (callbacks_pending, contacts, attempted, reached) <> (0, 0, 0, 0)$s$, changed)
$$;

CREATE FUNCTION "report_appointment_counts_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE report_appointment_counts_statement(totals_changed_rows(TG_OP, 'campaign_id, contact_id'));
  RETURN NULL;
END
$$;

CREATE FUNCTION "report_block_counts_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE report_block_counts_statement(totals_changed_rows(TG_OP, 'campaign_id, reason'));
  RETURN NULL;
END
$$;

-- call_attempts and campaign_contacts already fire a trigger per statement for their totals: the same
-- functions add these counts, sparing the hot tables a second trigger.
CREATE OR REPLACE FUNCTION "call_totals_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE call_totals_statement(totals_changed_rows(TG_OP, 'campaign_id, status, outcome, duration_seconds, cost_cents, sentiment'));
  EXECUTE report_call_counts_statement(totals_changed_rows(TG_OP, 'campaign_id, contact_id, callback_at, duration_seconds, cost_cents'));
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION "dial_totals_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE dial_totals_statement(totals_changed_rows(TG_OP, 'campaign_id, attempts, state, outcome'));
  EXECUTE report_contact_counts_statement(totals_changed_rows(TG_OP, 'campaign_id, variant_id, callback_at, attempts, outcome'));
  RETURN NULL;
END
$$;

CREATE TRIGGER "appointments_counts_insert" AFTER INSERT ON "appointments"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "report_appointment_counts_add"();
CREATE TRIGGER "appointments_counts_update" AFTER UPDATE ON "appointments"
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "report_appointment_counts_add"();
CREATE TRIGGER "appointments_counts_delete" AFTER DELETE ON "appointments"
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "report_appointment_counts_add"();

CREATE TRIGGER "dial_blocks_counts_insert" AFTER INSERT ON "dial_blocks"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "report_block_counts_add"();
CREATE TRIGGER "dial_blocks_counts_update" AFTER UPDATE ON "dial_blocks"
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "report_block_counts_add"();
CREATE TRIGGER "dial_blocks_counts_delete" AFTER DELETE ON "dial_blocks"
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "report_block_counts_add"();

-- Counts the rows that were there before the triggers, `batch` campaigns at a time, each batch committed.
-- One statement per batch counts the rows and takes away what the triggers added for those campaigns, both
-- in the same snapshot: a write the triggers counted is either in that snapshot (counted there and taken
-- away again) or not (counted by its trigger only), so each batch is exact however writers interleave, and
-- a batch run again adds nothing.
CREATE PROCEDURE "report_counts_backfill"(batch int) LANGUAGE plpgsql AS $$
DECLARE
  after uuid := '00000000-0000-0000-0000-000000000000';
  ids uuid[];
BEGIN
  LOOP
    SELECT array_agg(id ORDER BY id) INTO ids FROM (SELECT id FROM campaigns WHERE id > after ORDER BY id LIMIT batch) AS b;
    EXIT WHEN ids IS NULL;
    EXECUTE format($s$
      WITH appointments_counted AS (%s), blocks_counted AS (%s), calls_counted AS (%s), contacts_counted AS (%s)
      INSERT INTO campaign_report_counts (campaign_id, variant_id, reason, appointments, blocks, callbacks_requested, callbacks_pending,
                                          contacts, attempted, reached, calls, connected, duration_seconds, cost_cents)
      SELECT * FROM (
        SELECT campaign_id, variant_id, reason, -sum(appointments)::int AS appointments, -sum(blocks)::int AS blocks,
               -sum(callbacks_requested)::int AS callbacks_requested, -sum(callbacks_pending)::int AS callbacks_pending,
               -sum(contacts)::int AS contacts, -sum(attempted)::int AS attempted, -sum(reached)::int AS reached, -sum(calls)::int AS calls,
               -sum(connected)::int AS connected, -sum(duration_seconds)::bigint AS duration_seconds, -sum(cost_cents)::bigint AS cost_cents
        FROM campaign_report_counts WHERE campaign_id = ANY($1) GROUP BY campaign_id, variant_id, reason) AS d
      WHERE (appointments, blocks, callbacks_requested, callbacks_pending, contacts, attempted, reached, calls, connected, duration_seconds, cost_cents)
            <> (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)$s$,
      report_appointment_counts_statement('SELECT 1 AS sign, campaign_id, contact_id FROM appointments WHERE campaign_id = ANY($1)'),
      report_block_counts_statement('SELECT 1 AS sign, campaign_id, reason FROM dial_blocks WHERE campaign_id = ANY($1)'),
      report_call_counts_statement(
        'SELECT 1 AS sign, campaign_id, contact_id, callback_at, duration_seconds, cost_cents FROM call_attempts WHERE campaign_id = ANY($1)'),
      report_contact_counts_statement(
        'SELECT 1 AS sign, campaign_id, variant_id, callback_at, attempts, outcome FROM campaign_contacts WHERE campaign_id = ANY($1)'))
    USING ids;
    COMMIT;
    after := ids[array_upper(ids, 1)];
  END LOOP;
END
$$;
