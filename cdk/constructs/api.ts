/**
 * The control plane's REST API: IAM (SigV4) authorization on every method, a throttled stage with metrics and
 * X-Ray tracing, API Gateway's own errors in the API's error shape, path parameters checked by API Gateway
 * (bodies by the handlers, as in local mode), one Lambda integration per route of `functions/routes.ts`, and
 * access and execution logs when the account's API Gateway CloudWatch role allows them.
 *
 * @module
 */
import { Duration, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ROUTES } from '../../functions/routes.js';

/** Props of {@link ControlPlaneApi}. */
export interface ControlPlaneApiProps {
  /** The stage; also names the API (`torchx-serverless-<stage>`). */
  readonly stageName: string;
  /** What each route invokes, by route name (`functions/routes.ts`). */
  readonly routeFunctions: Readonly<Record<string, IFunction>>;
  /** Steady-state requests per second the stage accepts. */
  readonly throttlingRateLimit: number;
  /** Request burst the stage accepts. */
  readonly throttlingBurstLimit: number;
  /**
   * Where access logs go; with it the stage also writes execution (error) logs. Both need the account's API
   * Gateway CloudWatch role. @default - no API logs
   */
  readonly accessLogs?: ILogGroup;
  /** Create the account-wide API Gateway CloudWatch role (`AWS::ApiGateway::Account`). */
  readonly cloudWatchRole: boolean;
  /** Whether a WAF web ACL is associated with the stage (cdk-nag's APIG3 is acknowledged without one). */
  readonly webAclAttached: boolean;
}

/** API Gateway's own errors (bad signature, throttling, …) in the API's error shape. */
const GATEWAY_ERROR_TEMPLATE =
  '{"error":{"code":"$context.error.responseType","message":$context.error.messageString,"requestId":"$context.requestId"}}';

/** The IAM-authorized REST API with every route of `functions/routes.ts`. */
export class ControlPlaneApi extends RestApi {
  constructor(scope: Construct, id: string, props: ControlPlaneApiProps) {
    const { accessLogs } = props;
    super(scope, id, {
      restApiName: `torchx-serverless-${props.stageName}`,
      description: 'torchx-serverless: run, watch and manage training jobs on AWS Batch and SageMaker',
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole: props.cloudWatchRole,
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
      deployOptions: {
        stageName: props.stageName,
        throttlingRateLimit: props.throttlingRateLimit,
        throttlingBurstLimit: props.throttlingBurstLimit,
        loggingLevel: accessLogs === undefined ? MethodLoggingLevel.OFF : MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: true,
        ...(accessLogs === undefined
          ? {}
          : {
              accessLogDestination: new LogGroupLogDestination(accessLogs),
              accessLogFormat: AccessLogFormat.jsonWithStandardFields({
                caller: true,
                httpMethod: true,
                ip: true,
                protocol: true,
                requestTime: true,
                resourcePath: true,
                responseLength: true,
                status: true,
                user: true,
              }),
            }),
      },
    });
    // The stack outputs the URL under a stable name (ApiUrl); an embedding app chooses its own outputs.
    this.node.tryRemoveChild('Endpoint');
    for (const [responseId, type] of [
      ['Default4xx', ResponseType.DEFAULT_4XX],
      ['Default5xx', ResponseType.DEFAULT_5XX],
    ] as const) {
      this.addGatewayResponse(responseId, {
        type,
        templates: { 'application/json': GATEWAY_ERROR_TEMPLATE },
      });
    }
    this.addRoutes(props.routeFunctions);
    this.acknowledgeFindings(props);
  }

  /** One method per route, integrated with its function; API Gateway requires the path parameters. */
  private addRoutes(routeFunctions: Readonly<Record<string, IFunction>>): void {
    // API Gateway checks the path parameters; the handlers validate bodies (zod), so that the deployed stack
    // and local mode answer bad input with the same errors.
    const validator = this.addRequestValidator('PathParameters', {
      validateRequestParameters: true,
      validateRequestBody: false,
    });
    for (const route of ROUTES) {
      const fn = routeFunctions[route.name];
      if (fn === undefined) throw new Error(`no function for route ${route.name}`);
      const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
      this.root
        .resourceForPath(route.path)
        .addMethod(
          route.method,
          new LambdaIntegration(fn, { allowTestInvoke: false, timeout: Duration.seconds(29) }),
          {
            authorizationType: AuthorizationType.IAM,
            requestValidator: validator,
            requestParameters: Object.fromEntries(
              pathParameters.map((name) => [`method.request.path.${name}`, true]),
            ),
          },
        );
    }
  }

  /** cdk-nag findings of the API, acknowledged with the reason (docs/deploy.md#cdk-nag-acknowledgements). */
  private acknowledgeFindings(props: ControlPlaneApiProps): void {
    Validations.of(this).acknowledge(
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'API Gateway validates the path parameters; the handlers validate every body with the API schema (zod) and answer 400 naming the field, exactly as local mode does.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason: 'Every method uses IAM (SigV4) authorization: callers are IAM principals, not Cognito users.',
      },
      ...(props.webAclAttached
        ? []
        : [
            {
              id: 'AwsSolutions-APIG3',
              reason:
                'Every method requires SigV4-signed IAM credentials and the stage is throttled; a WAF web ACL can be attached with the webAclArn prop.',
            },
          ]),
    );
    if (props.accessLogs === undefined) {
      Validations.of(this).acknowledge(
        {
          id: 'AwsSolutions-APIG1',
          reason:
            'API access logs need the account-wide API Gateway CloudWatch role, which this construct does not replace by default; set apiLogging (the account has a role) or apiGatewayCloudWatchRole. The functions log every request with its request id.',
        },
        {
          id: 'AwsSolutions-APIG6',
          reason:
            'Execution logs need the account-wide API Gateway CloudWatch role (see AwsSolutions-APIG1); stage metrics and X-Ray tracing stay on, and the functions log every request.',
        },
      );
    }
    if (props.cloudWatchRole) {
      Validations.of(this).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "API Gateway's account-wide logging role uses the AWS managed policy made for it; it serves every API in the account and Region.",
      });
    }
  }
}
