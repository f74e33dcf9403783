/**
 * What every `txs` command shares: the invocation's IO, `.txsconfig`, the HTTP client and the common
 * options (`--endpoint`, `--profile`, `--region`, `--json`).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { findOwnSocket } from '../loopback/local-socket.js';
import { displayText } from '../specs/names.js';
import { TxsClient } from './client.js';
import { loadConfig, type TxsConfig } from './config.js';
import { type EndpointSettings, resolveEndpoint } from './endpoint.js';
import { ExitCode } from './errors.js';
import { type Painter, painter } from './format.js';
import { type CliIO, type OutputStream, useColor } from './io.js';

/** Options every command accepts. */
export interface CommonOptions {
  endpoint?: string;
  profile?: string;
  region?: string;
  json?: boolean;
}

/** The version in package.json. */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** State shared by the commands of one invocation. */
export class Invocation {
  private configPromise: Promise<TxsConfig> | undefined;
  /** The exit code the command's action chose. */
  exitCode: number = ExitCode.OK;

  /**
   * The connection options given before the command (`txs --endpoint URL list`); the command's own win. Set
   * by the program once it is built.
   */
  givenBeforeCommand: () => CommonOptions = () => ({});

  constructor(readonly io: CliIO) {}

  /** `.txsconfig`, read once. */
  config(): Promise<TxsConfig> {
    this.configPromise ??= loadConfig(this.io);
    return this.configPromise;
  }

  /**
   * The endpoint the options (the command's, then those before it), the environment and `.txsconfig` name.
   */
  async endpoint(options: CommonOptions): Promise<EndpointSettings> {
    const own = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
    return resolveEndpoint({ ...this.givenBeforeCommand(), ...own }, await this.config(), this.io);
  }

  /** An API client for the endpoint the options and `.txsconfig` name. */
  async client(options: CommonOptions): Promise<TxsClient> {
    const settings = await this.endpoint(options);
    const user = this.io.env.TXS_USER;
    // The AWS credential chain and signer load only when signing: local use stays fast.
    const signer =
      settings.sign && settings.region !== undefined
        ? (await import('./sigv4.js')).createSigV4Signer({
            region: settings.region,
            ...(settings.profile === undefined ? {} : { profile: settings.profile }),
          })
        : undefined;
    return new TxsClient({
      endpoint: settings.url,
      endpointSource: settings.source,
      ...(settings.region === undefined ? {} : { region: settings.region }),
      ...(signer === undefined ? {} : { signer }),
      ...(user === undefined || user === '' ? {} : { headers: { 'x-txs-user': user } }),
      userAgent: `txs/${packageVersion()} node/${process.versions.node}`,
      sleep: (ms) => this.io.sleep(ms),
      ...(this.io.transport === undefined ? {} : { transport: this.io.transport }),
      ownSocket: () => findOwnSocket(settings.url, { env: this.io.env, home: this.io.homeDir }),
    });
  }

  /** A painter for `stream` (colour only on a TTY that wants it). */
  paint(stream: OutputStream): Painter {
    return painter(useColor(this.io, stream));
  }

  /** Writes a line to stdout. */
  out(text: string): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Writes a line to stderr. */
  err(text: string): void {
    this.io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Writes `warning: …` to stderr; the text (often a server's) is escaped ({@link displayText}). */
  warn(text: string): void {
    this.err(`warning: ${displayText(text, 'block')}`);
  }

  /** Prints a JSON document on stdout. */
  json(value: unknown): void {
    this.out(JSON.stringify(value, null, 2));
  }
}

/**
 * Adds the connection options to `command`: every command takes them, and so does the program, before the
 * command.
 */
export function addConnectionOptions(command: Command): Command {
  return command
    .option('--endpoint <url>', 'API base URL (default: TXS_ENDPOINT, [txs] endpoint, http://127.0.0.1:8080)')
    .option('--profile <name>', 'AWS profile for SigV4 credentials (default: AWS_PROFILE, the SDK chain)')
    .option('--region <region>', 'signing region when the host does not name one (default: AWS_REGION)');
}

/** Adds the options every command accepts to `command`. */
export function addCommonOptions(command: Command, { json = true } = {}): Command {
  addConnectionOptions(command);
  if (json) command.option('--json', 'print the API’s JSON instead of text');
  return command;
}
