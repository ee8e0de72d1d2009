-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "DialBlockReason" ADD VALUE 'frequency_cap';
ALTER TYPE "DialBlockReason" ADD VALUE 'consent_revoked';

-- AlterTable
ALTER TABLE "call_attempts" ADD COLUMN     "regional_rule_exemption_id" UUID;

-- CreateTable
CREATE TABLE "regional_rule_exemptions" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "granted_by" VARCHAR(200) NOT NULL,
    "reason" VARCHAR(1000) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "regional_rule_exemptions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "regional_rule_exemptions_user_id_expires_at_idx" ON "regional_rule_exemptions"("user_id", "expires_at");

-- CreateIndex
CREATE INDEX "call_attempts_user_id_to_number_created_at_idx" ON "call_attempts"("user_id", "to_number", "created_at");

-- AddForeignKey
ALTER TABLE "call_attempts" ADD CONSTRAINT "call_attempts_regional_rule_exemption_id_fkey" FOREIGN KEY ("regional_rule_exemption_id") REFERENCES "regional_rule_exemptions"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "regional_rule_exemptions" ADD CONSTRAINT "regional_rule_exemptions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
