import { createSocket, type Socket } from 'node:dgram';
import { isIP, type AddressInfo } from 'node:net';
import { ipv6Groups } from '../../domain/webhooks/address-policy.js';

/**
 * A tiny authoritative DNS server over UDP (RFC 1035 wire format) for webhook SSRF tests: it
 * answers A and AAAA queries from a table the test changes at will (TTL 0, so nothing is
 * cached), and unknown names with NXDOMAIN. A name maps to one address or to several (IPv4
 * ones answer A queries, IPv6 ones AAAA queries). Point WEBHOOK_DNS_SERVERS at `server` to make
 * a hostname resolve to addresses of the test's choosing — and to change that answer between
 * endpoint creation and delivery (DNS rebinding).
 */
export class TestDnsServer {
  readonly records = new Map<string, string | readonly string[]>();
  private constructor(private socket: Socket) {}

  static async start(): Promise<TestDnsServer> {
    const socket = createSocket('udp4');
    const dns = new TestDnsServer(socket);
    socket.on('message', (msg, rinfo) => {
      const reply = dns.answer(msg);
      if (reply) socket.send(reply, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return dns;
  }

  get server(): string {
    return `127.0.0.1:${(this.socket.address() as AddressInfo).port}`;
  }

  private answer(msg: Buffer): Buffer | undefined {
    if (msg.length < 12) return undefined;
    let offset = 12;
    const labels: string[] = [];
    while (offset < msg.length && msg[offset] !== 0) {
      const len = msg[offset]!;
      labels.push(msg.subarray(offset + 1, offset + 1 + len).toString('ascii'));
      offset += len + 1;
    }
    const questionEnd = offset + 5; // zero label, QTYPE, QCLASS
    const qtype = msg.readUInt16BE(offset + 1);
    const name = labels.join('.').toLowerCase();
    const known = this.records.get(name);
    const family = qtype === 1 ? 4 : qtype === 28 ? 6 : 0;
    const addresses = known === undefined ? [] : [known].flat().filter((a) => isIP(a) === family);
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2); // same id
    const rd = msg[2]! & 0x01;
    header[2] = 0x84 | rd; // QR=1, AA=1, RD copied
    header[3] = known === undefined ? 0x03 : 0x00; // NXDOMAIN or NOERROR
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const question = msg.subarray(12, questionEnd);
    return Buffer.concat([header, question, ...addresses.map((a) => record(qtype, addressBytes(a)))]);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

function record(qtype: number, rdata: Buffer): Buffer {
  const rr = Buffer.alloc(12);
  rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
  rr.writeUInt16BE(qtype, 2);
  rr.writeUInt16BE(1, 4); // IN
  rr.writeUInt32BE(0, 6); // TTL 0
  rr.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([rr, rdata]);
}

function addressBytes(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number));
  const out = Buffer.alloc(16);
  ipv6Groups(address).forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}
