import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';

/**
 * multipart/form-data for the one dashboard form that uploads a file (the checkout logo),
 * registered only in that route's scope. The text fields become the same URLSearchParams every
 * other form parses into, so the CSRF check and `withAction` work unchanged; the file is kept
 * beside the request, read at most `maxFileBytes` (the rest is counted, not kept: `truncated`).
 * Tight limits: one file, a few short fields, and a cap on the whole request.
 */
export interface Upload {
  bytes: Buffer;
  truncated: boolean;
}

const uploads = new WeakMap<FastifyRequest, Upload>();

/** The file of `field` the form sent; empty when it sent none. */
export const uploadOf = (request: FastifyRequest): Upload => uploads.get(request) ?? { bytes: Buffer.alloc(0), truncated: false };

function tooLarge(maxRequestBytes: number): Error {
  return Object.assign(new Error(`The upload is larger than ${Math.round(maxRequestBytes / 1024)} KB. Nothing was changed.`), { statusCode: 413 });
}

export function acceptUploads(scope: FastifyInstance, opts: { field: string; maxFileBytes: number; maxRequestBytes: number }): void {
  scope.addContentTypeParser('multipart/form-data', (request: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: unknown) => void) => {
    if (Number(request.headers['content-length'] ?? 0) > opts.maxRequestBytes) {
      payload.resume();
      return done(tooLarge(opts.maxRequestBytes));
    }
    let bb: BusboyInstance;
    try {
      bb = new Busboy({
        headers: request.headers as BusboyHeaders,
        limits: { fileSize: opts.maxFileBytes, files: 1, fields: 6, fieldSize: 2048, parts: 8, headerPairs: 20 },
      });
    } catch {
      payload.resume();
      return done(Object.assign(new Error('The form could not be read (a malformed upload). Nothing was changed.'), { statusCode: 400 }));
    }
    const fields = new URLSearchParams();
    let pendingFiles = 0;
    let finished = false;
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      if (!err && (!finished || pendingFiles > 0)) return;
      settled = true;
      if (err) {
        payload.unpipe(bb);
        payload.resume();
        return done(err);
      }
      done(null, fields);
    };
    let received = 0;
    payload.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > opts.maxRequestBytes) settle(tooLarge(opts.maxRequestBytes));
    });
    bb.on('field', (name, value) => fields.append(name, value));
    bb.on('file', (name, stream) => {
      if (name !== opts.field) return stream.resume();
      pendingFiles++;
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        uploads.set(request, { bytes: Buffer.concat(chunks), truncated: stream.truncated });
        pendingFiles--;
        settle(null);
      });
    });
    bb.on('finish', () => {
      finished = true;
      settle(null);
    });
    bb.on('error', () => settle(Object.assign(new Error('The form could not be read (a malformed upload). Nothing was changed.'), { statusCode: 400 })));
    payload.pipe(bb);
  });
}
