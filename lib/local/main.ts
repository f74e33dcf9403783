/**
 * `npm start`: the local API server. Until it lands, say what is coming.
 */
console.log('torchx-serverless: the local API server (npm start) is being built; run `npm test` meanwhile.');
