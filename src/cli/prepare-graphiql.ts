import { precompressGraphiqlAssets } from '../schema/server/graphiql.js';

// Run by `npm install` (postinstall): GraphiQL's assets compressed once, so that its first visit and
// every start after need not. Without them GraphiQL still works, compressing each asset when first asked
// for, so a failure here is reported and does not fail the install.
try {
  console.log(`Compressed GraphiQL's assets (${await precompressGraphiqlAssets()}).`);
} catch (error) {
  console.warn(`Could not compress GraphiQL's assets ahead; GraphiQL compresses each when first asked for: ${String(error)}`);
}
