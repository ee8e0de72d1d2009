-- dial_blocks becomes partitioned by month while the dialer writes it (issue 37), by the live conversion's
-- functions (migration credit_transactions_partitioned): the twin and its mirror here, then the copy, the
-- swap and the drop. Partitioned by RANGE on `id`, as the other tables kept by month; but not every id
-- is a UUIDv7: the blocks recorded at enrolment (a contact on a do-not-call list) were given random
-- ones (gen_random_uuid()), whose first bits read as any instant of nine thousand years, and would land
-- in the default partition, or worse in a future month's range, stopping that month's partition from
-- being attached. The twin therefore holds each such row under a UUIDv7 of its `created_at`, its random
-- bits kept (uuidv7_of): the same row every time (the mirror's updates and deletes find it), in its
-- month. Nothing references a dial block; the service writes UUIDv7s from this release on.

-- `id` when it is a UUIDv7; otherwise the UUIDv7 of `at` with the id's last 74 bits (a random UUID's
-- own randomness, so two rows of one millisecond still differ).
CREATE FUNCTION "uuidv7_of"(id uuid, at timestamptz) RETURNS uuid LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN substr(id::text, 15, 1) = '7' THEN id
              ELSE (left(uuidv7_floor(at)::text, 13) || '-7' || substr(id::text, 16))::uuid END
$$;

-- The first month made is that of the oldest block of the last five years, found by its time (a read of
-- the table that locks nothing a writer needs): the random ids say nothing of it.
SELECT live_partition_twin('dial_blocks', (SELECT min(created_at) FROM dial_blocks WHERE created_at >= now() - interval '5 years'));
SELECT live_partition_mirror('dial_blocks', 'uuidv7_of(r.id, r.created_at)');
