import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler as publisher } from '../../../functions/events/publisher.js';
import { eventHandler } from '../../../functions/shared/event-handler.js';
import { metrics } from '../../../functions/shared/powertools.js';
import { lambdaContext } from '../../reliability/helpers/lambda.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('eventHandler', () => {
  it('flushes the metrics of an invocation that throws, and throws on so the trigger retries', async () => {
    const flush = vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => metrics);
    const handler = eventHandler(async (_event: unknown) => {
      metrics.addMetric('SomethingCounted', 'Count', 1);
      throw new Error('store unavailable');
    });
    await expect(handler({}, lambdaContext('event-fn'))).rejects.toThrow('store unavailable');
    expect(flush).toHaveBeenCalled();
  });

  it("flushes the publisher's metrics when publishing fails (it flushed only after a success)", async () => {
    const flush = vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => metrics);
    vi.stubEnv('TXS_EVENT_BUS_NAME', '');
    try {
      await expect(publisher({ Records: [] }, lambdaContext('publisher'))).rejects.toThrow(
        /TXS_EVENT_BUS_NAME/,
      );
    } finally {
      vi.unstubAllEnvs();
    }
    expect(flush).toHaveBeenCalled();
  });
});
