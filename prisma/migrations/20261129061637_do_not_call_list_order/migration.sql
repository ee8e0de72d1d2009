-- CreateIndex
CREATE INDEX "do_not_call_entries_user_id_created_at_id_idx" ON "do_not_call_entries"("user_id", "created_at" DESC, "id" DESC);
