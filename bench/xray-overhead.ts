/**
 * What the X-Ray subsegments cost an SDK call (functions/shared/tracing.ts), in one process: GetItem calls of
 * a DynamoDB client whose wire answers at once (no network), untraced, traced but not sampled, and traced and
 * sampled (a subsegment sent to a UDP port on loopback), in alternating blocks; plus the first send of a
 * process (the socket is created and bound then).
 */
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { HttpResponse } from '@smithy/protocol-http';
import { traceSdkCalls } from '../functions/shared/tracing.js';
import { sendToDaemon } from '../functions/shared/xray-daemon.js';
import { SAMPLED_TRACE_HEADER } from './cold-init.js';
import { median, round } from './lib/stats.js';

/** Per-call figures of one way of calling (µs). */
export interface CallCost {
  wallUs: number;
  cpuUs: number;
}

/** The overhead report. */
export interface XrayOverhead {
  /** The first subsegment of a process: socket created and bound (ms). */
  firstSendMs: number;
  calls: number;
  untraced: CallCost;
  notSampled: CallCost;
  sampled: CallCost;
}

function client(): DynamoDBClient {
  return new DynamoDBClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    maxAttempts: 1,
    requestHandler: {
      handle: async () => ({
        response: new HttpResponse({
          statusCode: 200,
          headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'bench-request' },
          body: Readable.from([Buffer.from('{}')]),
        }),
      }),
    },
  });
}

/** Measures `blocks` alternating blocks of `perBlock` calls of each kind. */
export async function xrayOverhead(blocks = 20, perBlock = 100): Promise<XrayOverhead> {
  // A port nobody listens on: the sender's cost is the same, and no receiver shares this process's CPU.
  const probe = createSocket('udp4');
  probe.bind(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = probe.address().port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  process.env.AWS_XRAY_DAEMON_ADDRESS = `127.0.0.1:${port}`;

  const started = performance.now();
  await sendToDaemon({ host: '127.0.0.1', port }, { type: 'subsegment' });
  const firstSendMs = performance.now() - started;

  const plain = client();
  const traced = traceSdkCalls(client());
  const command = new GetItemCommand({ TableName: 'txs-apps', Key: { pk: { S: 'a' } } });
  const kinds = {
    untraced: { client: plain, header: SAMPLED_TRACE_HEADER },
    notSampled: { client: traced, header: SAMPLED_TRACE_HEADER.replace('Sampled=1', 'Sampled=0') },
    sampled: { client: traced, header: SAMPLED_TRACE_HEADER },
  };
  const wall: Record<string, number[]> = { untraced: [], notSampled: [], sampled: [] };
  const cpu: Record<string, number[]> = { untraced: [], notSampled: [], sampled: [] };
  for (let block = -1; block < blocks; block++) {
    for (const [name, kind] of Object.entries(kinds)) {
      process.env._X_AMZN_TRACE_ID = kind.header;
      const cpuStart = process.cpuUsage();
      const wallStart = performance.now();
      for (let i = 0; i < perBlock; i++) await kind.client.send(command);
      const used = process.cpuUsage(cpuStart);
      // Block -1 warms up every path.
      if (block < 0) continue;
      wall[name]?.push(((performance.now() - wallStart) * 1000) / perBlock);
      cpu[name]?.push((used.user + used.system) / perBlock);
    }
  }
  delete process.env._X_AMZN_TRACE_ID;
  delete process.env.AWS_XRAY_DAEMON_ADDRESS;
  const cost = (name: string): CallCost => ({
    wallUs: round(median(wall[name] ?? [])),
    cpuUs: round(median(cpu[name] ?? [])),
  });
  return {
    firstSendMs: round(firstSendMs, 2),
    calls: blocks * perBlock,
    untraced: cost('untraced'),
    notSampled: cost('notSampled'),
    sampled: cost('sampled'),
  };
}
