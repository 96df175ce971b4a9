/**
 * `shuttle/opentelemetry`: OpenTelemetry tracing for Shuttle engines (src/observability; docs/engine.md,
 * "Observability"). Needs `@opentelemetry/api` installed (an optional peer dependency of the package).
 */
export * from '../observability/opentelemetry';
