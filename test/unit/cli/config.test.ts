import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigFileError, loadConfig, parseIni, resolveEndpoint, TxsConfig } from '../../../lib/cli/index.js';
import { memoryIO } from './helpers.js';

describe('parseIni', () => {
  it('reads sections, key = value and key: value, keeping key case', () => {
    const sections = parseIni('[aws_batch]\nqueue = gpu\nJobRole: arn:aws:iam::1:role/x\n', '.txsconfig');
    expect(sections.get('aws_batch')?.get('queue')).toBe('gpu');
    expect(sections.get('aws_batch')?.get('JobRole')).toBe('arn:aws:iam::1:role/x');
  });

  it('splits at the first delimiter, so values may contain = and :', () => {
    const sections = parseIni('[txs]\nendpoint = https://h.example/prod?x=1\n', 'f');
    expect(sections.get('txs')?.get('endpoint')).toBe('https://h.example/prod?x=1');
  });

  it('skips # and ; comments and blank lines', () => {
    const sections = parseIni('# top\n[cli:run]\n; note\n\nscheduler = aws_batch\n', 'f');
    expect([...(sections.get('cli:run') ?? [])]).toEqual([['scheduler', 'aws_batch']]);
  });

  it('parses the .txsconfig example of docs/cli.md to the values it describes', () => {
    const doc = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
    const example = /```ini\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const sections = parseIni(example, 'docs/cli.md');
    expect(sections.get('cli:run')?.get('scheduler')).toBe('aws_batch');
    expect(sections.get('aws_batch')?.get('queue')).toBe('gpu-queue');
    expect(sections.get('aws_batch')?.get('priority')).toBe('10');
    for (const section of sections.values()) {
      for (const value of section.values()) expect(value).not.toContain('#');
    }
  });

  it('refuses an inline comment, which .torchxconfig would read as part of the value, naming the line', () => {
    expect(() => parseIni('[cli:run]\nscheduler = aws_batch     # default for -s\n', '.txsconfig')).toThrow(
      /\.txsconfig:2.*inline comment/,
    );
    expect(() => parseIni('[aws_batch]   # defaults\nqueue = q\n', '.txsconfig')).toThrow(/inline comment/);
    expect(parseIni('[s]\nurl = https://h/p#frag\n', 'f').get('s')?.get('url')).toBe('https://h/p#frag');
  });

  it('joins indented continuation lines to the previous value', () => {
    const sections = parseIni('[s]\ntags = a:1\n  b:2\n', 'f');
    expect(sections.get('s')?.get('tags')).toBe('a:1\nb:2');
  });

  it('rejects a key before any section, naming file and line', () => {
    expect(() => parseIni('\nqueue = gpu\n', '/p/.txsconfig')).toThrow(
      /\/p\/\.txsconfig:2: `queue = gpu` comes before/,
    );
  });

  it('rejects duplicate sections and keys like configparser does', () => {
    expect(() => parseIni('[a]\n[a]\n', 'f')).toThrow(ConfigFileError);
    expect(() => parseIni('[a]\nk = 1\nk = 2\n', 'f')).toThrow(/f:3: key `k` appears twice/);
  });

  it('rejects a line that is neither a header nor a pair', () => {
    expect(() => parseIni('[a]\njust words\n', 'f')).toThrow(/f:2: expected `key = value`/);
  });
});

describe('loadConfig', () => {
  const cwdFile = '/work/project/.txsconfig';
  const homeFile = '/home/user/.txsconfig';

  it('prefers the working directory file over the home file, key by key', async () => {
    const io = memoryIO({
      files: {
        [cwdFile]: '[aws_batch]\nqueue = project-queue\n',
        [homeFile]: '[aws_batch]\nqueue = my-queue\npriority = 3\n[txs]\nendpoint = https://home.example\n',
      },
    });
    const config = await loadConfig(io);
    expect(config.get('aws_batch', 'queue')).toBe('project-queue');
    expect(config.get('aws_batch', 'priority')).toBe('3');
    expect(config.get('txs', 'endpoint')).toBe('https://home.example');
    expect(config.section('aws_batch')).toEqual([
      { key: 'queue', value: 'project-queue', file: cwdFile },
      { key: 'priority', value: '3', file: homeFile },
    ]);
  });

  it('is empty when no file exists', async () => {
    const config = await loadConfig(memoryIO());
    expect(config.files).toEqual([]);
    expect(config.get('txs', 'endpoint')).toBeUndefined();
  });

  it('reads only TXS_CONFIG when it is set, and requires it to exist', async () => {
    const io = memoryIO({
      env: { TXS_CONFIG: '/etc/txs.ini' },
      files: {
        '/etc/txs.ini': '[cli:run]\nscheduler = aws_sagemaker\n',
        [cwdFile]: '[cli:run]\nscheduler = x\n',
      },
    });
    expect((await loadConfig(io)).get('cli:run', 'scheduler')).toBe('aws_sagemaker');
    await expect(loadConfig(memoryIO({ env: { TXS_CONFIG: '/missing' } }))).rejects.toThrow(
      /\/missing: cannot read it/,
    );
  });

  it('reads booleans the configparser way and rejects others', () => {
    const config = new TxsConfig([['f', parseIni('[txs]\na = yes\nb = Off\nc = maybe\n', 'f')]]);
    expect(config.getBoolean('txs', 'a')).toBe(true);
    expect(config.getBoolean('txs', 'b')).toBe(false);
    expect(() => config.getBoolean('txs', 'c')).toThrow(/is not a boolean/);
  });
});

describe('resolveEndpoint', () => {
  const empty = new TxsConfig();
  const withEndpoint = new TxsConfig([
    ['f', parseIni('[txs]\nendpoint = https://config.example/prod/\n', 'f')],
  ]);

  it('defaults to the local server, unsigned', () => {
    expect(resolveEndpoint({}, empty, { env: {} })).toEqual({
      url: 'http://127.0.0.1:8080',
      source: 'default',
      sign: false,
      region: undefined,
      profile: undefined,
    });
  });

  it('takes --endpoint over TXS_ENDPOINT over .txsconfig', () => {
    const env = { TXS_ENDPOINT: 'http://env.example:9000' };
    expect(resolveEndpoint({ endpoint: 'http://flag.example' }, withEndpoint, { env }).url).toBe(
      'http://flag.example',
    );
    expect(resolveEndpoint({}, withEndpoint, { env })).toMatchObject({
      url: 'http://env.example:9000',
      source: 'TXS_ENDPOINT',
    });
    expect(resolveEndpoint({}, withEndpoint, { env: {} })).toMatchObject({
      url: 'https://config.example/prod',
      source: '.txsconfig',
    });
  });

  it('signs execute-api hosts with the region from the host', () => {
    const settings = resolveEndpoint(
      { endpoint: 'https://abc123.execute-api.eu-west-1.amazonaws.com/prod' },
      empty,
      { env: { AWS_REGION: 'us-east-1' } },
    );
    expect(settings).toMatchObject({ sign: true, region: 'eu-west-1' });
  });

  it('signs a custom domain only when TXS_SIGV4 or [txs] sigv4 says so, with the configured region', () => {
    const custom = { endpoint: 'https://api.example.com/v' };
    expect(resolveEndpoint(custom, empty, { env: { AWS_REGION: 'us-west-2' } }).sign).toBe(false);
    expect(
      resolveEndpoint(custom, empty, { env: { TXS_SIGV4: '1', AWS_REGION: 'us-west-2' } }),
    ).toMatchObject({
      sign: true,
      region: 'us-west-2',
    });
    const config = new TxsConfig([['f', parseIni('[txs]\nsigv4 = true\nregion = ap-south-1\n', 'f')]]);
    expect(resolveEndpoint(custom, config, { env: {} })).toMatchObject({ sign: true, region: 'ap-south-1' });
  });

  it('lets TXS_SIGV4=0 turn signing off for an execute-api host', () => {
    const settings = resolveEndpoint(
      { endpoint: 'https://abc123.execute-api.us-east-1.amazonaws.com/prod' },
      empty,
      { env: { TXS_SIGV4: '0' } },
    );
    expect(settings.sign).toBe(false);
  });

  it('rejects a URL that is not http(s), and signing without a region', () => {
    expect(() => resolveEndpoint({ endpoint: 'ftp://x' }, empty, { env: {} })).toThrow(/must be an http/);
    expect(() => resolveEndpoint({ endpoint: 'not a url' }, empty, { env: {} })).toThrow(/is not a URL/);
    expect(() =>
      resolveEndpoint({ endpoint: 'https://api.example.com' }, empty, { env: { TXS_SIGV4: 'true' } }),
    ).toThrow(/no AWS region/);
  });

  it('takes the profile from --profile, then AWS_PROFILE, then [txs] profile', () => {
    const config = new TxsConfig([['f', parseIni('[txs]\nprofile = from-file\n', 'f')]]);
    expect(resolveEndpoint({ profile: 'flag' }, config, { env: { AWS_PROFILE: 'env' } }).profile).toBe(
      'flag',
    );
    expect(resolveEndpoint({}, config, { env: { AWS_PROFILE: 'env' } }).profile).toBe('env');
    expect(resolveEndpoint({}, config, { env: {} }).profile).toBe('from-file');
  });
});
