import { describe, expect, it } from 'vitest';
import {
  type AppResponse,
  formatAppList,
  formatBuiltin,
  formatBuiltinList,
  formatDryRun,
  formatElapsed,
  formatLocalTime,
  formatRunOpts,
  formatStatus,
  formatTable,
  formatYaml,
  painter,
  parseTimeArg,
} from '../../../lib/cli/index.js';
import type { ComponentDescription } from '../../../lib/components/index.js';

const plain = painter(false);

describe('formatTable', () => {
  it('aligns columns with a dashed rule, like tabulate', () => {
    expect(
      formatTable(
        ['APP HANDLE', 'APP STATUS'],
        [
          ['local_cwd://torchx/echo-k3x9', 'SUCCEEDED'],
          ['local_cwd://torchx/sh-b2', 'RUNNING'],
        ],
      ),
    ).toBe(
      [
        'APP HANDLE                    APP STATUS',
        '----------------------------  ----------',
        'local_cwd://torchx/echo-k3x9  SUCCEEDED',
        'local_cwd://torchx/sh-b2      RUNNING',
      ].join('\n'),
    );
  });
});

describe('formatAppList', () => {
  it('shows handle, state, name and local creation time', () => {
    const created = new Date(2026, 0, 15, 9, 5, 7).toISOString();
    const table = formatAppList([
      {
        handle: 'aws_batch://torchx/q:train-x',
        scheduler: 'aws_batch',
        session: 'torchx',
        appId: 'q:train-x',
        name: 'train',
        state: 'FAILED',
        createdAt: created,
      },
    ]);
    expect(table.split('\n')[0]).toBe('APP HANDLE                    APP STATUS  NAME   CREATED');
    expect(table.split('\n')[2]).toBe('aws_batch://torchx/q:train-x  FAILED      train  2026-01-15 09:05:07');
  });
});

describe('formatStatus', () => {
  it("renders TorchX's AppStatus layout, filtered by role", () => {
    const app = {
      status: {
        state: 'RUNNING',
        numRestarts: 0,
        msg: '<NONE>',
        structuredErrorMsg: '<NONE>',
        roles: [
          {
            role: 'trainer',
            replicas: [
              { id: 1, state: 'RUNNING', role: 'trainer', hostname: 'h1', structuredErrorMsg: '<NONE>' },
              { id: 0, state: 'RUNNING', role: 'trainer', hostname: 'h0', structuredErrorMsg: '<NONE>' },
            ],
          },
          {
            role: 'ps',
            replicas: [{ id: 0, state: 'FAILED', role: 'ps', hostname: 'h2', structuredErrorMsg: '<NONE>' }],
          },
        ],
      },
    } as Pick<AppResponse, 'status'>;
    expect(formatStatus(app)).toBe(
      'AppStatus:\n    State: RUNNING\n    Num Restarts: 0\n    Roles: \n *trainer[0]:RUNNING\n  trainer[1]:RUNNING' +
        '\n *ps[0]:FAILED (no reply file)\n    Msg: <NONE>\n    Structured Error Msg: <NONE>\n    UI URL: None\n    ',
    );
    expect(formatStatus(app, ['ps'])).toContain('Roles: \n *ps[0]:FAILED');
    expect(formatStatus(app, ['ps'])).not.toContain('trainer');
  });
});

describe('formatYaml', () => {
  it('renders nested objects and lists in block style, lists indented under their key', async () => {
    expect(
      await formatYaml({
        name: 'echo',
        roles: [{ name: 'echo', args: ['hello world', '--flag'], env: {}, numReplicas: 1 }],
        metadata: {},
      }),
    ).toBe(
      [
        'name: echo',
        'roles:',
        '  - name: echo',
        '    args:',
        '      - hello world',
        '      - --flag',
        '    env: {}',
        '    numReplicas: 1',
        'metadata: {}',
      ].join('\n'),
    );
  });

  it('quotes strings YAML would read as something else', async () => {
    expect(await formatYaml({ a: 'true', b: '123', c: '', d: 'x: y', e: null, f: false, g: 'k:' })).toBe(
      'a: "true"\nb: "123"\nc: ""\nd: "x: y"\ne: null\nf: false\ng: "k:"',
    );
  });

  it('quotes strings that read as YAML 1.1 numbers or booleans, as PyYAML does', async () => {
    expect(
      await formatYaml(['.5', '.inf', '.NaN', '-.Inf', '1_000', '0x1F', 'yes', 'Off', '2026-01-15']),
    ).toBe(
      ['".5"', '".inf"', '".NaN"', '"-.Inf"', '"1_000"', '"0x1F"', '"yes"', '"Off"', '"2026-01-15"']
        .map((line) => `- ${line}`)
        .join('\n'),
    );
  });

  it('writes the numbers Infinity and NaN as YAML reads them', async () => {
    expect(await formatYaml({ half: 0.5, big: Number.POSITIVE_INFINITY, none: Number.NaN })).toBe(
      'half: 0.5\nbig: .inf\nnone: .nan',
    );
  });

  it('keeps every string on one line and escapes what would drive the terminal', async () => {
    expect(await formatYaml({ msg: 'two\nlines', evil: '\u202Eevil\u001b[2J' })).toBe(
      'msg: "two\\nlines"\nevil: "\\u{202E}evil\\e[2J"',
    );
  });

  it('leaves image names and ARNs plain', async () => {
    expect(await formatYaml({ image: 'ghcr.io/pytorch/torchx:0.7.0', role: 'arn:aws:iam::1:role/r' })).toBe(
      'image: ghcr.io/pytorch/torchx:0.7.0\nrole: arn:aws:iam::1:role/r',
    );
  });
});

