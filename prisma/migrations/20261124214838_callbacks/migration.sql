-- AlterTable
ALTER TABLE "call_attempts" ADD COLUMN     "callback_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "campaign_contacts" ADD COLUMN     "callback_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "call_attempts_callbacks_idx" ON "call_attempts"("campaign_id") WHERE (callback_at IS NOT NULL);

-- CreateIndex
CREATE INDEX "campaign_contacts_callbacks_idx" ON "campaign_contacts"("campaign_id") WHERE (callback_at IS NOT NULL);
