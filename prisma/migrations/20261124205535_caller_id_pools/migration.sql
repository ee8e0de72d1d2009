-- AlterTable
ALTER TABLE "phone_numbers" ADD COLUMN     "cooldown_after_unanswered" INTEGER,
ADD COLUMN     "cooldown_minutes" INTEGER NOT NULL DEFAULT 30,
ADD COLUMN     "max_calls_per_day" INTEGER,
ADD COLUMN     "max_calls_per_hour" INTEGER,
ADD COLUMN     "rest_below_answer_rate" DOUBLE PRECISION,
ADD COLUMN     "rest_hours" INTEGER NOT NULL DEFAULT 24,
ADD COLUMN     "rest_window_calls" INTEGER NOT NULL DEFAULT 50,
ADD COLUMN     "rested_until" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "call_attempts_user_id_from_number_created_at_idx" ON "call_attempts"("user_id", "from_number", "created_at");
