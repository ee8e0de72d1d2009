-- AlterTable
ALTER TABLE "contacts" ADD COLUMN     "name" VARCHAR(512) NOT NULL DEFAULT '';
