#!/bin/sh
# Stands in for Prisma's native schema engine, which `prisma generate` would otherwise try to download.
# It fails loudly so that nothing can mistake it for a working engine (migrations use src/db/migrate.ts).
echo "The native Prisma schema engine is not used by this project: run npm run db:migrate" >&2
exit 1
