import { defineConfig } from 'prisma/config';

// Only `prisma generate` uses the Prisma CLI here; migrations run through src/db/migrate.ts, which drives
// the WebAssembly schema engine over our own driver adapters and so needs no native engine download.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
