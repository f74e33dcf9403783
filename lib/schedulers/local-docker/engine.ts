/**
 * A small Docker Engine API client over its Unix socket, for what TorchX's `local_docker` does through
 * docker-py: pull images, create the `torchx` network, create and start containers, list them by label,
 * inspect, stop, and read logs. {@link engineCreateBody} turns the docker-py keyword arguments of a dry run
 * into the Engine's `ContainerCreate` body, as docker-py does.
 *
 * @module
 */
import { request } from 'node:http';
import { BackendConflictError, BackendError } from '../errors.js';
import { type HttpAnswer, httpExchange } from '../http-exchange.js';
import type { DockerContainerSpec } from './translate.js';

/** Docker Engine API version used in request paths (Docker 20.10 and later serve it). */
export const DOCKER_API_VERSION = 'v1.41';

/** docker-py's size strings (`1024m`) in bytes. */
export function dockerBytes(size: string | number): number {
  if (typeof size === 'number') return size;
  const match = /^(\d+)([bkmg]?)$/i.exec(size.trim());
  if (!match) throw new BackendError(`'${size}' is not a Docker size (e.g. 512m)`, false);
  const units: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
  return Number(match[1]) * (units[(match[2] ?? '').toLowerCase()] ?? 1);
}

/** The Engine `ContainerCreate` body for a dry run's container (docker-py's `containers.run` mapping). */
export function engineCreateBody(spec: DockerContainerSpec): Record<string, unknown> {
  const k = spec.kwargs as {
    environment?: Record<string, string>;
    labels?: Record<string, string>;
    hostname?: string;
    privileged?: boolean;
    network?: string;
    mounts?: Record<string, unknown>[];
    devices?: string[];
    restart_policy?: Record<string, unknown>;
    mem_limit?: string;
    shm_size?: string;
    nano_cpus?: number;
    device_requests?: Record<string, unknown>[];
  };
  const hostConfig: Record<string, unknown> = {
    Privileged: k.privileged ?? false,
    NetworkMode: k.network,
    Mounts: k.mounts ?? [],
    Devices: (k.devices ?? []).map((d) => {
      const [host = '', container = host, perms = 'rwm'] = d.split(':');
      return { PathOnHost: host, PathInContainer: container, CgroupPermissions: perms };
    }),
  };
  if (k.restart_policy) hostConfig.RestartPolicy = k.restart_policy;
  if (k.mem_limit !== undefined) hostConfig.Memory = dockerBytes(k.mem_limit);
  if (k.shm_size !== undefined) hostConfig.ShmSize = dockerBytes(k.shm_size);
  if (k.nano_cpus !== undefined) hostConfig.NanoCpus = k.nano_cpus;
  if (k.device_requests) hostConfig.DeviceRequests = k.device_requests;
  return {
    Image: spec.image,
    Cmd: spec.command,
    Env: Object.entries(k.environment ?? {}).map(([name, value]) => `${name}=${value}`),
    Labels: k.labels ?? {},
    Hostname: k.hostname,
    HostConfig: hostConfig,
    NetworkingConfig: k.network ? { EndpointsConfig: { [k.network]: {} } } : undefined,
  };
}

/** A container as `GET /containers/json` lists it. */
export interface EngineContainerSummary {
  Id: string;
  Names?: string[];
  Image?: string;
  Labels?: Record<string, string>;
  State?: string;
  Status?: string;
}

/** Splits Docker's multiplexed log stream (8-byte frame headers) into text; plain text passes through. */
export function demuxDockerLog(buffer: Buffer): string {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const stream = buffer[offset];
    if (stream !== 0 && stream !== 1 && stream !== 2) return buffer.toString('utf8');
    const size = buffer.readUInt32BE(offset + 4);
    parts.push(buffer.subarray(offset + 8, offset + 8 + size));
    offset += 8 + size;
  }
  return offset === buffer.length ? Buffer.concat(parts).toString('utf8') : buffer.toString('utf8');
}

