/**
 * Prometheus metrics (docs/server.md "HTTP API", `GET /metrics`): HTTP requests by route and status,
 * latency, and per registry the last sync's outcome, API request count and rate-limit budget.
 * A registry of its own (not prom-client's global one) so several apps can live in one process.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'dm_registry_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'dm_registry_http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames: ['route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });
  readonly syncs = new Counter({
    name: 'dm_registry_syncs_total',
    help: 'Registry syncs by outcome',
    labelNames: ['registry', 'status'] as const,
    registers: [this.registry],
  });
  readonly syncRequests = new Gauge({
    name: 'dm_registry_sync_api_requests',
    help: 'Source API requests the last sync of a registry made',
    labelNames: ['registry'] as const,
    registers: [this.registry],
  });
  readonly rateLimitRemaining = new Gauge({
    name: 'dm_registry_source_rate_limit_remaining',
    help: 'Rate-limit budget the source reported after the last sync',
    labelNames: ['registry'] as const,
    registers: [this.registry],
  });
  readonly upstreamDigestMismatches = new Counter({
    name: 'dm_registry_upstream_digest_mismatches_total',
    help: 'Times an upstream answered another digest for a version the mirror stored (the stored one is served)',
    registers: [this.registry],
  });
  readonly quarantinedVersions = new Counter({
    name: 'dm_registry_quarantined_versions_total',
    help: 'Versions a sync found changed after they were first seen (docs/integrity-store.md)',
    labelNames: ['registry'] as const,
    registers: [this.registry],
  });
  readonly versions = new Gauge({
    name: 'dm_registry_versions',
    help: 'Template versions in the serving index',
    labelNames: ['registry'] as const,
    registers: [this.registry],
  });
  /** Read at each scrape (one grouped query), so accepts, reverts and restarts never leave it stale. */
  private openQuarantines: (() => Promise<readonly { registry: string; open: number }[]>) | undefined;
  readonly openQuarantinesGauge = new Gauge({
    name: 'dm_registry_open_quarantines',
    help: 'Versions quarantined now: changed after they were first seen and not accepted (docs/integrity-store.md)',
    labelNames: ['registry'] as const,
    registers: [this.registry],
    collect: async () => {
      if (!this.openQuarantines) return;
      const counts = await this.openQuarantines();
      this.openQuarantinesGauge.reset();
      for (const { registry, open } of counts) this.openQuarantinesGauge.inc({ registry }, open);
    },
  });

  /** Where the open-quarantines gauge reads its counts, by metrics label (private ones summed). */
  countOpenQuarantines(read: () => Promise<readonly { registry: string; open: number }[]>): void {
    this.openQuarantines = read;
  }
}
