import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { listen } from './listen.js';

describe('listening on a port', () => {
  it('names the setting that chooses another when the port is taken (two roles on one machine)', async () => {
    const first = await listen(createServer(), '127.0.0.1', 0);
    try {
      await assert.rejects(
        listen(createServer(), '127.0.0.1', first.port, {
          purpose: 'metrics',
          setting: 'KUBEBUS_METRICS_PORT',
        }),
        {
          message: `cannot listen on 127.0.0.1:${String(first.port)} for metrics: the address is in use (another process, or another role of kubebus on this machine); set KUBEBUS_METRICS_PORT to a free port (0: any)`,
        },
      );
    } finally {
      await first.close();
    }
  });
});
