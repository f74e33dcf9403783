/**
 * fast-check arbitraries of what the HTTP API may answer: app statuses, apps, summaries and counts shaped as
 * the response schemas of `lib/specs/api.ts` say (the tests check each generated payload against them),
 * with the text a server or a job can put in them: control and escape sequences, bidi and zero-width
 * characters, non-ASCII, lone surrogates, very long text, unknown fields, and replica error documents in
 * every form the store writes (torchelastic's, the cut `{"truncated": true, …}` form, `<ELIDED>`, `<NONE>`)
 * or a scheduler could pass on (any JSON, any text).
 */
import fc from 'fast-check';
import { APP_STATES, type AppState } from '../../lib/specs/app-state.js';
import { MAX_REPLICAS } from '../../lib/specs/limits.js';
import { MAX_REPLICA_TEXT_BYTES, truncateErrorDocument } from '../../lib/store/bounds.js';

/** Strings a hostile server or job would send to a terminal or a page. */
export const HOSTILE_TEXT = [
  '\r\u001b[2Kfake: job SUCCEEDED',
  '\u001b[32mSUCCEEDED\u001b[0m',
  '\u001b]0;title\u0007\u001b]52;c;cGF5bG9hZA==\u0007',
  '\u001b[1A\u001b[2J\u001b[H',
  '\u009b2J\u0085\u008d',
  'evil\u202Etxt.exe\u2066\u2069\u200B\uFEFF',
  'a\u2028b\u2029c\u0000\u0008\u007f',
  'entraînement 训练 🙂 שלום \u200F👩\u200D💻',
  '\uD800 lone surrogate \uDC00',
  '{"message": {"message": 1}}',
  '<NONE>',
  '',
];

const alphabet = fc.constantFrom(
  '\u001b',
  '\r',
  '\n',
  '\t',
  '[',
  '2',
  'K',
  'm',
  ']',
  '\u0007',
  '\u009b',
  '\u202E',
  'a',
  ' ',
  '"',
  '\\',
  '训',
  '🙂',
);

/** Any text: arbitrary code points, escape-heavy text, or a known hostile string. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: alphabet, maxLength: 60 }),
  fc.constantFrom(...HOSTILE_TEXT),
);

/** Any number JSON can carry. */
const anyNumber = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));

/** An app state as the schema has it. */
export const appState: fc.Arbitrary<AppState> = fc.constantFrom(...APP_STATES);

/** An API time: ISO-8601 text, epoch ms, or anything a string may be. */
export const apiTime: fc.Arbitrary<string | number> = fc.oneof(
  fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString()),
  fc.integer({ min: -8.64e15, max: 8.64e15 }),
  anyNumber,
  anyText,
);

/** Fields no schema names (a newer server may add some). */
const unknownFields = fc.dictionary(
  fc.string({ maxLength: 12 }).filter((k) => !['__proto__', 'constructor'].includes(k)),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);

function withUnknownFields<T extends object>(arb: fc.Arbitrary<T>): fc.Arbitrary<T> {
  // Known fields win: unknown ones are added, never replace a field the schema names.
  return fc.tuple(arb, unknownFields).map(([known, extra]) => ({ ...extra, ...known }));
}

/** A torchelastic error file (`{"message": {"message", "errorCode", "extraInfo": {"timestamp"}}}`). */
export const torchelasticDocument: fc.Arbitrary<string> = fc
  .record({
    message: fc.oneof(anyText, fc.string({ minLength: 2_000, maxLength: 6_000 })),
    errorCode: fc.oneof(fc.integer(), fc.constant(null), anyText),
    timestamp: fc.oneof(fc.integer({ min: 0, max: 4e9 }), anyNumber, anyText, fc.constant(null)),
  })
  .map(({ message, errorCode, timestamp }) =>
    JSON.stringify({ message: { message, errorCode, extraInfo: { timestamp, py_callstack: message } } }),
  );

/** A replica's `structuredErrorMsg` in every form the API may return. */
export const structuredErrorMsg: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('<NONE>', '<ELIDED>'),
  torchelasticDocument,
  // What the store keeps of a document over its bound (lib/store/bounds.ts), as real as it gets.
  torchelasticDocument.map((doc) => truncateErrorDocument(doc, MAX_REPLICA_TEXT_BYTES)),
  fc
    .string({ minLength: 2_100, maxLength: 4_000 })
    .map((text) =>
      truncateErrorDocument(JSON.stringify({ message: { message: text } }), MAX_REPLICA_TEXT_BYTES),
    ),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  anyText,
);

/** One replica of `status.roles[].replicas`. */
export const replicaStatus = withUnknownFields(
  fc.record(
    {
      id: fc.oneof(fc.nat({ max: 10_000 }), anyNumber),
      state: appState,
      role: anyText,
      hostname: anyText,
      structuredErrorMsg,
      exitCode: anyNumber,
      reason: anyText,
    },
    { requiredKeys: ['id', 'state', 'role', 'hostname', 'structuredErrorMsg'] },
  ),
);

/** `stateReason` of a status or summary (stateReasonSchema): any text, any time, any source. */
export const stateReason = withUnknownFields(
  fc.record(
    { text: anyText, code: anyText, since: anyText, source: anyText },
    { requiredKeys: ['text', 'since', 'source'] },
  ),
);

/** One of `attemptOutcomes` (attemptOutcomeSchema). */
export const attemptOutcome = withUnknownFields(
  fc.record(
    {
      attempt: anyNumber,
      exitCode: anyNumber,
      reason: anyText,
      startedAt: anyText,
      stoppedAt: anyText,
      infrastructure: fc.boolean(),
    },
    { requiredKeys: ['attempt'] },
  ),
);

