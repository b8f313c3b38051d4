/**
 * Prometheus metrics (docs/server.md "HTTP API", `GET /metrics`): HTTP requests by route and status,
 * latency, and per registry the last sync's outcome, API request count and rate-limit budget.
 * A registry of its own (not prom-client's global one) so several apps can live in one process.
 *
 * The two per-request metrics are counted in plain numbers on the request path (`requestSlot`):
 * a labelled prom-client `inc()` or `observe()` validates and hashes its labels on every call,
 * which was a measurable part of a resolve (docs/server.md "Read path"). The request counter is a
 * prom-client Counter whose collect hook adds the counts gathered since the last read; the latency
 * histogram is `RequestDurations` below, which prom-client's registry reads through `get()`.
 */
import { Counter, Gauge, type Histogram, Registry } from 'prom-client';
import type { AdmissionCounters } from './admission.js';

/** Request latency buckets, seconds. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5] as const;

/** One series of the histogram, as prom-client's Histogram#get() gives it. */
interface DurationValue {
  labels: { le?: number | '+Inf'; route: string };
  value: number;
  metricName: string;
}

/** One route's latency observations: a count per bucket (not cumulative), their sum and count. */
interface RouteDurations {
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * `dm_registry_http_request_duration_seconds`, a histogram by route, with the exposition of a
 * prom-client Histogram (the same `_bucket{le,route}`, `_sum` and `_count` series) and an observe
 * that is a bucket search and three additions.
 */
export class RequestDurations {
  readonly name = 'dm_registry_http_request_duration_seconds';
  readonly help = 'HTTP request latency';
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly routes = new Map<string, RouteDurations>();

  /** The observations of `route`, to be kept by the caller (see `observeDuration`). */
  route(route: string): RouteDurations {
    let durations = this.routes.get(route);
    if (!durations) {
      durations = { buckets: new Float64Array(DURATION_BUCKETS.length), sum: 0, count: 0 };
      this.routes.set(route, durations);
    }
    return durations;
  }

  observe(labels: { route: string }, seconds: number): void {
    observeDuration(this.route(labels.route), seconds);
  }

  /** Zeroes every route's observations (in place: the tracker's slots keep their objects). */
  reset(): void {
    for (const d of this.routes.values()) {
      d.buckets.fill(0);
      d.sum = 0;
      d.count = 0;
    }
  }

  async get(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    values: DurationValue[];
    aggregator: 'sum';
  }> {
    const values: DurationValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const [route, d] of this.routes) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += d.buckets[i]!;
        values.push({ labels: { le, route }, value: cumulative, metricName: bucket });
      });
      values.push(
        { labels: { le: '+Inf', route }, value: d.count, metricName: bucket },
        { labels: { route }, value: d.sum, metricName: `${this.name}_sum` },
        { labels: { route }, value: d.count, metricName: `${this.name}_count` },
      );
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    };
  }
}

/** Records one observation (seconds) in a route's durations. */
export function observeDuration(d: RouteDurations, seconds: number): void {
  for (let i = 0; i < DURATION_BUCKETS.length; i++) {
    if (seconds <= DURATION_BUCKETS[i]!) {
      d.buckets[i]!++;
      break;
    }
  }
  d.sum += seconds;
  d.count++;
}

