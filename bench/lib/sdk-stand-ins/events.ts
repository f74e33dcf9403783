/** Measurement only: see ./client.ts. */
import { client, command } from './client.js';

export const EventBridgeClient = client({ serviceId: 'EventBridge', signing: 'events', target: 'AWSEvents' });
export const PutEventsCommand = command('PutEvents');
