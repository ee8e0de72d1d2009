// The report's counts kept by triggers (campaign_report_counts) against the same figures counted from the
// rows themselves, as the report counted them before: one row per campaign, variant and block reason with
// anything to count, for every campaign (or one).

const FIGURES = `appointments, blocks, requested, pending, contacts, attempted, reached, calls, connected, "durationSeconds", "costCents"`;

/** From the rows: appointments, blocks by reason, callbacks, and each variant's contacts and calls. */
export const COUNTED = `
  SELECT campaign_id AS "campaignId", variant_id AS "variantId", reason, sum(appointments)::int AS appointments, sum(blocks)::int AS blocks,
         sum(requested)::int AS requested, sum(pending)::int AS pending, sum(contacts)::int AS contacts, sum(attempted)::int AS attempted,
         sum(reached)::int AS reached, sum(calls)::int AS calls, sum(connected)::int AS connected,
         sum(duration_seconds)::text AS "durationSeconds", sum(cost_cents)::text AS "costCents"
  FROM (
    SELECT ap.campaign_id, cc.variant_id, NULL::text AS reason, 1 AS appointments, 0 AS blocks, 0 AS requested, 0 AS pending, 0 AS contacts,
           0 AS attempted, 0 AS reached, 0 AS calls, 0 AS connected, 0::bigint AS duration_seconds, 0::bigint AS cost_cents
    FROM appointments ap LEFT JOIN campaign_contacts cc ON cc.campaign_id = ap.campaign_id AND cc.contact_id = ap.contact_id
    WHERE ap.campaign_id IS NOT NULL
    UNION ALL
    SELECT campaign_id, NULL, reason::text, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0 FROM dial_blocks
    UNION ALL
    SELECT a.campaign_id, cc.variant_id, NULL, 0, 0, (a.callback_at IS NOT NULL)::int, 0, 0, 0, 0,
           (cc.variant_id IS NOT NULL)::int, coalesce(cc.variant_id IS NOT NULL AND a.duration_seconds > 0, false)::int,
           CASE WHEN cc.variant_id IS NOT NULL AND a.duration_seconds > 0 THEN a.duration_seconds ELSE 0 END,
           CASE WHEN cc.variant_id IS NOT NULL THEN coalesce(a.cost_cents, 0) ELSE 0 END
    FROM call_attempts a LEFT JOIN campaign_contacts cc ON cc.campaign_id = a.campaign_id AND cc.contact_id = a.contact_id
    UNION ALL
    SELECT campaign_id, variant_id, NULL, 0, 0, 0, (callback_at IS NOT NULL)::int, (variant_id IS NOT NULL)::int,
           coalesce(variant_id IS NOT NULL AND attempts > 0, false)::int, coalesce(variant_id IS NOT NULL AND outcome = 'reached', false)::int, 0, 0, 0, 0
    FROM campaign_contacts
  ) AS r
  WHERE $1::uuid IS NULL OR campaign_id = $1::uuid
  GROUP BY campaign_id, variant_id, reason`;

/** The same from the counts, folded or not. */
export const TOTALLED = `
  SELECT campaign_id AS "campaignId", variant_id AS "variantId", reason::text AS reason, sum(appointments)::int AS appointments,
         sum(blocks)::int AS blocks, sum(callbacks_requested)::int AS requested, sum(callbacks_pending)::int AS pending,
         sum(contacts)::int AS contacts, sum(attempted)::int AS attempted, sum(reached)::int AS reached, sum(calls)::int AS calls,
         sum(connected)::int AS connected, sum(duration_seconds)::text AS "durationSeconds", sum(cost_cents)::text AS "costCents"
  FROM campaign_report_counts WHERE $1::uuid IS NULL OR campaign_id = $1::uuid
  GROUP BY campaign_id, variant_id, reason`;

/** Either of the above, rows whose figures are all 0 left out, in one order. */
export const nonZero = (query: string) =>
  `SELECT * FROM (${query}) AS f WHERE (${FIGURES}) <> (0, 0, 0, 0, 0, 0, 0, 0, 0, '0', '0')
   ORDER BY "campaignId", "variantId" NULLS FIRST, reason NULLS FIRST`;