describe('formatRunOpts', () => {
  it('prints each scheduler with TorchX-style option help', () => {
    const text = formatRunOpts(
      [
        {
          name: 'aws_batch',
          runOpts: [
            { name: 'queue', type: 'str', default: null, required: true, help: 'job queue', aliases: [] },
            { name: 'priority', type: 'int', default: 0, required: false, help: 'priority', aliases: [] },
          ],
        },
        { name: 'local_cwd', runOpts: [] },
      ],
      plain,
    );
    expect(text).toContain('aws_batch:\n    usage:\n        queue=QUEUE,[priority=PRIORITY]');
    expect(text).toContain('    required arguments:\n        queue=QUEUE (str)\n            job queue');
    expect(text).toContain(
      '    optional arguments:\n        priority=PRIORITY (int, 0)\n            priority',
    );
    expect(text).toContain('local_cwd:\n    (no run options)');
  });

  it('colours scheduler names only when asked', () => {
    const text = formatRunOpts([{ name: 'x', runOpts: [] }], painter(true));
    expect(text.startsWith('\u001b[32mx\u001b[0m:')).toBe(true);
  });
});

const ECHO: ComponentDescription = {
  name: 'utils.echo',
  description: 'Echoes a message to stdout. Useful to test a scheduler.',
  args: [
    {
      name: 'msg',
      flags: ['--msg'],
      type: 'str',
      default: 'hello world',
      required: false,
      help: 'message to echo',
    },
    { name: 'image', flags: ['--image'], type: 'str', default: null, required: true, help: 'image to use' },
    { name: 'j', flags: ['-j', '--j'], type: 'str', default: '1x2', required: false, help: 'nodes x procs' },
  ],
  varargs: { name: 'script_args', help: 'passed to the script' },
};

describe('builtins formatting', () => {
  it("lists components TorchX's way, with their first sentence", () => {
    expect(formatBuiltinList([ECHO, { ...ECHO, name: 'dist.ddp', description: 'DDP.' }])).toBe(
      'Found 2 builtin components:\n  1. utils.echo  Echoes a message to stdout.\n  2. dist.ddp    DDP.',
    );
  });

  it('shows one component with usage, required and optional arguments and varargs', () => {
    const text = formatBuiltin(ECHO);
    expect(text.split('\n')[0]).toBe(
      'usage: txs run utils.echo [--msg MSG] --image IMAGE [--j J] [--] [script_args ...]',
    );
    expect(text).toContain('required arguments:\n  --image (str)\n      image to use');
    expect(text).toContain('  --msg (str, default: hello world)\n      message to echo');
    expect(text).toContain('  -j, --j (str, default: 1x2)');
    expect(text).toContain('positional arguments:\n  script_args ...\n      passed to the script');
  });
});

describe('formatDryRun', () => {
  it("prints the application and the scheduler's request text", async () => {
    const text = await formatDryRun({
      scheduler: 'local_cwd',
      app: { name: 'echo', roles: [], metadata: {} },
      cfg: {},
      request: { replicas: [] },
      text: 'replica echo/0: echo hi',
    });
    expect(text).toBe(
      '=== APPLICATION ===\nname: echo\nroles: []\nmetadata: {}\n\n=== SCHEDULER REQUEST ===\nreplica echo/0: echo hi',
    );
  });

  it('falls back to the JSON request when there is no text', async () => {
    const text = await formatDryRun({
      scheduler: 's',
      app: { name: 'a', roles: [], metadata: {} },
      cfg: {},
      request: { a: 1 },
    });
    expect(text.endsWith('=== SCHEDULER REQUEST ===\n{\n  "a": 1\n}')).toBe(true);
  });
});

describe('time arguments', () => {
  const now = Date.parse('2026-01-15T12:00:00Z');

  it('reads durations ago, ISO-8601 and epoch milliseconds', () => {
    expect(parseTimeArg('10m', '--since', now)).toBe('2026-01-15T11:50:00.000Z');
    expect(parseTimeArg('2h', '--since', now)).toBe('2026-01-15T10:00:00.000Z');
    expect(parseTimeArg('1d', '--since', now)).toBe('2026-01-14T12:00:00.000Z');
    expect(parseTimeArg('2026-01-15T08:00:00+01:00', '--until', now)).toBe('2026-01-15T07:00:00.000Z');
    expect(parseTimeArg('1768478400000', '--since', now)).toBe('2026-01-15T12:00:00.000Z');
  });

  it('rejects anything else naming the flag', () => {
    expect(() => parseTimeArg('yesterday', '--since', now)).toThrow('--since yesterday is not a time');
  });

  it('formats elapsed times compactly', () => {
    expect(formatElapsed(400)).toBe('0.4s');
    expect(formatElapsed(12_345)).toBe('12.3s');
    expect(formatElapsed(245_000)).toBe('4m05s');
    expect(formatElapsed(7_380_000)).toBe('2h03m');
  });

  it('formats API times in local time', () => {
    expect(formatLocalTime(new Date(2026, 0, 2, 3, 4, 5).getTime())).toBe('2026-01-02 03:04:05');
    expect(formatLocalTime(undefined)).toBe('-');
  });
});
