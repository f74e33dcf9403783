/**
 * Powertools logger and metrics, built once per cold start. Every log line carries the Lambda request id
 * (injectLambdaContext) and, for API calls, the API Gateway request id.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/** Service name in logs and metrics. */
export const SERVICE_NAME = 'torchx-serverless';

export const logger = new Logger({ serviceName: SERVICE_NAME });
export const metrics = new Metrics({ serviceName: SERVICE_NAME, namespace: 'TorchxServerless' });
