import { useDisableIntrospection } from '@envelop/disable-introspection';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { GraphQLError, type ValidationContext } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { GraphQLContext } from '../context.js';
import { maskGraphQLError } from '../errors.js';
import { buildSchema } from '../index.js';
import type { Authenticator } from '../../services/auth.js';
import { serviceContext, type Principal, type ServiceEnv } from '../../services/context.js';
import { AuthenticationError } from '../../services/errors.js';
import type { RateLimiter } from '../../ops/rate-limits.js';
import { CSRF_HEADER } from '../../http/cors.js';
import { WWW_AUTHENTICATE } from '../../http/errors.js';
import { graphiqlOptions, graphiqlPage } from './graphiql.js';
import { hideSchemaNames } from './hidden-schema.js';
import { graphqlInput } from './input.js';
import { acceptedMediaTypes } from './media-types.js';
import { csrfPrevention } from './csrf.js';
import { errorShape } from './error-shape.js';
import { compiledReads } from './compiled-reads.js';
import type { KnownReads } from './known-reads.js';
import { deferStream } from './defer-stream.js';
import { costLimit } from './cost.js';
import { graphqlMetrics } from './metrics.js';
import { graphqlRateLimits } from './rate-limits.js';
import { readOnlyKeys } from './read-only-keys.js';
import { subscriptionsEndWithCredentials } from './ended-credentials.js';
import { KeyWatch } from '../../services/api-keys/watch.js';
import { graphqlTracing } from './tracing.js';
import { variableCoercion } from './variables.js';
import { tracingOn } from '../../ops/tracing.js';
import { trustedDocuments, type TrustedDocuments } from './trusted-documents.js';
import { currentRequestScope, type RequestScope } from '../../http/request-scope.js';

export interface GraphQLDeps {
  env: ServiceEnv;
  authenticator: Authenticator;
  introspection: boolean;
  graphiql: boolean;
  /** A token GraphiQL opens with in its headers (development's demo token). */
  graphiqlToken?: string | undefined;
  /** Queries the schema can say as one SQL statement answered by it (see compiled-reads.ts). */
  compiledReads: boolean;
  /** When set, the only operations run (see trusted-documents.ts). */
  trustedDocuments?: TrustedDocuments | undefined;
  rateLimiter: RateLimiter;
  /** Where compiled reads remember the documents they answered, for the lean lane. */
  knownReads: KnownReads;
}

/** Limits on what one operation may ask for, against abusive or accidental giant queries. */
export const QUERY_LIMITS = { maxDepth: 10, maxAliases: 20, maxTokens: 2_000, maxDirectives: 20 };

/**
 * An operation over one of the limits is a validation error with a message that says what to change and
 * a code to branch on, instead of graphql-armor's bare "Syntax Error" without one.
 */
function refusal(code: string, explain: (found: string) => string) {
  return (context: ValidationContext | null, refused: GraphQLError): void => {
    const found = /found (\d+)/.exec(refused.message)?.[1] ?? 'more';
    context?.reportError(new GraphQLError(explain(found), { extensions: { code } }));
  };
}

const { maxDepth, maxAliases, maxDirectives } = QUERY_LIMITS;
const LIMIT_REFUSALS = {
  maxDepth: refusal(
    'QUERY_TOO_DEEP',
    (found) => `This operation's depth, ${found}, is above the limit of ${maxDepth}: select fewer nested fields.`,
  ),
  maxAliases: refusal(
    'TOO_MANY_ALIASES',
    (found) => `This operation uses ${found} aliases, above the limit of ${maxAliases}: split it into several operations.`,
  ),
  maxDirectives: refusal('TOO_MANY_DIRECTIVES', (found) => `This operation uses ${found} directives, above the limit of ${maxDirectives}.`),
};

const reported = (name: keyof typeof LIMIT_REFUSALS) => ({ propagateOnRejection: false, onReject: [LIMIT_REFUSALS[name]] });

/** What resolvers (and compiled reads) receive for an authenticated caller; the access log learns who it is. */
export function graphqlContext(env: ServiceEnv, user: Principal, scope: RequestScope): GraphQLContext {
  scope.userId = user.id;
  return { user, prisma: env.db, service: serviceContext(env, user, scope.requestId, scope) };
}

/** What the HTTP app hands yoga with each request. */
export interface GraphQLServerContext {
  scope: RequestScope;
}

export function createGraphQLServer(deps: GraphQLDeps): YogaServerInstance<GraphQLServerContext, GraphQLContext> {
  return createYoga<GraphQLServerContext, GraphQLContext>({
    schema: buildSchema(),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Yoga's default reflects any origin and allows credentials; the app answers CORS for both surfaces.
    cors: false,
    // GraphiQL sends subscriptions as GET requests: it needs the CSRF header like any client.
    graphiql: deps.graphiql ? graphiqlOptions(deps.graphiqlToken, { [CSRF_HEADER]: '1' }) : false,
    renderGraphiQL: graphiqlPage,
    logging: false,
    // The HTTP app limits bodies (http/body-limit.ts); Yoga's own limit would hand the parser a copy of
    // every request with its body piped through a counting stream.
    maxRequestBodySize: false,
    // Yoga hands error masking no context, so the request's logger is found from where it runs.
    maskedErrors: { maskError: (error) => maskGraphQLError(currentRequestScope()?.log ?? deps.env.log)(error) },
    plugins: [
      ...(tracingOn() ? [graphqlTracing] : []),
      errorShape,
      acceptedMediaTypes(),
      csrfPrevention(CSRF_HEADER),
      ...(deps.trustedDocuments ? [trustedDocuments(deps.trustedDocuments)] : []),
      EnvelopArmorPlugin({
        maxDepth: { n: QUERY_LIMITS.maxDepth, ...reported('maxDepth') },
        maxAliases: { n: QUERY_LIMITS.maxAliases, ...reported('maxAliases') },
        // Counted at execution, with the variables: see cost.ts.
        costLimit: { enabled: false },
        maxTokens: { n: QUERY_LIMITS.maxTokens },
        maxDirectives: { n: QUERY_LIMITS.maxDirectives, ...reported('maxDirectives') },
        // Its mask misses enum suggestions and the names in other messages; hideSchemaNames covers them.
        blockFieldSuggestion: { enabled: false },
      }),
      ...(deps.introspection ? [] : [useDisableIntrospection(), hideSchemaNames()]),
      deferStream(),
      graphqlInput,
      readOnlyKeys,
      subscriptionsEndWithCredentials(new KeyWatch(deps.env)),
      graphqlRateLimits(deps.rateLimiter),
      graphqlMetrics,
      variableCoercion,
      costLimit,
      ...(deps.compiledReads ? [compiledReads(deps.knownReads)] : []),
    ],
    context: async ({ request, scope }): Promise<GraphQLContext> => {
      try {
        const user = await deps.authenticator.authenticate(request.headers.get('authorization'));
        return graphqlContext(deps.env, user, scope);
      } catch (error) {
        if (!(error instanceof AuthenticationError)) throw error;
        throw new GraphQLError(error.message, {
          extensions: {
            code: 'UNAUTHENTICATED',
            // `expired` tells a client to get a fresh token rather than to log in again.
            ...(error.reason === 'expired' ? { reason: 'token_expired' } : {}),
            http: { status: 401, headers: { 'WWW-Authenticate': WWW_AUTHENTICATE } },
          },
        });
      }
    },
  });
}
