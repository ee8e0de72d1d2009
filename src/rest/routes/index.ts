import type { RouteDefinition } from '../route.js';
import { agentRoutes } from './agents.js';
import { appointmentRoutes } from './appointments.js';
import { billingRoutes } from './billing.js';
import { campaignRoutes } from './campaigns.js';
import { previewRoutes } from './preview.js';
import { callRoutes } from './calls.js';
import { contactRoutes } from './contacts.js';
import { reportRoutes } from './reports.js';

/** Every v1 endpoint, in the order the OpenAPI document lists them. */
export const v1Routes: RouteDefinition[] = [
  ...contactRoutes,
  ...campaignRoutes,
  ...previewRoutes,
  ...agentRoutes,
  ...billingRoutes,
  ...reportRoutes,
  ...callRoutes,
  ...appointmentRoutes,
];
