-- A campaign's report counts its calls by outcome too: the call totals gain the outcome as a dimension
-- (null for calls not finished), kept by the same triggers.

-- AlterTable
ALTER TABLE "campaign_call_totals" ADD COLUMN     "outcome" "CallOutcome";

CREATE OR REPLACE FUNCTION "call_totals_statement"(changed text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format($s$
    INSERT INTO campaign_call_totals (campaign_id, status, outcome, calls, duration_seconds, connected, cost_cents, positive, neutral, negative, unknown)
    SELECT * FROM (
      SELECT campaign_id, status, outcome, sum(sign)::int AS calls, coalesce(sum(sign * duration_seconds), 0)::bigint AS duration_seconds,
             coalesce(sum(sign) FILTER (WHERE duration_seconds > 0), 0)::int AS connected,
             sum(sign * cost_cents)::bigint AS cost_cents,
             coalesce(sum(sign) FILTER (WHERE sentiment = 'positive'), 0)::int AS positive,
             coalesce(sum(sign) FILTER (WHERE sentiment = 'neutral'), 0)::int AS neutral,
             coalesce(sum(sign) FILTER (WHERE sentiment = 'negative'), 0)::int AS negative,
             coalesce(sum(sign) FILTER (WHERE sentiment = 'unknown'), 0)::int AS unknown
      FROM (%s) AS changed GROUP BY campaign_id, status, outcome) AS d
    WHERE (calls, duration_seconds, connected, cost_cents, positive, neutral, negative, unknown) <> (0, 0, 0, 0, 0, 0, 0, 0)$s$, changed)
$$;

CREATE OR REPLACE FUNCTION "call_totals_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE call_totals_statement(totals_changed_rows(TG_OP, 'campaign_id, status, outcome, duration_seconds, cost_cents, sentiment'));
  RETURN NULL;
END
$$;

-- The totals counted again, now with outcomes (every finished call has one since call_outcomes).
DELETE FROM "campaign_call_totals";
DO $$
BEGIN
  EXECUTE call_totals_statement('SELECT 1 AS sign, campaign_id, status, outcome, duration_seconds, cost_cents, sentiment FROM call_attempts');
END
$$;
