-- A customer may keep the personal data of its calls for less than the records' five years: past its
-- setting, the retention run pseudonymises them (the number dialed becomes its keyed hash; the words, the
-- recording and the analysis go), from where the last run stopped.

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "call_data_retention_days" INTEGER,
ADD COLUMN     "calls_pseudonymised_before" TIMESTAMPTZ(3);
