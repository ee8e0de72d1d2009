-- AlterTable
ALTER TABLE "phone_numbers" ADD COLUMN     "cooldown_ended_at" TIMESTAMPTZ(3);
