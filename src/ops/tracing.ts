import {
  context,
  createTraceState,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import type { BasicTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-base';

// OpenTelemetry tracing, exported over OTLP/HTTP when the standard settings name a collector
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; the exporter and the sampler read
// the rest of the OTEL_* settings themselves). Unconfigured, the SDK is never loaded, and every
// instrumentation point costs one call of tracingOn(): no span, attribute object or context switch.

let provider: BasicTracerProvider | undefined;
let sdkTracer: Tracer | undefined;

/** Whether spans are being recorded; instrumentation points check it before building anything. */
export function tracingOn(): boolean {
  return sdkTracer !== undefined;
}

/** The tracer spans start from; while tracing is off, the API's no-op one. */
export function tracer(): Tracer {
  return sdkTracer ?? trace.getTracer('callflow');
}

/** Whether the environment asks for traces to be exported. */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts the SDK when the environment asks for it, or always with `exporter` (tests, which then get
 * each span as it ends). Call it before anything else, so that every span has its context manager.
 */
export async function startTracing(options: { exporter?: SpanExporter } = {}): Promise<boolean> {
  if (provider || (!options.exporter && !tracingConfigured())) return false;
  const [{ AsyncLocalStorageContextManager }, sdk, { defaultResource, resourceFromAttributes }, { ATTR_SERVICE_NAME }] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const processor = options.exporter
    ? new sdk.SimpleSpanProcessor(options.exporter)
    : new sdk.BatchSpanProcessor(new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter());
  // The sampler comes from OTEL_TRACES_SAMPLER and its argument (parent-based, always on by default).
  provider = new sdk.BasicTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME || 'callflow' })),
    spanProcessors: [processor],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  sdkTracer = provider.getTracer('callflow');
  return true;
}

/** Exports the spans ended so far. */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush();
}

/** Exports what is left and turns tracing off (a shutdown hook; tests start it again afterwards). */
export async function shutdownTracing(): Promise<void> {
  const stopping = provider;
  provider = undefined;
  sdkTracer = undefined;
  await stopping?.shutdown();
  trace.disable();
  context.disable();
}

/** Marks a span as failed by `error`. */
export function recordError(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

const NOT_RECORDING = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Runs `fn` in a span (its children find it as their parent) that ends when `fn` settles, failed if it
 * throws. While tracing is off, `fn` runs alone, handed a span that records nothing.
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, options: SpanOptions = {}): Promise<T> {
  if (!sdkTracer) return fn(NOT_RECORDING);
  return sdkTracer.startActiveSpan(name, { ...options, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Like inSpan, for background work: the span starts a trace of its own, linked to the span under way
 * when there is one (the request that woke the job), so a long loop does not grow that request's trace.
 */
export function inJobSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, options: SpanOptions = {}): Promise<T> {
  if (!sdkTracer) return fn(NOT_RECORDING);
  const cause = trace.getActiveSpan()?.spanContext();
  return inSpan(name, attributes, fn, { ...options, root: true, links: cause ? [{ context: cause }] : [] });
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The caller's trace from its W3C `traceparent` (and `tracestate`) headers, or a new one when they are
 * absent or malformed. Version 00 has exactly four fields; later versions may add more.
 */
export function callerContext(traceparent: string | undefined, tracestate: string | undefined): Context {
  const match = traceparent ? TRACEPARENT.exec(traceparent.trim()) : null;
  if (!match || match[1] === 'ff' || (match[1] === '00' && match[5] !== undefined)) return ROOT_CONTEXT;
  const caller = {
    traceId: match[2]!,
    spanId: match[3]!,
    traceFlags: parseInt(match[4]!, 16) & 1,
    isRemote: true,
    ...(tracestate ? { traceState: createTraceState(tracestate) } : {}),
  };
  return isSpanContextValid(caller) ? trace.setSpanContext(ROOT_CONTEXT, caller) : ROOT_CONTEXT;
}
