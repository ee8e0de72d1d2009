import { useDisableIntrospection } from '@envelop/disable-introspection';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { GraphQLContext } from '../schema/context.js';
import { maskGraphQLError } from '../schema/errors.js';
import { buildSchema } from '../schema/index.js';
import type { Authenticator } from '../services/auth.js';
import { serviceContext, type ServiceEnv } from '../services/context.js';
import { AuthenticationError } from '../services/errors.js';
import type { RateLimiter } from '../ops/rate-limits.js';
import { WWW_AUTHENTICATE } from '../rest/errors.js';
import { graphqlInput } from './graphql-input.js';
import { graphqlMetrics } from './graphql-metrics.js';
import { graphqlRateLimits } from './graphql-rate-limits.js';
import { currentRequestScope, type RequestScope } from './request-scope.js';

export interface GraphQLDeps {
  env: ServiceEnv;
  authenticator: Authenticator;
  introspection: boolean;
  graphiql: boolean;
  rateLimiter: RateLimiter;
}

/** Limits on what one operation may ask for, against abusive or accidental giant queries. */
export const QUERY_LIMITS = { maxDepth: 10, maxAliases: 20, maxCost: 100_000, maxTokens: 2_000, maxDirectives: 20 };

/** What the HTTP app hands yoga with each request. */
export interface GraphQLServerContext {
  scope: RequestScope;
}

export function createGraphQLServer(deps: GraphQLDeps): YogaServerInstance<GraphQLServerContext, GraphQLContext> {
  return createYoga<GraphQLServerContext, GraphQLContext>({
    schema: buildSchema(),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: deps.graphiql ? { title: 'Campaigns GraphQL' } : false,
    // GraphiQL inlines all of its assets (no CDN); that page weighs some 80 MB in memory, so it is
    // loaded on the first request for it rather than at start.
    renderGraphiQL: async (options) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    logging: false,
    // Yoga hands error masking no context, so the request's logger is found from where it runs.
    maskedErrors: { maskError: (error) => maskGraphQLError(currentRequestScope()?.log ?? deps.env.log)(error) },
    plugins: [
      EnvelopArmorPlugin({
        maxDepth: { n: QUERY_LIMITS.maxDepth },
        maxAliases: { n: QUERY_LIMITS.maxAliases },
        costLimit: { maxCost: QUERY_LIMITS.maxCost },
        maxTokens: { n: QUERY_LIMITS.maxTokens },
        maxDirectives: { n: QUERY_LIMITS.maxDirectives },
        blockFieldSuggestion: { enabled: !deps.introspection },
      }),
      ...(deps.introspection ? [] : [useDisableIntrospection()]),
      graphqlInput,
      graphqlRateLimits(deps.rateLimiter),
      graphqlMetrics,
    ],
    context: async ({ request, scope }): Promise<GraphQLContext> => {
      try {
        const user = await deps.authenticator.authenticate(request.headers.get('authorization'));
        scope.userId = user.id;
        return { user, prisma: deps.env.db, service: serviceContext({ ...deps.env, log: scope.log }, user, scope.requestId) };
      } catch (error) {
        if (!(error instanceof AuthenticationError)) throw error;
        throw new GraphQLError(error.message, {
          extensions: {
            code: 'UNAUTHENTICATED',
            http: { status: 401, headers: { 'WWW-Authenticate': WWW_AUTHENTICATE } },
          },
        });
      }
    },
  });
}
