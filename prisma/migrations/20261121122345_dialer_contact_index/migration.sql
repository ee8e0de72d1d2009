-- CreateIndex
CREATE INDEX "campaign_contacts_contact_id_state_idx" ON "campaign_contacts"("contact_id", "state");
