import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE } from '@opentelemetry/semantic-conventions';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { callerContext, recordError, tracer } from '../ops/tracing.js';
import { routeLabel } from './request-metrics.js';

// The path is left out: an export link carries its signature in it. The route pattern says enough.

/** One server span per request, in the caller's trace when it sends a W3C traceparent; mounted only with tracing on. */
export function requestTracing(): MiddlewareHandler {
  return async (c, next) => {
    const caller = callerContext(c.req.header('traceparent'), c.req.header('tracestate'));
    const method = c.req.method;
    const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method } }, caller);
    try {
      await context.with(trace.setSpan(caller, span), next);
    } finally {
      const route = routeLabel(routePath(c));
      span.updateName(`${method} ${route}`);
      span.setAttributes({ [ATTR_HTTP_ROUTE]: route, [ATTR_HTTP_RESPONSE_STATUS_CODE]: c.res.status });
      if (c.error) recordError(span, c.error);
      else if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
