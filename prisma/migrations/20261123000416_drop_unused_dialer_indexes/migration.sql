-- Nothing reads these two indexes, and every dial updates the rows they cover twice: each cost index
-- writes on the hottest path of the dialer. Lease expiry is found through call_attempts, and holds are
-- read by call attempt.

-- DropIndex
DROP INDEX "campaign_contacts_state_lease_expires_at_idx";

-- DropIndex
DROP INDEX "credit_holds_user_id_status_idx";
