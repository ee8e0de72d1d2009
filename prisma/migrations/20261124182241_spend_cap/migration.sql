-- A campaign's spend cap, and what its calls were charged so far, kept on a row of its own so that the
-- result batches that lock it never wait for the campaign's row, which the ticks lock.

-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "spend_cap_cents" BIGINT;

-- CreateTable
CREATE TABLE "campaign_spend" (
    "campaign_id" UUID NOT NULL,
    "spent_cents" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "campaign_spend_pkey" PRIMARY KEY ("campaign_id")
);

-- AddForeignKey
ALTER TABLE "campaign_spend" ADD CONSTRAINT "campaign_spend_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_spend_cap_cents_check" CHECK ("spend_cap_cents" >= 0);

-- What existing campaigns were charged so far.
INSERT INTO "campaign_spend" ("campaign_id", "spent_cents")
SELECT k.id, coalesce((SELECT sum(-t.amount_cents) FROM credit_transactions t WHERE t.campaign_id = k.id AND t.kind = 'call_charge'), 0)
FROM campaigns k;

-- Every new campaign has its row from the start, so a batch of results only ever locks and updates it.
CREATE FUNCTION campaign_spend_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO campaign_spend (campaign_id) VALUES (NEW.id);
  RETURN NULL;
END
$$;

CREATE TRIGGER campaign_spend_row AFTER INSERT ON campaigns FOR EACH ROW EXECUTE FUNCTION campaign_spend_row();
