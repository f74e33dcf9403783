/**
 * `txs ui`: the dashboard for the configured endpoint, on a loopback port (see `../dashboard/ui-proxy.ts`).
 *
 * @module
 */
import type { Command } from 'commander';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';

/** Adds `ui` to `program`. */
export function registerUi(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program
      .command('ui')
      .summary('open the dashboard for the configured endpoint in a browser')
      .option('--port <port>', 'loopback port to serve on (default: a free one)', '0'),
    { json: false },
  ).action(async (options: CommonOptions & { port: string }) => {
    const settings = await invocation.endpoint(options);
    if (!settings.sign) {
      // The local server serves the page itself; a new one-time link lets in a browser it cannot otherwise
      // tell is yours (macOS, Windows).
      const link = await (await invocation.client(options)).dashboardLink();
      invocation.out(
        `The local server serves the dashboard itself.\nOpen once (the link works one time): ${link}`,
      );
      return;
    }
    const { createSigV4Signer } = await import('../sigv4.js');
    const { startUiProxy } = await import('../ui-proxy.js');
    const user = invocation.io.env.TXS_USER;
    const proxy = await startUiProxy({
      upstream: settings.url,
      port: Number(options.port),
      ...(user ? { headers: { 'x-txs-user': user } } : {}),
      signer: createSigV4Signer({
        region: settings.region ?? 'us-east-1',
        ...(settings.profile === undefined ? {} : { profile: settings.profile }),
      }),
    });
    invocation.out(
      `Dashboard for ${settings.url}\nOpen once (the link works one time): ${proxy.url}\nCtrl+C stops it.`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await proxy.close();
  });
}
