// The reconciler's configuration: environment variables, parsed once by zod.
import {
  CommonEnv,
  commonConfig,
  durationMs,
  positiveInt,
  statusPartitionsEnv,
  watchNamespacesEnv,
  workerConfig,
  workerEnv,
} from '@kubebus/shared/config';
import { MAX_CALLS_PER_OBJECT } from '@kubebus/shared/bus';
import { z } from 'zod';

export const SinkAuthModes = ['oidc', 'token', 'none'] as const;
export type SinkAuthMode = (typeof SinkAuthModes)[number];

/** Who may POST to the CloudEvents sink. */
export type SinkAuthConfig =
  | { readonly mode: 'none' }
  | { readonly mode: 'token'; readonly tokenFile: string }
  | {
      readonly mode: 'oidc';
      readonly audience: string;
      /** token subjects allowed (system:serviceaccount:<ns>:<name>); empty: any the audience admits */
      readonly subjects: readonly string[];
    };

/** 127.0.0.0/8, ::1 and localhost: a listener no other host reaches. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

export const ReconcilerConfigSchema = z
  .object({
    ...CommonEnv,
    ...workerEnv({
      maxAttempts: 10,
      backoffBase: '500ms',
      backoffCap: '5m',
      replicaId: 'reconciler',
    }),
    KUBEBUS_STATUS_PARTITIONS: statusPartitionsEnv(),
    /**
     * Deliveries of one work mark never answered — its process died or hung
     * past the ack wait reconciling it — before the object is parked (ADR 0022)
     */
    KUBEBUS_MAX_CRASHES: positiveInt(5),
    /** the namespaces the operator works in (its watcher's); empty: every namespace */
    KUBEBUS_WATCH_NAMESPACES: watchNamespacesEnv(),
    KUBEBUS_FIELD_MANAGER: z.string().default('kubebus-databasecluster'),
    /** the CloudEvents HTTP sink for Knative; 0 turns it off */
    KUBEBUS_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(0),
    /** the sink's address; KUBEBUS_HEALTH_HOST unless set */
    KUBEBUS_HTTP_HOST: z.string().min(1).optional(),
    /** who may POST: oidc (Knative's sender identity), token (a shared secret) or none (loopback only) */
    KUBEBUS_HTTP_AUTH: z.enum(SinkAuthModes).optional(),
    /** oidc: the audience the sender's token must be issued for (its sink's `audience`) */
    KUBEBUS_HTTP_OIDC_AUDIENCE: z.string().min(1).optional(),
    /** oidc: comma-separated token subjects allowed (403 for others); unset: any */
    KUBEBUS_HTTP_OIDC_SUBJECTS: z.string().optional(),
    /** token: a file holding the shared token (a mounted Secret; read again as it changes) */
    KUBEBUS_HTTP_TOKEN_FILE: z.string().min(1).optional(),
    /** a cap on a request body below the NATS server's max_payload (which always applies) */
    KUBEBUS_HTTP_MAX_BYTES: z.coerce.number().int().positive().optional(),
    /** requests being handled at once; more are answered 503 with Retry-After */
    KUBEBUS_HTTP_MAX_IN_FLIGHT: positiveInt(64),
    /** open connections at once (idle keep-alive ones included); more are closed */
    KUBEBUS_HTTP_MAX_CONNECTIONS: positiveInt(256),
    /** time to receive a request's headers, and the whole request */
    KUBEBUS_HTTP_HEADERS_TIMEOUT: durationMs('10s'),
    KUBEBUS_HTTP_REQUEST_TIMEOUT: durationMs('30s'),
    /** an idle keep-alive connection is closed after this */
    KUBEBUS_HTTP_KEEPALIVE_TIMEOUT: durationMs('30s'),
    /** consume the work stream (off when the reconciler runs only as a Knative sink) */
    KUBEBUS_CONSUME: z.enum(['true', 'false']).default('true'),
    /** how long a read waits for the bus to record this process' own write before one GET instead (ADR 0019) */
    KUBEBUS_READ_YOUR_WRITES_WAIT: durationMs('2s'),
    /**
     * How old another reconcile's claim of an external call (ctx.once) must
     * be before it is taken over: longer than a call may run (ADR 0035).
     */
    KUBEBUS_ONCE_CLAIM_TIMEOUT: durationMs('60s'),
    /**
     * How often an object whose ctx.apply met another owner's name
     * (AlreadyOwned) looks at it again: nothing wakes it when the other lets go.
     */
    KUBEBUS_CLAIM_RETRY: durationMs('30s').refine((ms) => ms >= 1_000, {
      message: 'at least 1s: a refused name is looked at again this often, spending no retries',
    }),
    /** the external calls (ctx.once) one object may have recorded: the bucket is all objects' */
    KUBEBUS_ONCE_MAX_PER_OBJECT: positiveInt(MAX_CALLS_PER_OBJECT),
    /**
     * The NATS user of the operator's own state account (ADR 0015): `setup`'s
     * object stores and buckets live there, out of reach of kubebus' subjects.
     * Unset: setup gets the process's connection (kubebus dev, the test kit).
     */
    KUBEBUS_STATE_NATS_USER: z.string().min(1).optional(),
    KUBEBUS_STATE_NATS_PASSWORD: z.string().optional(),
    KUBEBUS_STATE_NATS_PASSWORD_FILE: z.string().optional(),
  })
  .superRefine((env, ctx) => {
    if (env.KUBEBUS_HTTP_PORT === 0) return;
    const host = env.KUBEBUS_HTTP_HOST ?? env.KUBEBUS_HEALTH_HOST;
    const mode = env.KUBEBUS_HTTP_AUTH ?? 'none';
    const problem = (variable: string, message: string) => {
      ctx.addIssue({ code: 'custom', path: [variable], message });
    };
    if (mode === 'none' && !isLoopback(host))
      problem(
        'KUBEBUS_HTTP_AUTH',
        `the CloudEvents sink on ${host}:${env.KUBEBUS_HTTP_PORT} would take events from anyone: set KUBEBUS_HTTP_AUTH=oidc (with KUBEBUS_HTTP_OIDC_AUDIENCE) or token (with KUBEBUS_HTTP_TOKEN_FILE), or bind it to loopback (KUBEBUS_HTTP_HOST=127.0.0.1)`,
      );
    if (mode === 'oidc' && env.KUBEBUS_HTTP_OIDC_AUDIENCE === undefined)
      problem(
        'KUBEBUS_HTTP_OIDC_AUDIENCE',
        "KUBEBUS_HTTP_AUTH=oidc needs the audience senders' tokens are issued for (the sink's audience)",
      );
    // any workload may have a token for a public audience projected: the audience alone
    // lets every pod of the cluster send events, forge dead letters and fill the DLQ
    if (mode === 'oidc' && subjectsOf(env.KUBEBUS_HTTP_OIDC_SUBJECTS).length === 0)
      problem(
        'KUBEBUS_HTTP_OIDC_SUBJECTS',
        "KUBEBUS_HTTP_AUTH=oidc needs the token subjects that may send (Knative's Trigger identity, system:serviceaccount:<namespace>:<trigger>-oidc-eventing.knative.dev-trigger): any pod can have a token for the audience",
      );
    if (mode === 'token' && env.KUBEBUS_HTTP_TOKEN_FILE === undefined)
      problem(
        'KUBEBUS_HTTP_TOKEN_FILE',
        'KUBEBUS_HTTP_AUTH=token needs the file that holds the token',
      );
    if (env.KUBEBUS_HTTP_HEADERS_TIMEOUT > env.KUBEBUS_HTTP_REQUEST_TIMEOUT)
      problem('KUBEBUS_HTTP_HEADERS_TIMEOUT', 'at most KUBEBUS_HTTP_REQUEST_TIMEOUT');
  })
  .transform((env) => ({
    ...commonConfig(env),
    ...workerConfig(env),
    statusPartitions: env.KUBEBUS_STATUS_PARTITIONS,
    maxCrashes: env.KUBEBUS_MAX_CRASHES,
    watchNamespaces: env.KUBEBUS_WATCH_NAMESPACES,
    fieldManager: env.KUBEBUS_FIELD_MANAGER,
    http: {
      host: env.KUBEBUS_HTTP_HOST ?? env.KUBEBUS_HEALTH_HOST,
      port: env.KUBEBUS_HTTP_PORT,
      ...(env.KUBEBUS_HTTP_MAX_BYTES === undefined ? {} : { maxBytes: env.KUBEBUS_HTTP_MAX_BYTES }),
      maxInFlight: env.KUBEBUS_HTTP_MAX_IN_FLIGHT,
      maxConnections: env.KUBEBUS_HTTP_MAX_CONNECTIONS,
      headersTimeoutMs: env.KUBEBUS_HTTP_HEADERS_TIMEOUT,
      requestTimeoutMs: env.KUBEBUS_HTTP_REQUEST_TIMEOUT,
      keepAliveTimeoutMs: env.KUBEBUS_HTTP_KEEPALIVE_TIMEOUT,
      auth: sinkAuthOf(env),
    },
    consume: env.KUBEBUS_CONSUME === 'true',
    readYourWritesWaitMs: env.KUBEBUS_READ_YOUR_WRITES_WAIT,
    onceClaimTimeoutMs: env.KUBEBUS_ONCE_CLAIM_TIMEOUT,
    claimRetryMs: env.KUBEBUS_CLAIM_RETRY,
    onceMaxPerObject: env.KUBEBUS_ONCE_MAX_PER_OBJECT,
    ...(env.KUBEBUS_STATE_NATS_USER === undefined
      ? {}
      : {
          stateNats: {
            user: env.KUBEBUS_STATE_NATS_USER,
            ...(env.KUBEBUS_STATE_NATS_PASSWORD === undefined
              ? {}
              : { pass: env.KUBEBUS_STATE_NATS_PASSWORD }),
            ...(env.KUBEBUS_STATE_NATS_PASSWORD_FILE === undefined
              ? {}
              : { passFile: env.KUBEBUS_STATE_NATS_PASSWORD_FILE }),
          },
        }),
  }));

