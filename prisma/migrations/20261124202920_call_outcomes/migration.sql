-- CreateEnum
CREATE TYPE "CallOutcome" AS ENUM ('human', 'voicemail', 'ivr', 'call_screening', 'no_answer', 'busy', 'failed', 'invalid_number');

-- AlterTable
ALTER TABLE "call_attempts" ADD COLUMN     "outcome" "CallOutcome";

-- Calls that ended before outcomes were kept get the one their status and disconnection reason tell.
UPDATE "call_attempts" SET "outcome" = CASE
    WHEN "status" = 'completed' THEN 'human'
    WHEN "disconnect_reason" = 'invalid_destination' THEN 'invalid_number'
    ELSE "status"::text
  END::"CallOutcome"
WHERE "status" IN ('completed', 'no_answer', 'busy', 'failed', 'voicemail');
