-- A re-call too soon after an abandoned call is a block of its own (the UK's 24 hours), and a number's
-- abandoned calls (failed after they connected) are found by a small partial index.

-- AlterEnum
ALTER TYPE "DialBlockReason" ADD VALUE 'abandoned_recall';

-- CreateIndex
CREATE INDEX "call_attempts_abandoned_idx" ON "call_attempts"("user_id", "to_number", "ended_at") WHERE ((outcome = 'failed'::"CallOutcome") AND (duration_seconds > 0));