/** `status` of `GET /v1/apps/{scheduler}/{appId}` (appStatusSchema). */
export const appStatus = withUnknownFields(
  fc.record(
    {
      state: appState,
      numRestarts: anyNumber,
      msg: anyText,
      structuredErrorMsg,
      uiUrl: anyText,
      roles: fc.array(
        withUnknownFields(fc.record({ role: anyText, replicas: fc.array(replicaStatus, { maxLength: 4 }) })),
        { maxLength: 3 },
      ),
      stateReason,
      attemptOutcomes: fc.array(attemptOutcome, { maxLength: 3 }),
    },
    { requiredKeys: ['state', 'numRestarts', 'msg', 'structuredErrorMsg', 'roles'] },
  ),
);

/** One entry of `history` (historyEntrySchema). */
export const historyEntry = withUnknownFields(
  fc.record(
    { from: appState, to: appState, time: apiTime, source: anyText, reason: anyText },
    { requiredKeys: ['from', 'to', 'time'] },
  ),
);

const handleFields = { handle: anyText, scheduler: anyText, session: anyText, appId: anyText };

/** Any JSON object (what `txs describe` must print whatever a server sends). */
export const anyJsonObject: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(
  fc.string({ unit: alphabet, maxLength: 8 }),
  fc.jsonValue({ maxDepth: 3 }),
  { maxKeys: 4 },
);

/** The AppDef of an answer, shaped as appDefSchema (numbers in its ranges) with any text in it. */
export const appDefLike: fc.Arbitrary<Record<string, unknown>> = fc.record({
  name: anyText,
  roles: fc.array(
    withUnknownFields(
      fc.record({
        name: anyText,
        image: anyText,
        entrypoint: anyText,
        args: fc.array(anyText, { maxLength: 3 }),
        env: fc.dictionary(anyText, anyText, { maxKeys: 2 }),
        numReplicas: fc.integer({ min: 1, max: MAX_REPLICAS }),
        metadata: fc.dictionary(anyText, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
      }),
    ),
    { minLength: 1, maxLength: 2 },
  ),
  metadata: fc.dictionary(anyText, anyText, { maxKeys: 2 }),
});

/** An answer of `GET /v1/apps/{scheduler}/{appId}` (appResponseSchema; `app` as {@link appDefLike}). */
export const appResponse = withUnknownFields(
  fc.record(
    {
      ...handleFields,
      name: anyText,
      owner: anyText,
      createdAt: apiTime,
      updatedAt: apiTime,
      status: appStatus,
      app: appDefLike,
      history: fc.array(historyEntry, { maxLength: 5 }),
      historyElided: fc.nat(),
      cancelRequestedAt: apiTime,
      revision: fc.string({ unit: alphabet, minLength: 22, maxLength: 22 }),
    },
    { requiredKeys: ['handle', 'scheduler', 'session', 'appId', 'name', 'createdAt', 'status', 'app'] },
  ),
);

/** One app of `GET /v1/apps` (appSummarySchema). */
export const appSummary = withUnknownFields(
  fc.record(
    {
      ...handleFields,
      name: anyText,
      owner: anyText,
      state: appState,
      reason: anyText,
      stateReason,
      createdAt: apiTime,
      updatedAt: apiTime,
    },
    { requiredKeys: ['handle', 'scheduler', 'session', 'appId', 'name', 'state', 'createdAt'] },
  ),
);

/** `GET /v1/apps/counts` (appCountsResponseSchema). */
export const appCounts = fc.record({
  counts: fc.dictionary(appState, fc.nat(), { maxKeys: 8 }),
  counted: fc.nat(),
  complete: fc.boolean(),
});

/** `POST /v1/dryrun` (dryRunResponseSchema; `app` as {@link appDefLike}). */
export const dryRunResponse = withUnknownFields(
  fc.record(
    {
      scheduler: anyText,
      app: appDefLike,
      cfg: fc.dictionary(anyText, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
      request: fc.jsonValue({ maxDepth: 3 }),
      text: anyText,
      warnings: fc.array(anyText, { maxLength: 3 }),
    },
    { requiredKeys: ['scheduler', 'app', 'cfg', 'request'] },
  ),
);

/** One scheduler of `GET /v1/schedulers` (schedulersResponseSchema). */
export const schedulerInfo = withUnknownFields(
  fc.record({
    name: anyText,
    runOpts: fc.array(
      withUnknownFields(
        fc.record({
          name: anyText,
          type: fc.constantFrom(
            'str',
            'int',
            'float',
            'bool',
            'list[str]',
            'dict[str,str]',
            'list[dict[str,str]]',
          ),
          default: fc.jsonValue({ maxDepth: 2 }),
          required: fc.boolean(),
          help: anyText,
          aliases: fc.array(anyText, { maxLength: 2 }),
        }),
      ),
      { maxLength: 4 },
    ),
  }),
);

/** One builtin of `GET /v1/components` (componentDescriptionSchema). */
export const componentDescription = withUnknownFields(
  fc.record(
    {
      name: anyText,
      description: anyText,
      args: fc.array(
        withUnknownFields(
          fc.record({
            name: anyText,
            flags: fc.array(anyText, { maxLength: 2 }),
            type: anyText,
            default: fc.jsonValue({ maxDepth: 2 }),
            required: fc.boolean(),
            help: anyText,
          }),
        ),
        { maxLength: 4 },
      ),
      varargs: fc.record({ name: anyText, help: anyText }),
    },
    { requiredKeys: ['name', 'description', 'args'] },
  ),
);
