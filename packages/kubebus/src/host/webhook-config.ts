// Where `kubebus run` serves the conversion webhook of an operator whose
// resource has several versions: its port and the mounted certificate (the
// Secret cert-manager fills, or one made by hand). Parsed once by the CLI.
import { z } from 'zod';

export const WebhookEnv = z.object({
  KUBEBUS_WEBHOOK_HOST: z.string().min(1).default('0.0.0.0'),
  /** controller-runtime's webhook port */
  KUBEBUS_WEBHOOK_PORT: z.coerce.number().int().min(0).max(65535).default(9443),
  /** the serving certificate and key (tls.crt, tls.key of the Secret); unset: self-signed */
  KUBEBUS_WEBHOOK_CERT: z.string().min(1).optional(),
  KUBEBUS_WEBHOOK_KEY: z.string().min(1).optional(),
  /** the largest ConversionReview read (8 MiB); a larger one is answered 413 */
  KUBEBUS_WEBHOOK_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(8 * 1024 * 1024),
});

export interface WebhookConfig {
  readonly host: string;
  readonly port: number;
  /** the largest ConversionReview read; default 8 MiB */
  readonly maxBytes?: number;
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
}

export function webhookConfig(env: z.output<typeof WebhookEnv>): WebhookConfig {
  const cert = env.KUBEBUS_WEBHOOK_CERT;
  const key = env.KUBEBUS_WEBHOOK_KEY;
  if ((cert === undefined) !== (key === undefined))
    throw new Error(
      'KUBEBUS_WEBHOOK_CERT and KUBEBUS_WEBHOOK_KEY go together: set both or neither',
    );
  return Object.freeze({
    host: env.KUBEBUS_WEBHOOK_HOST,
    port: env.KUBEBUS_WEBHOOK_PORT,
    maxBytes: env.KUBEBUS_WEBHOOK_MAX_BYTES,
    ...(cert === undefined || key === undefined ? {} : { tls: { certFile: cert, keyFile: key } }),
  });
}
