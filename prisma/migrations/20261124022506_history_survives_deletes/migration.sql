-- Deletes keep history: campaigns, dial states, attempts, appointments and ledger rows can no longer be
-- removed or unlinked by a delete of what they point at (NO ACTION instead of CASCADE or SET NULL). A deleted
-- contact is erased in place (erased_at) and a deleted group that campaigns called is archived (archived_at).
-- A contact's dial state keeps when the retry policy lets it be called (ready_at), so that a change of the
-- calling window plans it again. At most one call in flight per number of a customer, enforced by a
-- partial unique index (apply this migration with no two calls to one number in flight).

-- DropForeignKey
ALTER TABLE "appointments" DROP CONSTRAINT "appointments_call_attempt_id_fkey";

-- DropForeignKey
ALTER TABLE "appointments" DROP CONSTRAINT "appointments_campaign_id_fkey";

-- DropForeignKey
ALTER TABLE "appointments" DROP CONSTRAINT "appointments_contact_id_fkey";

-- DropForeignKey
ALTER TABLE "call_attempts" DROP CONSTRAINT "call_attempts_campaign_id_fkey";

-- DropForeignKey
ALTER TABLE "call_attempts" DROP CONSTRAINT "call_attempts_contact_id_fkey";

-- DropForeignKey
ALTER TABLE "campaign_contacts" DROP CONSTRAINT "campaign_contacts_campaign_id_fkey";

-- DropForeignKey
ALTER TABLE "campaign_contacts" DROP CONSTRAINT "campaign_contacts_contact_id_fkey";

-- DropForeignKey
ALTER TABLE "credit_transactions" DROP CONSTRAINT "credit_transactions_call_attempt_id_fkey";

-- DropForeignKey
ALTER TABLE "credit_transactions" DROP CONSTRAINT "credit_transactions_campaign_id_fkey";

-- DropIndex
DROP INDEX "contacts_contact_group_id_created_at_id_idx";

-- AlterTable
ALTER TABLE "call_attempts" ALTER COLUMN "to_number" DROP NOT NULL;

-- AlterTable
ALTER TABLE "campaign_contacts" ADD COLUMN     "ready_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "contact_groups" ADD COLUMN     "archived_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "contacts" ADD COLUMN     "erased_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE UNIQUE INDEX "call_attempts_one_live_call_per_number" ON "call_attempts"("user_id", "to_number") WHERE (status IN ('queued', 'ringing', 'in_progress'));

-- CreateIndex
CREATE INDEX "contacts_contact_group_id_created_at_id_erased_at_idx" ON "contacts"("contact_group_id", "created_at", "id", "erased_at");

-- CreateIndex
CREATE INDEX "contacts_erased_idx" ON "contacts"("contact_group_id") WHERE (erased_at IS NOT NULL);

-- AddForeignKey
ALTER TABLE "campaign_contacts" ADD CONSTRAINT "campaign_contacts_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "campaign_contacts" ADD CONSTRAINT "campaign_contacts_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "call_attempts" ADD CONSTRAINT "call_attempts_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "call_attempts" ADD CONSTRAINT "call_attempts_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "appointments" ADD CONSTRAINT "appointments_call_attempt_id_fkey" FOREIGN KEY ("call_attempt_id") REFERENCES "call_attempts"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_transactions" ADD CONSTRAINT "credit_transactions_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "credit_transactions" ADD CONSTRAINT "credit_transactions_call_attempt_id_fkey" FOREIGN KEY ("call_attempt_id") REFERENCES "call_attempts"("id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- Contacts waiting today: never dialed ones were ready from when they were set aside at the latest, the
-- others keep the due time they have.
UPDATE "campaign_contacts" SET "ready_at" = CASE WHEN "attempts" = 0 THEN least("next_attempt_at", "updated_at") ELSE "next_attempt_at" END
WHERE "state" = 'pending';
