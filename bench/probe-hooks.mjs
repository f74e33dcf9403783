// Module hooks for bench/probe.mjs's inventory mode: reports the URL of every module the process loads
// (through the port bench/probe.mjs registers them with), so the bench knows which bundle files a function's
// import and first call load. Not used in timed runs.
let port;

export function initialize(data) {
  port = data.port;
}

export async function load(url, context, nextLoad) {
  if (url.startsWith('file:')) port.postMessage(url);
  return nextLoad(url, context);
}
