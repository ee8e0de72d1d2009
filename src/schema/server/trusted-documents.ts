import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { GraphQLParams, Plugin } from 'graphql-yoga';

/**
 * The operations this server runs when trusted documents are on: each document by its hash, keyed as
 * graphql-codegen's client preset writes them in persisted-documents.json (`sha256:<hex>`).
 */
export type TrustedDocuments = ReadonlyMap<string, string>;

const refusal = (code: string, message: string) => ({ message, extensions: { code, http: { status: 400 } } });

/**
 * The document's id as the GraphQL over HTTP draft sends it (`documentId`, the manifest's key), or as
 * Apollo's persisted queries do (`extensions.persistedQuery.sha256Hash`, the bare hex digest).
 */
export function documentIdOf(params: Pick<GraphQLParams, 'extensions'>): string | null {
  const { documentId } = params as { documentId?: unknown };
  if (typeof documentId === 'string') return documentId;
  const persisted = params.extensions?.['persistedQuery'] as { sha256Hash?: unknown } | undefined;
  return typeof persisted?.sha256Hash === 'string' ? `sha256:${persisted.sha256Hash}` : null;
}

/** Runs only the documents of the manifest, named by their hash; a request carrying a document is refused. */
export function trustedDocuments(documents: TrustedDocuments): Plugin {
  return usePersistedOperations({
    getPersistedOperation: (id) => documents.get(id) ?? null,
    extractPersistedOperationId: documentIdOf,
    customErrors: {
      persistedQueryOnly: refusal(
        'PERSISTED_QUERY_ONLY',
        'This server runs trusted documents only: send the hash of a generated document (extensions.persistedQuery.sha256Hash or documentId) instead of its text.',
      ),
      // Not PERSISTED_QUERY_NOT_FOUND: on that code automatic persisted query clients resend the text.
      notFound: refusal(
        'PERSISTED_QUERY_NOT_IN_LIST',
        'No trusted document has this hash: the client was generated from documents this server was not deployed with.',
      ),
      keyNotFound: refusal(
        'PERSISTED_QUERY_ID_REQUIRED',
        'Send the hash of a trusted document in extensions.persistedQuery.sha256Hash or documentId.',
      ),
    },
  });
}
