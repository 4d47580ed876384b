import { request as httpRequest } from 'node:http';

export interface HttpResponse {
  status: number;
  body: any;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  payload?: unknown;
  /** Source address of the connection, e.g. 127.0.0.2, to act as another client IP. */
  localAddress?: string;
}

/** A plain HTTP call to the real listening server (no in-process shortcuts). */
export function httpCall(baseUrl: string, req: HttpRequest): Promise<HttpResponse> {
  const url = new URL(req.url, baseUrl);
  const body = req.payload === undefined ? undefined : typeof req.payload === 'string' ? req.payload : JSON.stringify(req.payload);
  const headers: Record<string, string> = { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...req.headers };
  return new Promise((resolve, reject) => {
    const r = httpRequest(url, { method: req.method, headers, localAddress: req.localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text, headers: res.headers });
      });
    });
    r.on('error', reject);
    if (body !== undefined) r.write(body);
    r.end();
  });
}
