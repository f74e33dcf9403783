/**
 * A custom domain name for the API: a regional API Gateway domain (TLS 1.2) with the given ACM certificate,
 * mapped to the API's stage under an optional base path.
 *
 * @module
 */

import { DomainName, EndpointType, type RestApi, SecurityPolicy } from 'aws-cdk-lib/aws-apigateway';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { Construct } from 'constructs';

/** A custom domain for the API (`TorchxServerlessProps.customDomain`). */
export interface CustomDomainOptions {
  /** The domain name, e.g. `txs.example.com`. Point a DNS record at `domainName.domainNameAliasDomainName`. */
  readonly domainName: string;
  /** An ACM certificate for the name, in the stack's Region (regional endpoint). */
  readonly certificate: ICertificate;
  /**
   * Path under the domain the API is served at, e.g. `txs` → `https://txs.example.com/txs/v1/apps`.
   * @default - the root of the domain
   */
  readonly basePath?: string;
}

/** Creates the domain and maps it to `api`'s deployment stage. */
export function addCustomDomain(scope: Construct, api: RestApi, options: CustomDomainOptions): DomainName {
  const domain = new DomainName(scope, 'CustomDomain', {
    domainName: options.domainName,
    certificate: options.certificate,
    endpointType: EndpointType.REGIONAL,
    securityPolicy: SecurityPolicy.TLS_1_2,
  });
  domain.addBasePathMapping(api, {
    stage: api.deploymentStage,
    ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
  });
  return domain;
}
