// Preloaded with `node --import` (test/unit/sweep-signer.test.ts, test/integration/treasury-sweeps.test.ts):
// any socket, DNS lookup, HTTP request or fetch ends the process with 97 and says so on stderr,
// so a run that exits 0 opened none.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';

const no = (what) => () => {
  process.stderr.write(`NETWORK ${what}\n`);
  process.exit(97);
};
net.Socket.prototype.connect = no('socket');
net.connect = no('net.connect');
net.createConnection = no('net.createConnection');
tls.connect = no('tls');
dns.lookup = no('dns');
dns.resolve = no('dns');
dns.promises.lookup = no('dns');
http.request = no('http');
http.get = no('http');
https.request = no('https');
https.get = no('https');
globalThis.fetch = no('fetch');
