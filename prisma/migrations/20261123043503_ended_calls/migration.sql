-- Calls a worker has heard the end of: every worker's ticks count their slots free before the results
-- are written. UNLOGGED, so no WAL for rows that matter for a few milliseconds. A crash empties the
-- table, which errs on the safe side: those calls count as in flight until their results are written.
CREATE UNLOGGED TABLE "ended_calls" (
    "attempt_id" UUID NOT NULL,

    CONSTRAINT "ended_calls_pkey" PRIMARY KEY ("attempt_id")
);
