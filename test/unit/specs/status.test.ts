import { describe, expect, it } from 'vitest';
import {
  APP_STATE_VALUE,
  AppStatus,
  AppStatusError,
  appStateFromValue,
  appStatusFromDescribe,
  formatAppState,
  formatErrorMessage,
  isStarted,
  isTerminal,
  makeDescribeAppResponse,
} from '../../../lib/specs/index.js';

describe('AppState', () => {
  it("keeps TorchX's numeric values", () => {
    expect(APP_STATE_VALUE).toEqual({
      UNSUBMITTED: 0,
      SUBMITTED: 1,
      PENDING: 2,
      RUNNING: 3,
      SUCCEEDED: 4,
      FAILED: 5,
      CANCELLED: 6,
      UNKNOWN: 7,
    });
    expect(appStateFromValue(3)).toBe('RUNNING');
    expect(formatAppState('FAILED')).toBe('FAILED (5)');
  });

  it('knows terminal and started states', () => {
    expect(['SUCCEEDED', 'FAILED', 'CANCELLED'].every((s) => isTerminal(s as never))).toBe(true);
    expect(isTerminal('RUNNING')).toBe(false);
    expect(isStarted('RUNNING')).toBe(true);
    expect(isStarted('PENDING')).toBe(false);
  });
});

describe('AppStatus', () => {
  it("formats TorchX's layout with replicas sorted and replica 0 starred", () => {
    const status = new AppStatus({
      state: 'RUNNING',
      numRestarts: 1,
      msg: 'ok',
      uiUrl: 'https://x',
      roles: [
        {
          role: 'trainer',
          replicas: [
            { id: 1, state: 'FAILED', role: 'trainer', hostname: 'h1', structuredErrorMsg: '<NONE>' },
            { id: 0, state: 'RUNNING', role: 'trainer', hostname: 'h0', structuredErrorMsg: '<NONE>' },
          ],
        },
      ],
    });
    expect(status.format()).toBe(
      'AppStatus:\n    State: RUNNING\n    Num Restarts: 1\n    Roles: \n *trainer[0]:RUNNING\n  trainer[1]:FAILED (no reply file)\n' +
        '    Msg: ok\n    Structured Error Msg: <NONE>\n    UI URL: https://x\n    ',
    );
  });

  it('filters roles and prints None for a missing UI URL', () => {
    const status = new AppStatus({
      state: 'PENDING',
      roles: [
        {
          role: 'a',
          replicas: [{ id: 0, state: 'PENDING', role: 'a', hostname: '', structuredErrorMsg: '<NONE>' }],
        },
        {
          role: 'b',
          replicas: [{ id: 0, state: 'PENDING', role: 'b', hostname: '', structuredErrorMsg: '<NONE>' }],
        },
      ],
    });
    const text = status.format(['b']);
    expect(text).toContain('*b[0]:PENDING');
    expect(text).not.toContain('a[0]');
    expect(text).toContain('UI URL: None');
  });

  it('renders a structured error message with exit code and wrapped text', () => {
    const error = JSON.stringify({
      message: { message: 'boom', errorCode: 7, extraInfo: { timestamp: 0 } },
    });
    const text = new AppStatus({
      state: 'FAILED',
      roles: [
        {
          role: 't',
          replicas: [{ id: 0, state: 'FAILED', role: 't', hostname: 'host-a', structuredErrorMsg: error }],
        },
      ],
    }).format();
    expect(text).toMatch(
      /\*t\[0\]:FAILED \(exitcode: 7\)\n {8}timestamp: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\n {8}hostname: host-a\n {4} {4}error_msg: boom/,
    );
  });

  it('returns a non-JSON structured error as it is', () => {
    const text = new AppStatus({
      state: 'FAILED',
      roles: [
        {
          role: 't',
          replicas: [{ id: 0, state: 'FAILED', role: 't', hostname: '', structuredErrorMsg: 'plain' }],
        },
      ],
    }).format();
    expect(text).toContain('Roles: plain\n');
  });

  it('raiseForStatus throws AppStatusError unless SUCCEEDED', () => {
    expect(() => new AppStatus({ state: 'FAILED' }).raiseForStatus()).toThrow(AppStatusError);
    expect(() => new AppStatus({ state: 'FAILED' }).raiseForStatus()).toThrow(
      /^job did not succeed: AppStatus:/,
    );
    expect(() => new AppStatus({ state: 'SUCCEEDED' }).raiseForStatus()).not.toThrow();
  });

  it('comes from a DescribeAppResponse with its defaults', () => {
    const desc = makeDescribeAppResponse({ appId: 'x', state: 'RUNNING' });
    expect(desc).toMatchObject({
      numRestarts: -1,
      msg: '<NONE>',
      structuredErrorMsg: '<NONE>',
      roles: [],
      rolesStatuses: [],
    });
    const status = appStatusFromDescribe(desc);
    expect(status.toJSON()).toEqual({
      state: 'RUNNING',
      numRestarts: -1,
      msg: '<NONE>',
      structuredErrorMsg: '<NONE>',
      roles: [],
    });
  });
});

describe('formatErrorMessage', () => {
  it('wraps at the first space after the width and indents continuation lines', () => {
    const msg = `${'a'.repeat(10)} ${'b'.repeat(10)} ${'c'.repeat(10)}`;
    expect(formatErrorMessage(msg, 'H: ', 10)).toBe(
      `H: ${'a'.repeat(10)}\n    ${'b'.repeat(10)}\n    ${'c'.repeat(10)}`,
    );
  });

  it('keeps only the message of an embedded exception', () => {
    expect(formatErrorMessage('CUDA error\nException raised from x', '> ')).toBe('> CUDA error');
  });
});
