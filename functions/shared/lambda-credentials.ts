/**
 * The credential provider of the deployed functions: esbuild aliases `@aws-sdk/credential-provider-node` to
 * this module in every bundle (cdk/constructs/lambda-bundling.ts). Lambda always puts the function role's
 * credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, so the SDK's default chain
 * (SSO, INI files, processes, web identity, instance metadata, and the STS/SSO clients they bring) is dead
 * weight that each client would also probe. Local mode and tests run from the sources: they keep the chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/** Drop-in for `@aws-sdk/credential-provider-node`'s `defaultProvider`: environment credentials only. */
export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}) => fromEnv(init);
