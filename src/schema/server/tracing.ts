import { context, trace, type Span } from '@opentelemetry/api';
import {
  getOperationAST,
  isObjectType,
  responsePathAsArray,
  type DocumentNode,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { inSpan, recordError, tracer, tracingOn } from '../../ops/tracing.js';

// A span per GraphQL operation, around its parsing, validation, authentication and execution (a compiled
// read's statement included), and one per resolver of a field that has its own: root fields, relations,
// computed fields. Exposed columns (Pothos' expose*) and default resolvers only read a property of their
// parent, so they get none. Resolver spans are children of the operation's span. A subscription's span
// covers its start, not the events that follow. Registered only with tracing on.

// The semantic conventions' names for GraphQL are still incubating: they are written out here.
const OPERATION_NAME = 'graphql.operation.name';
const OPERATION_TYPE = 'graphql.operation.type';
const FIELD_PATH = 'graphql.field.path';

export const graphqlTracing: Plugin = {
  instrumentation: {
    operation: (_payload, wrapped) => inSpan('GraphQL Operation', {}, async () => wrapped()),
  },
  onSchemaChange({ schema }) {
    traceResolvers(schema);
  },
  // Named once the document is parsed, so that an operation refused by validation has its name too.
  onValidate({ params, context }) {
    nameOperation(params.documentAST, context.params.operationName);
  },
  onExecutionResult({ result }) {
    const span = trace.getActiveSpan();
    if (!span || isAsyncIterable(result)) return;
    for (const { errors } of Array.isArray(result) ? result : [result]) {
      for (const error of errors ?? []) recordError(span, error);
    }
  },
};

/** Names the operation's span as the semantic conventions do: `query Campaigns`, or the type alone. */
function nameOperation(document: DocumentNode, operationName: string | null | undefined): void {
  const span = trace.getActiveSpan();
  const operation = getOperationAST(document, operationName);
  if (!span || !operation) return;
  const name = operation.name?.value;
  span.updateName(name ? `${operation.operation} ${name}` : operation.operation);
  span.setAttribute(OPERATION_TYPE, operation.operation);
  if (name) span.setAttribute(OPERATION_NAME, name);
}

// Plugins that change the schema make a new one of the same fields: each field is wrapped once.
const traced = new WeakSet<GraphQLField<unknown, unknown>>();

/** Wraps the resolvers that do more than read a property of their parent. */
function traceResolvers(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!field.resolve || field.extensions.pothosExposedField || traced.has(field)) continue;
      traced.add(field);
      field.resolve = tracedResolver(`${type.name}.${field.name}`, field.resolve);
    }
  }
}

function tracedResolver(name: string, resolve: GraphQLFieldResolver<unknown, unknown>): GraphQLFieldResolver<unknown, unknown> {
  return (source, args, ctx, info) => {
    if (!tracingOn()) return resolve(source, args, ctx, info);
    const span = tracer().startSpan(name, { attributes: { [FIELD_PATH]: responsePathAsArray(info.path).join('.') } });
    let result: unknown;
    try {
      result = context.with(trace.setSpan(context.active(), span), resolve, undefined, source, args, ctx, info);
    } catch (error) {
      ended(span, error);
      throw error;
    }
    if (!(result instanceof Promise)) {
      span.end();
      return result;
    }
    return result.then(
      (value: unknown) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        ended(span, error);
        throw error;
      },
    );
  };
}

function ended(span: Span, error: unknown): void {
  recordError(span, error);
  span.end();
}