function sinkAuthOf(env: {
  KUBEBUS_HTTP_AUTH?: SinkAuthMode | undefined;
  KUBEBUS_HTTP_OIDC_AUDIENCE?: string | undefined;
  KUBEBUS_HTTP_OIDC_SUBJECTS?: string | undefined;
  KUBEBUS_HTTP_TOKEN_FILE?: string | undefined;
}): SinkAuthConfig {
  switch (env.KUBEBUS_HTTP_AUTH ?? 'none') {
    case 'oidc':
      return {
        mode: 'oidc',
        audience: env.KUBEBUS_HTTP_OIDC_AUDIENCE ?? '',
        subjects: subjectsOf(env.KUBEBUS_HTTP_OIDC_SUBJECTS),
      };
    case 'token':
      return { mode: 'token', tokenFile: env.KUBEBUS_HTTP_TOKEN_FILE ?? '' };
    case 'none':
      return { mode: 'none' };
  }
}

/** The reconciler's settings from the environment. */
export type ReconcilerSettings = z.output<typeof ReconcilerConfigSchema>;
/** The sink's part of the configuration. */
export type HttpSinkConfig = ReconcilerSettings['http'];

/** The settings, and what the operator definition decides (from the host, typed). */
export interface ReconcilerConfig extends ReconcilerSettings {
  /** the controller's name: its work subjects, consumers and leases carry it */
  readonly controller: string;
  /** the work partitions (the watcher publishes to the same number) */
  readonly partitions: number;
}

/** KUBEBUS_HTTP_OIDC_SUBJECTS as a list: comma-separated, blanks dropped. */
function subjectsOf(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((subject) => subject.trim())
    .filter((subject) => subject !== '');
}
