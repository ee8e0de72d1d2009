import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange, type Exchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { createClient as createSseClient, type RequestParams } from 'graphql-sse';
import type { ConsoleSettings } from './settings';

const ENDPOINT = new URL('/graphql', window.location.origin).toString();

/** A generated document's hash, as graphql-codegen's client preset embeds it: `sha256:<hex>`. */
const hashOf = (document: unknown) => (document as { __meta__?: { hash?: string } }).__meta__?.hash?.replace(/^sha256:/, '');

/**
 * The GraphQL client of one login: queries and mutations over fetch, subscriptions over Server-Sent
 * Events (graphql-sse, one connection per subscription), each with the token. With trusted documents
 * on, every operation travels as its generated hash.
 */
export function createGraphQLClient(settings: ConsoleSettings, token: string, onUnauthenticated: () => void): Client {
  const authorization = `Bearer ${token}`;
  const sse = createSseClient({ url: ENDPOINT, headers: { authorization }, retryAttempts: 2 });
  const exchanges: Exchange[] = [
    mapExchange({
      onError(error) {
        if (error.graphQLErrors.some((e) => e.extensions['code'] === 'UNAUTHENTICATED') || error.response?.status === 401)
          onUnauthenticated();
      },
    }),
    cacheExchange,
  ];
  if (settings.trustedDocuments) {
    exchanges.push(
      persistedExchange({
        enforcePersistedQueries: true,
        enableForMutation: true,
        enableForSubscriptions: true,
        preferGetForPersistedQueries: false,
        generateHash: async (_query, document) => hashOf(document),
      }),
    );
  }
  exchanges.push(
    subscriptionExchange({
      forwardSubscription: (request) => ({
        subscribe: (sink) => ({ unsubscribe: sse.subscribe(request as RequestParams, sink) }),
      }),
    }),
    fetchExchange,
  );
  // POST for every operation: a GET would also need the CSRF header, and gains nothing behind a token.
  return new Client({ url: ENDPOINT, exchanges, preferGetMethod: false, fetchOptions: () => ({ headers: { authorization } }) });
}
