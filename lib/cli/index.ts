/**
 * The `txs` command-line client: a TorchX-style CLI over the torchx-serverless HTTP API, and the pieces
 * it is built from (client, SigV4 signer, `.txsconfig`, formatting), usable from other tools.
 *
 * @module
 */

export * from '../loopback/local-socket.js';
export * from './answer-errors.js';
export * from './api-transport.js';
export * from './api-types.js';
export * from './cfg.js';
export * from './client.js';
export * from './config.js';
export * from './endpoint.js';
export * from './errors.js';
export * from './format.js';
export * from './http-transport.js';
export * from './io.js';
export * from './log-target.js';
export * from './logs.js';
export * from './network-errors.js';
export { DEFAULT_SCHEDULER, EXIT_INTERNAL, main, normalizeRunArgv } from './program.js';
export * from './sigv4.js';
export * from './time.js';
export * from './wait.js';
