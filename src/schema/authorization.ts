import { isObjectType, type GraphQLSchema } from 'graphql';

/**
 * Fails closed: every field of Query, Mutation and Subscription must declare `authScopes`, so a new
 * root field cannot ship without someone deciding who may call it. Runs whenever the schema is built.
 */
export function assertRootFieldsDeclareAuthorization(schema: GraphQLSchema): void {
  const missing: string[] = [];
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    if (!root || !isObjectType(root)) continue;
    for (const field of Object.values(root.getFields())) {
      const options = field.extensions?.pothosOptions as { authScopes?: unknown } | undefined;
      if (!options?.authScopes) missing.push(`${root.name}.${field.name}`);
    }
  }
  if (missing.length > 0) {
    throw new Error(`These root fields declare no authorization (add authScopes): ${missing.join(', ')}`);
  }
}
