-- AlterTable
ALTER TABLE "call_attempts" ADD COLUMN     "consents_relied" JSONB,
ADD COLUMN     "rules_version" VARCHAR(32),
ADD COLUMN     "to_number_hash" VARCHAR(64);
