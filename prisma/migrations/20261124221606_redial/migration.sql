-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "redial_of" UUID,
ADD COLUMN     "redial_outcomes" "CallOutcome"[] DEFAULT ARRAY[]::"CallOutcome"[];

-- AddForeignKey
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_redial_of_fkey" FOREIGN KEY ("redial_of") REFERENCES "campaigns"("id") ON DELETE NO ACTION ON UPDATE CASCADE;
