// nats-server's own CPU profile over a bench run (with --profile): the test
// bed's server listens for Go's pprof on a loopback port, and 10-second CPU
// profiles are taken back to back until stopped, each saved beside the V8
// profiles. `go tool pprof -top <dir>/nats-server-*.pprof` merges them.
import { request } from 'node:http';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const SLICE_SECONDS = 10;

export interface NatsProfiler {
  stop(): Promise<void>;
}

export function profileNats(profPort: number, dir: string, label: string): NatsProfiler {
  mkdirSync(dir, { recursive: true });
  const state = { stopped: false };
  const loop = (async () => {
    for (let slice = 0; !state.stopped; slice++) {
      const file = join(dir, `nats-server-${label}-${String(slice).padStart(3, '0')}.pprof`);
      await new Promise<void>((resolve) => {
        const req = request(
          `http://127.0.0.1:${profPort}/debug/pprof/profile?seconds=${SLICE_SECONDS}`,
          (res) => {
            pipeline(res, createWriteStream(file)).then(resolve, () => {
              resolve();
            });
          },
        );
        req.on('error', () => {
          state.stopped = true;
          resolve();
        });
        req.end();
      });
    }
  })();
  return {
    stop: async () => {
      state.stopped = true;
      await loop;
    },
  };
}
