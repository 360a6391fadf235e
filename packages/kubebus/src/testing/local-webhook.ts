// The conversion webhook of operators the test kit runs on its loopback
// servers: a port and a self-signed certificate for 127.0.0.1, made once per
// environment and resource. The CRD it installs points at that URL with the
// certificate as its own CA; the operator it runs serves the webhook there.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { selfSignedCertificate } from '@kubebus/shared/obs';
import { CONVERT_PATH, type ConversionTarget } from '../api/conversion-target.js';
import type { WebhookConfig } from '../host/webhook-config.js';
import { freePort } from '../../../../test/bed/ports.js';

export interface LocalWebhook {
  readonly target: ConversionTarget;
  readonly config: WebhookConfig;
}

/** `name`: the CRD's, so each resource's files are its own */
export async function localWebhook(dir: string, name: string): Promise<LocalWebhook> {
  const port = await freePort();
  const { cert, key } = selfSignedCertificate({
    commonName: 'kubebus-test-conversion-webhook',
    hosts: ['127.0.0.1', 'localhost'],
  });
  const certFile = join(dir, `${name}-conversion.crt`);
  const keyFile = join(dir, `${name}-conversion.key`);
  writeFileSync(certFile, cert);
  writeFileSync(keyFile, key, { mode: 0o600 });
  return {
    target: {
      url: `https://127.0.0.1:${port}${CONVERT_PATH}`,
      caBundle: Buffer.from(cert).toString('base64'),
    },
    config: { host: '127.0.0.1', port, tls: { certFile, keyFile } },
  };
}
