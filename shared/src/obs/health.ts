// /healthz and /readyz (and, in the local mode, /metrics) on one small HTTP
// server per service. The probes stay open for the kubelet; what they answer
// off loopback is only which checks pass — a failing check's reason (a NATS
// or apiserver error) is withheld and logged instead, as controller-runtime's
// healthz does ("reason withheld").
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { isLoopbackHost, listen, type Listening } from './listen.js';
import type { Logger } from './logger.js';

export type Check = () => boolean | string;

/** Named checks: a check passes with `true` and fails with `false` or a reason. */
export class HealthChecks {
  readonly #liveness = new Map<string, Check>();
  readonly #readiness = new Map<string, Check>();

  live(name: string, check: Check): void {
    this.#liveness.set(name, check);
  }

  ready(name: string, check: Check): void {
    this.#readiness.set(name, check);
  }

  evaluate(
    kind: 'live' | 'ready',
    withheld = false,
  ): { ok: boolean; report: string; reasons: string } {
    const checks = kind === 'live' ? this.#liveness : this.#readiness;
    const lines: string[] = [];
    const reasons: string[] = [];
    let ok = true;
    for (const [name, check] of checks) {
      let result: boolean | string;
      try {
        result = check();
      } catch (error) {
        result = (error as Error).message;
      }
      if (result === true) lines.push(`[+]${name} ok`);
      else {
        ok = false;
        const reason = typeof result === 'string' ? `: ${result}` : '';
        reasons.push(`${name} failed${reason}`);
        lines.push(`[-]${name} failed${withheld ? ': reason withheld' : reason}`);
      }
    }
    lines.push(ok ? `${kind === 'live' ? 'healthz' : 'readyz'} check passed` : 'check failed');
    return { ok, report: lines.join('\n') + '\n', reasons: reasons.join('; ') };
  }
}

export type HealthServer = Listening;

export async function startHealthServer(options: {
  readonly host: string;
  readonly port: number;
  readonly checks: HealthChecks;
  readonly registry: Registry;
  /** serve /metrics here, unauthenticated: only where nothing but this machine reaches it */
  readonly metrics?: boolean;
  /** where withheld reasons go (each distinct one once in a row) */
  readonly log?: Logger;
}): Promise<HealthServer> {
  const withheld = !isLoopbackHost(options.host);
  let lastLogged = '';
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      const { ok, report, reasons } = options.checks.evaluate(
        path === '/readyz' ? 'ready' : 'live',
        withheld,
      );
      if (withheld && reasons !== lastLogged) {
        lastLogged = reasons;
        if (reasons !== '') options.log?.warn({ probe: path, reasons }, 'a health check fails');
      }
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(report);
      return;
    }
    if (path === '/metrics' && options.metrics !== false) {
      options.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': options.registry.contentType }).end(text);
        },
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
      return;
    }
    res.writeHead(404).end();
  });
  return listen(server, options.host, options.port, {
    purpose: 'health',
    setting: 'KUBEBUS_HEALTH_PORT',
  });
}
