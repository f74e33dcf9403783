/** The EventBridge publisher's client: loaded by the container on the first accepted transition. */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import {
  APP_STATE_CHANGE_DETAIL_TYPE,
  APP_STATE_CHANGE_SOURCE,
  type AppStateChangePublisher,
} from '../../../lib/runner/index.js';

/** A publisher that puts each accepted transition on `busName` through `client`. */
export function eventBridgePublisher(
  busName: string,
  created: <T extends object>(client: T) => T,
): AppStateChangePublisher {
  const client = created(new EventBridgeClient({}));
  return {
    async publish(event) {
      await client.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: busName,
              Source: APP_STATE_CHANGE_SOURCE,
              DetailType: APP_STATE_CHANGE_DETAIL_TYPE,
              Resources: [],
              Detail: JSON.stringify(event),
            },
          ],
        }),
      );
    },
  };
}
