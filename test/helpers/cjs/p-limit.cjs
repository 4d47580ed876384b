// Jest's module loader cannot `require()` an ES module, and slonik (CommonJS) requires the
// ESM-only p-limit. Node itself handles this; under jest this equivalent CommonJS limiter is
// mapped in its place (jest.config.js). Same contract: limit(fn, ...args) runs at most
// `concurrency` calls at once, in order.
'use strict';

function pLimit(concurrency) {
  const queue = [];
  let active = 0;
  const next = () => {
    if (active >= concurrency || queue.length === 0) return;
    active++;
    const { fn, args, resolve, reject } = queue.shift();
    Promise.resolve()
      .then(() => fn(...args))
      .then(resolve, reject)
      .finally(() => {
        active--;
        next();
      });
  };
  const limit = (fn, ...args) =>
    new Promise((resolve, reject) => {
      queue.push({ fn, args, resolve, reject });
      next();
    });
  Object.defineProperties(limit, {
    activeCount: { get: () => active },
    pendingCount: { get: () => queue.length },
    clearQueue: { value: () => { queue.length = 0; } },
  });
  return limit;
}

module.exports = pLimit;
module.exports.default = pLimit;