/** The Docker Engine at a Unix socket. */
export class DockerEngine {
  constructor(
    /** e.g. `/var/run/docker.sock`. */
    readonly socketPath: string,
    private readonly timeoutMs = 60_000,
  ) {}

  private send(method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return httpExchange(
      (onResponse) =>
        request(
          {
            socketPath: this.socketPath,
            path: `/${DOCKER_API_VERSION}${path}`,
            method,
            timeout: this.timeoutMs,
            headers: { host: 'docker', ...(payload ? { 'content-type': 'application/json' } : {}) },
          },
          onResponse,
        ),
      { timeoutMs: this.timeoutMs, target: `the Docker Engine at ${this.socketPath}`, payload },
    );
  }

  private async call(method: string, path: string, body?: unknown, ok: number[] = []): Promise<unknown> {
    const { status, body: answer } = await this.send(method, path, body);
    const text = answer.toString('utf8');
    if ((status >= 200 && status < 300) || ok.includes(status))
      return text ? (JSON.parse(text) as unknown) : undefined;
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {}
    if (status === 409) throw new BackendConflictError(`Docker: ${message}`);
    throw new BackendError(
      `Docker ${method} ${path.split('?')[0]} failed (${status}): ${message}`,
      status >= 500,
    );
  }

  /** Pulls `image`; false when the pull failed (TorchX then falls back to a local image). */
  async pull(image: string): Promise<boolean> {
    const at = image.lastIndexOf(':');
    const hasTag = at > image.lastIndexOf('/');
    const query = new URLSearchParams({
      fromImage: hasTag ? image.slice(0, at) : image,
      tag: hasTag ? image.slice(at + 1) : 'latest',
    });
    const { status } = await this.send('POST', `/images/create?${query}`);
    return status >= 200 && status < 300;
  }

  /** Creates a bridge network unless it exists. */
  async ensureNetwork(name: string): Promise<void> {
    await this.call(
      'POST',
      '/networks/create',
      { Name: name, Driver: 'bridge', CheckDuplicate: true },
      [409],
    );
  }

  /** Creates and starts a container; returns its id. */
  async run(spec: DockerContainerSpec): Promise<string> {
    const name = String(spec.kwargs.name ?? '');
    const created = (await this.call(
      'POST',
      `/containers/create?${new URLSearchParams({ name })}`,
      engineCreateBody(spec),
    )) as {
      Id: string;
    };
    await this.call('POST', `/containers/${encodeURIComponent(created.Id)}/start`);
    return created.Id;
  }

  /** Containers (running or not) carrying every label `key=value` given. */
  async list(labels: string[]): Promise<EngineContainerSummary[]> {
    const filters = JSON.stringify({ label: labels });
    return (await this.call(
      'GET',
      `/containers/json?${new URLSearchParams({ all: '1', filters })}`,
    )) as EngineContainerSummary[];
  }

  /** A container's status and exit code. */
  async inspect(id: string): Promise<{ status: string; exitCode: number }> {
    const body = (await this.call('GET', `/containers/${encodeURIComponent(id)}/json`)) as {
      State?: { Status?: string; ExitCode?: number };
    };
    return { status: body.State?.Status ?? '', exitCode: body.State?.ExitCode ?? -1 };
  }

  /** Stops a container (Docker answers 304 for one already stopped). */
  async stop(id: string): Promise<void> {
    await this.call('POST', `/containers/${encodeURIComponent(id)}/stop`, undefined, [304]);
  }

  /** A container's log (stdout and/or stderr). */
  async logs(id: string, options: { stdout: boolean; stderr: boolean; since?: number }): Promise<string> {
    const query = new URLSearchParams({
      stdout: options.stdout ? '1' : '0',
      stderr: options.stderr ? '1' : '0',
    });
    if (options.since !== undefined) query.set('since', String(Math.floor(options.since)));
    const { status, body } = await this.send('GET', `/containers/${encodeURIComponent(id)}/logs?${query}`);
    if (status < 200 || status >= 300) {
      throw new BackendError(
        `Docker logs of ${id} failed (${status}): ${body.toString('utf8')}`,
        status >= 500,
      );
    }
    return demuxDockerLog(body);
  }
}
