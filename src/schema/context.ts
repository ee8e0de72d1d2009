import type { PrismaClient } from '../generated/prisma/client.js';
import type { Principal, ServiceContext } from '../services/context.js';

/** What a resolver receives: the caller and the service context built once per request. */
export interface GraphQLContext {
  user: Principal;
  prisma: PrismaClient;
  service: ServiceContext;
}
