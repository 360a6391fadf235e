import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import { describe, it } from 'node:test';
import { selfSignedCertificate } from './self-signed-certificate.js';

describe('selfSignedCertificate', () => {
  const made = selfSignedCertificate({
    commonName: 'kubebus-metrics',
    hosts: ['localhost', 'pod-1', '127.0.0.1', '::1'],
    now: new Date('2026-12-01T00:00:00Z'),
    days: 30,
  });
  const x509 = new X509Certificate(made.cert);

  it('is a certificate signed by its own key, for the names and addresses given', () => {
    assert.equal(x509.verify(createPublicKey(createPrivateKey(made.key))), true);
    assert.equal(x509.subject, 'CN=kubebus-metrics');
    assert.equal(x509.issuer, x509.subject);
    assert.equal(x509.ca, false);
    assert.equal(
      x509.subjectAltName,
      'DNS:localhost, DNS:pod-1, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    );
    assert.equal(x509.checkHost('pod-1'), 'pod-1');
    assert.equal(x509.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(new Date(x509.validTo).toISOString(), '2026-12-31T00:00:00.000Z');
    assert.deepEqual(x509.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  });

  it('serves TLS, and a client that pins it verifies it', async () => {
    const now = selfSignedCertificate({ commonName: 'x', hosts: ['localhost'] });
    const server = createServer({ cert: now.cert, key: now.key }, (_, res) => res.end('ok'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const socket = connect({ port, host: '127.0.0.1', servername: 'localhost', ca: now.cert });
    await once(socket, 'secureConnect');
    assert.equal(socket.authorized, true);
    socket.destroy();
    server.close();
  });
});
