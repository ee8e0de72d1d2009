-- DropForeignKey
ALTER TABLE "contacts" DROP CONSTRAINT "contacts_contact_group_id_fkey";

-- DropForeignKey
ALTER TABLE "contacts" DROP CONSTRAINT "contacts_user_id_fkey";

-- CreateIndex
CREATE UNIQUE INDEX "contact_groups_id_user_id_key" ON "contact_groups"("id", "user_id");

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_contact_group_id_user_id_fkey" FOREIGN KEY ("contact_group_id", "user_id") REFERENCES "contact_groups"("id", "user_id") ON DELETE CASCADE ON UPDATE CASCADE;
