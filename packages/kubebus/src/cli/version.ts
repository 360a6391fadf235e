// The version of this build (the package's version, set at build time).
declare const KUBEBUS_VERSION: string | undefined;
export const VERSION = typeof KUBEBUS_VERSION === 'string' ? KUBEBUS_VERSION : 'development';
