/**
 * An experiment, not used by the stack: the credential provider a Lambda function needs. Lambda puts the
 * function role's credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, so the SDK's
 * default chain (SSO, INI files, process, web identity, IMDS, and the STS/SSO clients they bring) is dead
 * weight in a bundle. `npm run bench` aliases `@aws-sdk/credential-provider-node` to this module in a second
 * build to measure what that weight costs.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/** Drop-in for `@aws-sdk/credential-provider-node`'s `defaultProvider`: environment credentials only. */
export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}) => fromEnv(init);
