/**
 * The configuration the functions' AWS SDK clients (Batch, SageMaker, CloudWatch Logs, EventBridge) are built
 * with. The SDK resolves each client setting through a loader: the environment, then the shared config files
 * (`~/.aws/config` and `~/.aws/credentials`, read at the client's first call), then a default. A Lambda
 * function has no shared config files, so in Lambda every setting the environment does not set is given its
 * SDK default here, and the client reads no file and builds no loader for it; a setting the environment sets
 * is left to the SDK, which reads it from the environment exactly as it would anyway. Outside Lambda (local
 * mode, tests, the CLI) and wherever a profile or config file is named, the clients keep the SDK's loaders.
 */

/** The settings {@link sdkClientConfig} may give a client (each an SDK client config field). */
export interface SdkClientSettings {
  region?: string;
  useFipsEndpoint?: boolean;
  useDualstackEndpoint?: boolean;
  maxAttempts?: number;
  retryMode?: string;
  defaultsMode?: 'legacy';
  authSchemePreference?: string[];
  userAgentAppId?: () => Promise<string | undefined>;
  disableClockSkewCorrection?: boolean;
  sigv4aSigningRegionSet?: () => Promise<string[] | undefined>;
  endpoint?: string;
  ignoreConfiguredEndpointUrls?: boolean;
}

/** Variables that name shared config files or a profile in them: the SDK's loaders then stay. */
const SHARED_CONFIG_VARIABLES = ['AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_PROFILE'] as const;

/** The SDK's defaults (`@smithy/core/retry`'s DEFAULT_MAX_ATTEMPTS and DEFAULT_RETRY_MODE, etc.). */
const SDK_DEFAULT_MAX_ATTEMPTS = 3;
const SDK_DEFAULT_RETRY_MODE = 'standard';

/** The environment variable the SDK reads for `serviceId`'s own endpoint (`AWS_ENDPOINT_URL_CLOUDWATCH_LOGS`). */
export function serviceEndpointVariable(serviceId: string): string {
  return ['AWS_ENDPOINT_URL', ...serviceId.split(' ').map((word) => word.toUpperCase())].join('_');
}

/**
 * The config of a client of the service `serviceId` (the SDK's `serviceId`: `Batch`, `SageMaker`,
 * `CloudWatch Logs`, `EventBridge`): empty outside Lambda; in Lambda, the SDK's default of each setting the
 * environment leaves unset (see the module's description), and the endpoint the environment configures
 * (`AWS_ENDPOINT_URL_<SERVICE>`, else `AWS_ENDPOINT_URL`) given directly.
 */
export function sdkClientConfig(serviceId: string, env: NodeJS.ProcessEnv = process.env): SdkClientSettings {
  const unset = (name: string) => env[name] === undefined;
  if (unset('AWS_LAMBDA_FUNCTION_NAME') || SHARED_CONFIG_VARIABLES.some((name) => !unset(name))) return {};
  const settings: SdkClientSettings = {};
  if (env.AWS_REGION) settings.region = env.AWS_REGION;
  if (unset('AWS_USE_FIPS_ENDPOINT')) settings.useFipsEndpoint = false;
  if (unset('AWS_USE_DUALSTACK_ENDPOINT')) settings.useDualstackEndpoint = false;
  if (unset('AWS_MAX_ATTEMPTS')) settings.maxAttempts = SDK_DEFAULT_MAX_ATTEMPTS;
  if (unset('AWS_RETRY_MODE')) settings.retryMode = SDK_DEFAULT_RETRY_MODE;
  if (unset('AWS_DEFAULTS_MODE')) settings.defaultsMode = 'legacy';
  if (
    unset('AWS_AUTH_SCHEME_PREFERENCE') &&
    !Object.keys(env).some((k) => k.startsWith('AWS_BEARER_TOKEN_'))
  ) {
    settings.authSchemePreference = [];
  }
  if (unset('AWS_SDK_UA_APP_ID')) settings.userAgentAppId = async () => undefined;
  if (unset('AWS_DISABLE_CLOCK_SKEW_CORRECTION')) settings.disableClockSkewCorrection = false;
  // Read by the clients of services that sign with SigV4a (EventBridge); ignored by the others.
  if (unset('AWS_SIGV4A_SIGNING_REGION_SET')) settings.sigv4aSigningRegionSet = async () => undefined;
  if (unset('AWS_IGNORE_CONFIGURED_ENDPOINT_URLS')) {
    const endpoint = env[serviceEndpointVariable(serviceId)] || env.AWS_ENDPOINT_URL;
    if (endpoint) settings.endpoint = endpoint;
    else settings.ignoreConfiguredEndpointUrls = true;
  }
  return settings;
}
