// The test bed's certificates, made with openssl: a CA, the apiserver's serving
// certificate, client certificates (the admin is in system:masters), NATS
// server certificates, and the service-account signing key pair.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (error) {
    throw new Error(`openssl ${args[0] ?? ''} failed; the test bed needs openssl on PATH`, {
      cause: error,
    });
  }
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A CA made for one run: it signs the servers' certificates, clients trust `caCert`. */
export interface Ca {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
}

export interface Pki extends Ca {
  readonly serverCert: string;
  readonly serverKey: string;
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
}

export interface ClientCert {
  readonly cert: string;
  readonly key: string;
}

/** A CA alone, in `dir` (ca.crt, ca.key): enough for a nats-server's certificate. */
export async function createCa(dir: string): Promise<Ca> {
  const ca: Ca = { dir, caCert: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key') };
  await openssl([
    'req', '-x509', ...EC_KEY, '-keyout', ca.caKey, '-out', ca.caCert,
    '-days', '30', '-subj', '/CN=kubebus-testbed-ca',
  ]); // prettier-ignore
  return ca;
}

export async function createPki(dir: string): Promise<Pki> {
  const path = (name: string) => join(dir, name);
  const pki: Pki = {
    ...(await createCa(dir)),
    serverCert: path('apiserver.crt'),
    serverKey: path('apiserver.key'),
    serviceAccountKey: path('sa.key'),
    serviceAccountPub: path('sa.pub'),
  };
  await signed(pki, 'apiserver', '/CN=kube-apiserver', [
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1',
    'extendedKeyUsage=serverAuth',
  ]);
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', pki.serviceAccountKey]); // prettier-ignore
  await openssl(['pkey', '-in', pki.serviceAccountKey, '-pubout', '-out', pki.serviceAccountPub]);
  return pki;
}

/**
 * A certificate for a NATS server on loopback: it serves clients and, on
 * routes, is both server and client (the servers of a cluster verify each other).
 */
export async function issueNatsCert(pki: Ca, name: string): Promise<ClientCert> {
  const file = `nats-${name.replace(/[^a-zA-Z0-9-]/g, '_')}`;
  await signed(pki, file, `/CN=${name}`, [
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    'extendedKeyUsage=serverAuth,clientAuth',
  ]);
  return { cert: join(pki.dir, `${file}.crt`), key: join(pki.dir, `${file}.key`) };
}

/** A client certificate for `user` in `groups` (Kubernetes reads CN as user, O as groups). */
export async function issueClientCert(
  pki: Ca,
  user: string,
  groups: readonly string[],
): Promise<ClientCert> {
  const subject = `/CN=${user}${groups.map((group) => `/O=${group}`).join('')}`;
  const name = `client-${user.replace(/[^a-zA-Z0-9-]/g, '_')}`;
  await signed(pki, name, subject, ['extendedKeyUsage=clientAuth']);
  return { cert: join(pki.dir, `${name}.crt`), key: join(pki.dir, `${name}.key`) };
}

async function signed(pki: Ca, name: string, subject: string, extensions: string[]) {
  const key = join(pki.dir, `${name}.key`);
  const csr = join(pki.dir, `${name}.csr`);
  const ext = join(pki.dir, `${name}.ext`);
  writeFileSync(ext, extensions.join('\n') + '\n');
  await openssl(['req', ...EC_KEY, '-keyout', key, '-out', csr, '-subj', subject]);
  await openssl([
    'x509', '-req', '-in', csr, '-CA', pki.caCert, '-CAkey', pki.caKey, '-CAcreateserial',
    '-out', join(pki.dir, `${name}.crt`), '-days', '30', '-extfile', ext,
  ]); // prettier-ignore
}

export function pem(file: string): string {
  return readFileSync(file, 'utf8');
}
