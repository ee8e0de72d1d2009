-- DropIndex
DROP INDEX "call_attempts_campaign_id_status_idx";

-- CreateIndex
CREATE INDEX "call_attempts_campaign_id_status_report_idx" ON "call_attempts"("campaign_id", "status", "created_at", "sentiment", "duration_seconds", "cost_cents");

-- CreateIndex
CREATE INDEX "contacts_contact_group_id_created_at_id_idx" ON "contacts"("contact_group_id", "created_at", "id");
