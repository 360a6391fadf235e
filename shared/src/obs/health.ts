// /healthz, /readyz and /metrics on one small HTTP server per service.
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { listen, type Listening } from './listen.js';

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

  evaluate(kind: 'live' | 'ready'): { ok: boolean; report: string } {
    const checks = kind === 'live' ? this.#liveness : this.#readiness;
    const lines: string[] = [];
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
        lines.push(`[-]${name} failed${typeof result === 'string' ? `: ${result}` : ''}`);
      }
    }
    lines.push(ok ? `${kind === 'live' ? 'healthz' : 'readyz'} check passed` : 'check failed');
    return { ok, report: lines.join('\n') + '\n' };
  }
}

export type HealthServer = Listening;

export async function startHealthServer(options: {
  readonly host: string;
  readonly port: number;
  readonly checks: HealthChecks;
  readonly registry: Registry;
}): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      const { ok, report } = options.checks.evaluate(path === '/readyz' ? 'ready' : 'live');
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(report);
      return;
    }
    if (path === '/metrics') {
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
  return listen(server, options.host, options.port);
}
