/**
 * The event streams of the deployed functions: esbuild aliases `@smithy/core/event-streams` to this module in
 * every bundle (cdk/constructs/lambda-bundling.ts). No function calls a streaming operation (CloudWatch Logs'
 * `StartLiveTail` is the only one of their clients), yet the Logs client imports the SDK's event-stream codec
 * at construction, and with it the CRC32 checksum that loads `node:zlib` (~15 KB and a Node module at every
 * cold start of the scheduler routes). Here the client gets a marshaller that refuses to be used, so a
 * streaming call fails loudly instead of silently. Local mode and tests run from the sources: they keep the
 * SDK's codec.
 */

/** The error a streaming operation gets in a Lambda bundle. */
export class EventStreamsNotBundledError extends Error {
  override readonly name = 'EventStreamsNotBundledError';
  constructor() {
    super(
      'event streams are not bundled in the Lambda functions (lambda-event-streams.ts): no function may call a streaming operation',
    );
  }
}

const refuse = (): never => {
  throw new EventStreamsNotBundledError();
};

/** Stands in for the SDK's event-stream marshaller: every use throws {@link EventStreamsNotBundledError}. */
export const eventStreamSerdeProvider = () => ({ serialize: refuse, deserialize: refuse });

/** The SDK's config resolver, unchanged: the client gets the (refusing) marshaller of its provider. */
export const resolveEventStreamSerdeConfig = <T extends { eventStreamSerdeProvider: (config: T) => unknown }>(
  input: T,
) => Object.assign(input, { eventStreamMarshaller: input.eventStreamSerdeProvider(input) });

/** What the SDK's protocols import for a streaming operation: refuses to be built. */
export class EventStreamSerde {
  constructor() {
    refuse();
  }
}
