import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { assertRootFieldsDeclareAuthorization } from './authorization.js';
import { builder } from './builder.js';
import './types/agent-templates.js';
import './types/agents.js';
import './types/api-keys.js';
import './types/appointments.js';
import './types/billing.js';
import './types/calls.js';
import './types/campaigns.js';
import './types/campaign-history.js';
import './types/campaign-copies.js';
import './types/campaign-variants.js';
import './types/contacts.js';
import './types/compliance.js';
import './types/exemptions.js';
import './types/dispatch-preview.js';
import './types/registries.js';
import './types/exports.js';
import './types/in-call-tools.js';
import './types/live.js';
import './types/phone-numbers.js';
import './types/reports.js';
import './types/retention.js';
import './types/webhooks.js';

let built: GraphQLSchema | undefined;

/** The canonical GraphQL schema; building it fails if a root field declares no authorization. */
export function buildSchema(): GraphQLSchema {
  if (!built) {
    built = builder.toSchema();
    assertRootFieldsDeclareAuthorization(built);
  }
  return built;
}

/** The SDL committed as schema.graphql and published to codegen consumers. */
export function printSchemaSDL(): string {
  return `${printSchema(lexicographicSortSchema(buildSchema()))}\n`;
}