/** What a request adds to the metrics: kept per method, route and status by the request tracker. */
export interface RequestSlot {
  /** Requests counted since the counter was last read. */
  pending: number;
  readonly labels: { method: string; route: string; status: string };
  readonly durations: RouteDurations;
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly slots: RequestSlot[] = [];
  readonly requests: Counter<'method' | 'route' | 'status'> = new Counter({
    name: 'dm_registry_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
    // Read by every scrape and every get(): adds what the slots counted meanwhile.
    collect: () => {
      for (const slot of this.slots) {
        if (slot.pending > 0) {
          this.requests.inc(slot.labels, slot.pending);
          slot.pending = 0;
        }
      }
    },
  });
  readonly duration = new RequestDurations();
  readonly syncs = new Counter({
    name: 'dm_registry_syncs_total',
    help: 'Registry syncs by outcome',
    labelNames: ['registry', 'status'] as const,
    registers: [this.registry],
  });
  /**
   * Each registry's last sync figures, by registry id: a private registry's are added up with the
   * other private ones' under one label at each scrape (sums of requests, the lowest budget), never
   * one overwriting another's (docs/server.md, "HTTP API").
   */
  private readonly lastSyncs = new Map<
    number,
    { label: string; apiRequests: number; rateLimitRemaining: number | null }
  >();
  readonly syncRequests = new Gauge({
    name: 'dm_registry_sync_api_requests',
    help: 'Source API requests the last sync of a registry made (private registries: the sum of theirs)',
    labelNames: ['registry'] as const,
    registers: [this.registry],
    collect: () => {
      this.syncRequests.reset();
      for (const s of this.lastSyncs.values()) this.syncRequests.inc({ registry: s.label }, s.apiRequests);
    },
  });
  readonly rateLimitRemaining = new Gauge({
    name: 'dm_registry_source_rate_limit_remaining',
    help: 'Rate-limit budget the source reported after the last sync (private registries: the lowest of theirs)',
    labelNames: ['registry'] as const,
    registers: [this.registry],
    collect: () => {
      const lowest = new Map<string, number>();
      for (const s of this.lastSyncs.values()) {
        if (s.rateLimitRemaining === null) continue;
        lowest.set(s.label, Math.min(lowest.get(s.label) ?? Number.POSITIVE_INFINITY, s.rateLimitRemaining));
      }
      this.rateLimitRemaining.reset();
      for (const [registry, remaining] of lowest) this.rateLimitRemaining.set({ registry }, remaining);
    },
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
  /**
   * Read at each scrape, before the exposition (`exposition`): each registry's version count by
   * metrics label, and which registries exist (a deleted one's last sync figures are dropped).
   */
  private versionCounts:
    | (() => Promise<readonly { id: number; registry: string; versions: number }[] | undefined>)
    | undefined;
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

  /** The bounded kinds of work (admission.ts), read at each scrape. */
  private readonly admissions: { work: string; counters: AdmissionCounters }[] = [];
  readonly boundedWork = new Gauge({
    name: 'dm_registry_bounded_work',
    help: 'Work admitted under a bound (docs/server.md, "Bounds on one caller\'s work"): running and waiting now, the most that ever ran at once, and how often it was refused',
    labelNames: ['work', 'state'] as const,
    registers: [this.registry],
    collect: () => {
      for (const { work, counters } of this.admissions) {
        for (const state of ['running', 'waiting', 'peakRunning', 'refused'] as const) {
          this.boundedWork.set({ work, state }, counters[state]);
        }
      }
    },
  });

  constructor() {
    // The registry reads a metric through name, type, get() and reset() only.
    this.registry.registerMetric(this.duration as unknown as Histogram);
  }

  /**
   * A slot counting requests of one method, route and status (and the route's latency); the
   * caller keeps it (a bounded set: routes come from the app's route table).
   */
  requestSlot(method: string, route: string, status: number): RequestSlot {
    const slot: RequestSlot = {
      pending: 0,
      labels: { method, route, status: String(status) },
      durations: this.duration.route(route),
    };
    this.slots.push(slot);
    return slot;
  }

  /**
   * The exposition text: every series, or (`withPrivate` false, what an anonymous scrape gets)
   * without the series labelled `privateLabel`, the sums over private registries: how many
   * versions, syncs and quarantines private registries have is not public (docs/server.md,
   * "HTTP API").
   */
  async exposition(withPrivate: boolean, privateLabel: string): Promise<string> {
    // Unreadable (the database down): no versions series, and the sync figures are kept.
    const counts = await this.versionCounts?.();
    this.versions.reset();
    if (counts) {
      for (const { registry, versions } of counts) this.versions.inc({ registry }, versions);
      const live = new Set(counts.map((c) => c.id));
      for (const id of this.lastSyncs.keys()) if (!live.has(id)) this.lastSyncs.delete(id);
    }
    const text = await this.registry.metrics();
    if (withPrivate) return text;
    const label = `registry="${privateLabel}"`;
    return text
      .split('\n')
      .filter((line) => line.startsWith('#') || !line.includes(label))
      .join('\n');
  }

  /** Where the open-quarantines gauge reads its counts, by metrics label (private ones summed). */
  countOpenQuarantines(read: () => Promise<readonly { registry: string; open: number }[]>): void {
    this.openQuarantines = read;
  }

  /**
   * Where the versions gauge reads each registry's version count, by metrics label: the private
   * registries' counts are added up under their one label, not the last one synced.
   */
  countVersions(
    read: () => Promise<readonly { id: number; registry: string; versions: number }[] | undefined>,
  ): void {
    this.versionCounts = read;
  }

  /** A registry's last sync (`label`: its name, or the private label): what the sync gauges show. */
  recordSync(
    registryId: number,
    label: string,
    outcome: { apiRequests: number; rateLimitRemaining: number | null },
  ): void {
    const previous = this.lastSyncs.get(registryId);
    this.lastSyncs.set(registryId, {
      label,
      apiRequests: outcome.apiRequests,
      // A sync that learnt no budget (a directory, a failure before any request) keeps the last one.
      rateLimitRemaining: outcome.rateLimitRemaining ?? previous?.rateLimitRemaining ?? null,
    });
  }

  /** Reports the counters of a bounded kind of work as `dm_registry_bounded_work{work}`. */
  watchAdmission(work: string, counters: AdmissionCounters): void {
    this.admissions.push({ work, counters });
  }
}
